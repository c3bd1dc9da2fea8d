/**
 * The typed surface of the payments REST API, in the style of stripe-node:
 * verbs per resource (`api.transactions.retrieve(id)`), each the last
 * argument `CallOptions`, each read off its entry in endpoints.ts, so an
 * endpoint is declared in one place. Parameter and page types are in
 * params.ts, models in models.ts; both are re-exported here.
 *
 * Everything the gateway knows about the REST API goes through this
 * surface; its implementation in this folder (endpoints.ts, call.ts,
 * decode.ts, errors.ts, assembled by client.ts) is the only place that
 * builds URLs, unwraps envelopes and decodes errors.
 *
 * Failures are thrown as `UpstreamError` subclasses (errors.ts). A read of an
 * unknown id throws `UpstreamNotFoundError`; loaders turn that into `null`.
 */
import type { AnswerKind, Endpoint, ENDPOINTS } from './endpoints.js';
import type { CallOptions, ListItem, Page } from './params.js';

export type * from './params.js';

type Answer<K extends AnswerKind, T> = { one: T; byId: T; many: T[]; list: ListItem<T>[]; page: Page<T> }[K];

/** One endpoint's verb: its builder's arguments, then the call options. */
export type Verb<E> = E extends Endpoint<infer A, infer T, infer K> ? (...args: [...A, opts?: CallOptions]) => Promise<Answer<K, T>> : never;

export type PaymentsApi = { [R in keyof typeof ENDPOINTS]: { [V in keyof (typeof ENDPOINTS)[R]]: Verb<(typeof ENDPOINTS)[R][V]> } };
