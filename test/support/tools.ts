/**
 * Suites that need a program outside the main npm install: `redis-server` (scale-out and
 * shared idempotency), Chromium (browser tests), Hive Gateway (test/routers) and curl
 * (the README's commands). On a developer's bare
 * machine they are skipped, loudly, so `npm ci && npm test` is green there;
 * under CI (`CI=true`) a missing program fails the suite instead, because
 * `.ci/run` installs both and a skip there would hide a lost check.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { relative } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { describe, it, TestRunner } from 'vitest';

export { freePort } from './ports.js';

export type Tool = 'redis-server' | 'redis-cli' | 'chromium' | 'hive-gateway' | 'curl';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const INSTALL: Record<Tool, string> = {
  'redis-server': 'apt-get install -y redis-server (or brew install redis)',
  'redis-cli': 'apt-get install -y redis-tools (redis-server depends on it; or brew install redis)',
  chromium: `apt-get install -y chromium, or set CHROMIUM_PATH to a Chromium binary (looked for ${CHROMIUM_PATH})`,
  'hive-gateway': 'npm ci --prefix test/routers (Hive Gateway, kept out of the main install)',
  curl: 'apt-get install -y curl',
};

/** Hive Gateway's runtime, in the test/routers workspace. */
export const HIVE_GATEWAY_PATH = new URL('../routers/node_modules/@graphql-hive/gateway-runtime/package.json', import.meta.url);

export function toolAvailable(tool: Tool): boolean {
  if (tool === 'chromium') return existsSync(CHROMIUM_PATH);
  if (tool === 'hive-gateway') return existsSync(HIVE_GATEWAY_PATH);
  return !spawnSync(tool, ['--version']).error;
}

export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

function skipNotice(tool: Tool, suite: string): string {
  return `SKIPPED "${suite}": ${tool} is not installed. Install it to run these tests: ${INSTALL[tool]}.`;
}

/**
 * `describe` for a suite that needs `tool`: the suite itself when the tool is
 * there; a failing test naming the tool under CI; otherwise a skipped suite
 * and a notice on stderr (repeated in the run's summary by the global setup).
 */
export function describeWith(tool: Tool, name: string, body: () => void): void {
  if (toolAvailable(tool)) {
    describe(name, body);
    return;
  }
  if (inCi()) {
    describe(name, () => {
      it(`needs ${tool}`, () => {
        throw new Error(`${tool} is not installed, and CI does not skip: ${INSTALL[tool]}`);
      });
    });
    return;
  }
  console.warn(`\n*** ${skipNotice(tool, name)} ***\n`);
  recordSkip(tool, name);
  describe.skip(`${name} [skipped: no ${tool}]`, body);
}

/** Where the run's global setup collects skipped suites, one JSON line each, to name them all after the summary. */
export const SKIP_LOG_ENV = 'TEST_SKIP_LOG';

export interface SkippedSuite {
  tool: Tool;
  suite: string;
  file: string;
}

function recordSkip(tool: Tool, suite: string): void {
  const log = process.env[SKIP_LOG_ENV];
  if (!log) return;
  const path = TestRunner.getCurrentSuite().file?.filepath ?? 'unknown file';
  const entry: SkippedSuite = { tool, suite, file: relative(process.cwd(), path) };
  appendFileSync(log, `${JSON.stringify(entry)}\n`);
}

/** Debian's Chromium, headless, with nothing that reaches the network on its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

