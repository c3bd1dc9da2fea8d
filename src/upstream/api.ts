/**
 * The typed surface of the REST API (`api.transactions.retrieve(id)`), read off endpoints.ts; the
 * only way the gateway reaches the REST API. Failures throw `UpstreamError` subclasses (errors.ts).
 */
import type { AnswerKind, Endpoint, ENDPOINTS } from './endpoints.js';
import type { CallOptions, ListItem, Page } from './params.js';

export type * from './params.js';

type Answer<K extends AnswerKind, T> = { one: T; byId: T; many: T[]; list: ListItem<T>[]; page: Page<T> }[K];

export type Verb<E> = E extends Endpoint<infer A, infer T, infer K> ? (...args: [...A, opts?: CallOptions]) => Promise<Answer<K, T>> : never;

export type PaymentsApi = { [R in keyof typeof ENDPOINTS]: { [V in keyof (typeof ENDPOINTS)[R]]: Verb<(typeof ENDPOINTS)[R][V]> } };
