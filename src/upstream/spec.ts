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
import { ALL_ENDPOINTS } from './endpoints.js';

/** The spec's sixteen endpoints, as route labels (`METHOD /pattern`): those endpoints.ts marks so. */
export const SPEC_ROUTES: ReadonlySet<string> = new Set(ALL_ENDPOINTS.filter((e) => e.spec).map((e) => e.route));

/**
 * Whether an error status says the upstream lacks the route rather than the
 * object: 405 always (a method refused on a path is never a missing object);
 * 404 when neither the path nor the body names an object, since then there
 * is no object that could be unknown. The token route (`:id` in its path) is
 * ambiguous on a 404 and stays "not found".
 */
export function routeIsMissing(status: number, pattern: string, bodyIds: Record<string, unknown> | undefined): boolean {
  if (status === 405) return true;
  if (status !== 404) return false;
  const namesObjectInPath = pattern.includes(':');
  const namesObjectInBody = Object.values(bodyIds ?? {}).some((id) => id !== undefined);
  return !namesObjectInPath && !namesObjectInBody;
}
