/**
 * `npm run schema:release`: the deliberate step that makes the working
 * tree's SDL the released one. It runs the check first and refuses when it
 * fails; then writes supergraph/released.graphql and empties
 * supergraph/accepted-changes.json, printing the accepted breaks for the
 * CHANGELOG's release section. Commit both files with the release.
 */
import { writeFileSync } from 'node:fs';
import { runCheck } from './check.js';
import { knownDocuments } from './documents.js';
import { ACCEPTED_CHANGES, acceptedChanges, RELEASED_SDL, releasedSdl, workingTreeSdl } from './inputs.js';
import { reportLines } from './report.js';

const HEADER = [
  '# The payments subgraph SDL of the last release, the baseline of `npm run schema:check`.',
  '# Written only by the release step, `npm run schema:release` (docs/federation.md, Schema changes).',
  '',
].join('\n');

const EMPTY = {
  $comment:
    'Breaking schema changes accepted since the last release (supergraph/released.graphql), each by the coordinate npm run schema:check names and a reason. npm run schema:release empties it. docs/federation.md, Schema changes.',
  accepted: [],
};

const current = await workingTreeSdl();
const accepted = acceptedChanges();
const result = await runCheck({ released: releasedSdl(), current, accepted, documents: knownDocuments() });
if (!result.passed) {
  for (const line of reportLines(result)) console.log(line);
  console.error('not released: the schema check fails (above)');
  process.exit(1);
}
writeFileSync(RELEASED_SDL, `${HEADER}${current}`);
writeFileSync(ACCEPTED_CHANGES, `${JSON.stringify(EMPTY, null, 2)}\n`);
console.log(`released: supergraph/released.graphql written (${result.changes.length} change(s) since the last release)`);
for (const { change, reason } of result.decision.accepted) console.log(`  breaking, for the CHANGELOG: ${change.coordinate}: ${reason}`);
