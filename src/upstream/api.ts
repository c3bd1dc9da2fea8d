/**
 * The typed surface of the REST API (`api.transactions.retrieve(id)`), read off endpoints.ts; the
 * only way the gateway reaches the REST API. Failures throw `UpstreamError` subclasses (errors.ts).
 */
import { ENDPOINTS, type AnswerKind, type Endpoint } from './endpoints.js';
import type { CallOptions, ListItem, Page } from './params.js';

export type * from './params.js';

type Answer<K extends AnswerKind, T> = { one: T; byId: T; many: T[]; list: ListItem<T>[]; page: Page<T> }[K];

export type Verb<E> = E extends Endpoint<infer A, infer T, infer K> ? (...args: [...A, opts?: CallOptions]) => Promise<Answer<K, T>> : never;

export type PaymentsApi = { [R in keyof typeof ENDPOINTS]: { [V in keyof (typeof ENDPOINTS)[R]]: Verb<(typeof ENDPOINTS)[R][V]> } };

/** Each resource's verbs, by name: what a wrapper of the whole surface (access/upstream-budget.ts) goes over. */
export const API_VERBS = Object.freeze(
  Object.fromEntries(Object.entries(ENDPOINTS).map(([resource, verbs]) => [resource, Object.freeze(Object.keys(verbs))])),
) as { readonly [R in keyof PaymentsApi]: readonly (keyof PaymentsApi[R] & string)[] };
