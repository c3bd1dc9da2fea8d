/**
 * Repeats, after the run's summary, which suites were skipped for a missing
 * program (see tools.ts), so a green run on a bare machine says what it did
 * not check.
 */
import { inCi, toolAvailable, type Tool } from './tools.js';

const SUITES: Record<Tool, string> = {
  'redis-server': 'the tests over a real Redis (scale-out, shared idempotency, entity cache, reconciliation leases)',
  chromium: 'the browser tests (bundled explorer, emulator console, example checkout)',
  'hive-gateway': 'the tests through Hive Gateway (test/routers: demand control agreeing with the gateway\'s prices)',
  curl: "the README's curl commands, run as pasted",
};

export default function setup(): () => void {
  return () => {
    if (inCi()) return;
    const missing = (Object.keys(SUITES) as Tool[]).filter((tool) => !toolAvailable(tool));
    if (missing.length === 0) return;
    const lines = missing.map((tool) => `  - no ${tool}: skipped ${SUITES[tool]}`);
    console.warn(['', '*** Some suites were SKIPPED on this machine (CI runs them all):', ...lines, '*** docs/development.md, "Tests", says how to install what they need.', ''].join('\n'));
  };
}
