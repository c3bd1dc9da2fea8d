/**
 * Names the slowest test files after each run (tests and hooks, then import),
 * so a suite that grew slow is seen where it is, not guessed at.
 */
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 8;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length < 2) return;
    const timed = modules
      .map((m) => ({ file: m.relativeModuleId, run: m.diagnostic().duration, load: m.diagnostic().collectDuration }))
      .sort((a, b) => b.run + b.load - (a.run + a.load))
      .slice(0, SHOWN);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const lines = timed.map((t) => `  ${seconds(t.run).padStart(7)} run ${seconds(t.load).padStart(7)} load  ${t.file}`);
    console.log(['', `Slowest ${timed.length} test files:`, ...lines].join('\n'));
  }
}
