/**
 * Which calls the spec defines (docs/payments-api-spec.md, Endpoints: the
 * sixteen routes below), and what a 404 or 405 means on the others.
 *
 * The gateway also calls routes the spec does not show (lists, the search of
 * transactions, the create and token steps; docs/upstream.md, "Calls beyond
 * the spec"). An upstream that follows the spec alone may lack them, and
 * answers 404 or 405. A 404 on a path that names an object means that object
 * is unknown, which a read turns into `null`; on a path that names nothing (a
 * list, a search) it can only mean the route is missing, and reading it as
 * "not found" would serve an empty or null answer as if it were true.
 */

/** What of a call (http.ts, `Call`) decides its meaning; declared here so http.ts can import this file. */
interface CallShape {
  method: string;
  pattern: string;
  bodyIds?: Record<string, unknown>;
}

/** The spec's sixteen endpoints, as route labels (`METHOD /pattern`). */
export const SPEC_ROUTES: ReadonlySet<string> = new Set([
  'PUT /v1/payouts/start',
  'PUT /v1/transactions/:id',
  'PUT /v1/payouts/:id',
  'POST /v1/customers',
  'POST /v1/payouts',
  'POST /v1/transactions/:mode',
  'GET /v1/logs/:id',
  'GET /v1/transactions/:id',
  'GET /v1/payouts/:id',
  'GET /v1/payouts/search',
  'GET /v1/customers/:id',
  'GET /v1/customers/search',
  'GET /v1/currencies/:id',
  'GET /v1/webhooks/:id',
  'GET /v1/webhooks',
  'GET /v1/events/:id',
]);

export function isSpecRoute(call: CallShape): boolean {
  return SPEC_ROUTES.has(`${call.method} ${call.pattern}`);
}

/**
 * Whether an error status says the upstream lacks the route rather than the
 * object: 405 always (a method refused on a path is never a missing object);
 * 404 when neither the path nor the body names an object, since then there
 * is no object that could be unknown. The token route (`:id` in its path) is
 * ambiguous on a 404 and stays "not found".
 */
export function routeIsMissing(status: number, call: CallShape): boolean {
  if (status === 405) return true;
  if (status !== 404) return false;
  const namesObjectInPath = call.pattern.includes(':');
  const namesObjectInBody = Object.values(call.bodyIds ?? {}).some((id) => id !== undefined);
  return !namesObjectInPath && !namesObjectInBody;
}
