/**
 * Variables that look like a setting but are not one (`WEBHOOK_SECRET` for `WEBHOOK_SECRETS`): named at
 * start with "did you mean". A warning, not a refusal: the environment is shared with other tools, whose
 * variables a start-up should not depend on (docs/configuration.md).
 */

/**
 * Edits allowed for a name of this length: one for short names, where two edits turn HOME into HOST; two
 * otherwise, since three would take Kubernetes' PAYMENTS_API_PORT (set for a service of that name) for
 * PAYMENTS_API_URL. A unit left off the end (`SHUTDOWN_GRACE`) is caught apart.
 */
function allowedEdits(length: number): number {
  return length <= 5 ? 1 : 2;
}

/** `SHUTDOWN_GRACE` for `SHUTDOWN_GRACE_MS`: the setting's name but its last word. */
const unitLeftOff = (name: string, candidate: string): boolean =>
  name.length >= 8 && candidate.startsWith(`${name}_`) && !candidate.slice(name.length + 1).includes('_');

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours
 * (`PAYMENTS_EVN`), each one edit. Stops early past `limit`.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

export interface Lookalike {
  /** The variable as set. */
  name: string;
  /** The settings it is nearest to (more than one on a tie). */
  suggestions: string[];
}

/** Each variable of `env` that is not in `known` but within a few edits of a name in it (case aside). */
export function lookalikes(env: Record<string, string | undefined>, known: Iterable<string>): Lookalike[] {
  const names = new Set(known);
  const found: Lookalike[] = [];
  for (const name of Object.keys(env)) {
    if (names.has(name) || env[name] === undefined) continue;
    const upper = name.toUpperCase();
    let best = Number.POSITIVE_INFINITY;
    let suggestions: string[] = [];
    for (const candidate of names) {
      const limit = allowedEdits(candidate.length);
      const d = unitLeftOff(upper, candidate) ? limit : editDistance(upper, candidate, Math.min(limit, best));
      if (d > limit || d > best) continue;
      if (d < best) suggestions = [];
      best = d;
      suggestions.push(candidate);
    }
    if (suggestions.length > 0) found.push({ name, suggestions });
  }
  return found;
}

/** "WEBHOOK_SECRET is not a setting: did you mean WEBHOOK_SECRETS?" */
export function lookalikeMessage({ name, suggestions }: Lookalike): string {
  const options = suggestions.length === 1 ? suggestions[0]! : `${suggestions.slice(0, -1).join(', ')} or ${suggestions.at(-1)!}`;
  return `${name} is not a setting: did you mean ${options}? (it is ignored)`;
}
