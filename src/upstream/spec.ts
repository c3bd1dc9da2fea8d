/**
 * Which calls the spec defines, and what a 404 or 405 means on the others (docs/upstream.md,
 * "Calls beyond the spec"): reading a missing route as "not found" would serve an empty answer as true.
 */
import { ALL_ENDPOINTS } from './endpoints.js';

/** The spec's sixteen endpoints, as route labels (`METHOD /pattern`): those endpoints.ts marks so. */
export const SPEC_ROUTES: ReadonlySet<string> = new Set(ALL_ENDPOINTS.filter((e) => e.spec).map((e) => e.route));

/** 404 on a path naming no object cannot be an unknown object; the token route (`:id` in its path) stays "not found". */
export function routeIsMissing(status: number, pattern: string, bodyIds: Record<string, unknown> | undefined): boolean {
  if (status === 405) return true;
  if (status !== 404) return false;
  const namesObjectInPath = pattern.includes(':');
  const namesObjectInBody = Object.values(bodyIds ?? {}).some((id) => id !== undefined);
  return !namesObjectInPath && !namesObjectInBody;
}
