/**
 * Names, after the run's summary, every suite that was skipped for a missing
 * program (see tools.ts), so a green run on a bare machine says what it did
 * not check. The suites append to a file this setup creates for the run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIP_LOG_ENV, type SkippedSuite } from './tools.js';

export default function setup(): () => void {
  // Each project inherits this setup; the run's first call speaks for all of them.
  const run = globalThis as { skipSummaryTaken?: boolean };
  if (run.skipSummaryTaken) return () => {};
  run.skipSummaryTaken = true;
  // CI names the file itself, to re-run what was skipped once it has installed the programs.
  const given = process.env[SKIP_LOG_ENV];
  const dir = given ? undefined : mkdtempSync(join(tmpdir(), 'gateway-test-skips-'));
  const log = given ?? join(dir!, 'skipped.jsonl');
  // Test workers start after the global setup and inherit this.
  process.env[SKIP_LOG_ENV] = log;
  return () => {
    let skipped: SkippedSuite[] = [];
    try {
      skipped = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as SkippedSuite);
    } catch {
      // No file: nothing was skipped.
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (skipped.length === 0) return;
    const lines = [...new Map(skipped.map((s) => [`${s.file}\0${s.suite}`, s])).values()]
      .sort((a, b) => a.file.localeCompare(b.file))
      .map((s) => `  - ${s.file}: "${s.suite}" (no ${s.tool})`);
    console.warn(
      [
        '',
        `*** ${lines.length} suite(s) were SKIPPED on this machine for a missing program (CI runs them all):`,
        ...lines,
        '*** docs/development.md, "Tests", says how to install what they need.',
        '',
      ].join('\n'),
    );
  };
}
