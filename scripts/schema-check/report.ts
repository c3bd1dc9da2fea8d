/** The check's result as the lines `npm run schema:check` prints: failures first, each named by coordinate or document. */
import type { CheckResult } from './check.js';
import type { Level } from './changes.js';

const ORDER: Level[] = ['breaking', 'dangerous', 'safe'];

export function reportLines(result: CheckResult, options: { verbose?: boolean } = {}): string[] {
  const lines: string[] = [];
  const { changes, decision, composition, operations } = result;

  lines.push(`== 1. changes against the released SDL: ${ORDER.map((level) => `${changes.filter((c) => c.level === level).length} ${level}`).join(', ')}`);
  for (const change of decision.unaccepted) lines.push(`  BREAKING (not accepted) ${change.coordinate}: ${change.message}`);
  for (const { change, reason } of decision.accepted) lines.push(`  breaking, accepted ${change.coordinate}: ${change.message} (accepted: ${reason})`);
  for (const entry of decision.stale) lines.push(`  STALE acceptance ${entry.coordinate}: no breaking change has this coordinate now; remove the entry`);
  for (const change of changes.filter((c) => c.level === 'dangerous')) lines.push(`  dangerous ${change.coordinate}: ${change.message}`);
  for (const change of changes.filter((c) => c.level === 'safe')) if (options.verbose) lines.push(`  safe ${change.coordinate}: ${change.message}`);

  const errors = composition.filter((f) => f.kind === 'error' || f.kind === 'baseline error');
  lines.push(`== 2. composition (@apollo/composition, @theguild/federation-composition): ${errors.length === 0 ? 'composes' : `${errors.length} error(s)`}`);
  for (const finding of composition) {
    const label = finding.kind === 'error' ? 'ERROR' : finding.kind === 'baseline error' ? 'ERROR (the released SDL does not compose with the stand-ins)' : finding.kind;
    lines.push(`  ${label} [${finding.composer}] ${finding.message}`);
  }

  lines.push(`== 3. known operations: ${operations.validated} document(s) validated, ${operations.sdlBlocks.length} SDL block(s) skipped, ${operations.findings.length} problem(s)`);
  for (const finding of operations.findings) lines.push(`  ${finding.kind.toUpperCase()} ${finding.document}: ${finding.message}`);
  if (options.verbose) for (const block of operations.sdlBlocks) lines.push(`  sdl, not validated: ${block}`);

  if (result.passed) {
    lines.push('== schema check passed');
    return lines;
  }
  const counts = [
    [decision.unaccepted.length, 'breaking change(s) not accepted'],
    [decision.stale.length, 'stale acceptance(s)'],
    [errors.length, 'composition error(s)'],
    [operations.findings.length, 'operation problem(s)'],
  ] as const;
  lines.push(`== schema check FAILED: ${counts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`).join(', ')}`);
  if (decision.unaccepted.length > 0) {
    lines.push('   A break is a decision: accept each by its coordinate, with a reason, in supergraph/accepted-changes.json (docs/federation.md, Schema changes).');
  }
  return lines;
}
