/**
 * Step 4's decision record: supergraph/accepted-changes.json lists each
 * breaking change accepted since the release, by coordinate, with a reason.
 * A breaking change not listed fails the check; so does an entry with no
 * reason, and an entry that matches no change any more (the file stays true).
 */
import { z } from 'zod';
import type { SchemaChange } from './changes.js';

const Accepted = z.object({
  accepted: z.array(
    z
      .object({
        coordinate: z.string().min(1),
        reason: z.string().trim().min(10, 'say why the break is accepted, in a sentence'),
      })
      .strict(),
  ),
});

export type AcceptedChanges = z.infer<typeof Accepted>['accepted'];

/** Reads the file's text; a malformed file is an error that names the file and the entry. */
export function parseAccepted(text: string, file: string): AcceptedChanges {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = Accepted.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`);
    throw new Error(`${file} is malformed: ${issues.join('; ')}`);
  }
  return parsed.data.accepted;
}

export interface Decision {
  /** Breaking changes no entry accepts: these fail. */
  unaccepted: SchemaChange[];
  /** Breaking changes an entry accepts, with its reason. */
  accepted: { change: SchemaChange; reason: string }[];
  /** Entries whose coordinate no breaking change has. */
  stale: AcceptedChanges;
}

export function decide(changes: readonly SchemaChange[], entries: AcceptedChanges): Decision {
  const reasons = new Map(entries.map((e) => [e.coordinate, e.reason]));
  const breaking = changes.filter((c) => c.level === 'breaking');
  const used = new Set<string>();
  const decision: Decision = { unaccepted: [], accepted: [], stale: [] };
  for (const change of breaking) {
    const reason = reasons.get(change.coordinate);
    if (reason === undefined) decision.unaccepted.push(change);
    else {
      decision.accepted.push({ change, reason });
      used.add(change.coordinate);
    }
  }
  decision.stale = entries.filter((e) => !used.has(e.coordinate));
  return decision;
}
