/**
 * The suite's layout, kept: the test of `src/x/y.ts` is `test/unit/x/y.test.ts`
 * (of `emulator/x/y.ts`, `scripts/x/y.ts` or `supergraph/y.ts`, the same path
 * under `test/unit/`) (or `y.<aspect>.test.ts`, and `y.redis.test.ts` for the
 * part over a real redis-server), and no two test files share a name except
 * unit tests of modules whose own names repeat in `src/` (two `index.ts`, two
 * `store.ts`). And the gateway's modules with a test at their path are counted.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** Folders beside src/ whose modules have their tests under test/unit/ too. */
const OWN_FOLDERS = /^test\/unit\/(?!(emulator|scripts|supergraph)\/)/;

/** The module a unit test file is named after: `test/unit/x/y.aspect.test.ts` is `src/x/y.ts`. */
const moduleOf = (file: string) => file.replace(OWN_FOLDERS, 'src/').replace(/^test\/unit\//, '').replace(/(\.[a-z-]+)*\.test\.ts$/, '.ts');

const all = testFiles(join(ROOT, 'test'));
const unit = all.filter((f) => f.startsWith('test/unit/'));

it('names each unit test after the module it tests, at the same path under test/unit as under src (or emulator)', () => {
  expect(unit.length).toBeGreaterThan(40);
  const orphans = unit.filter((file) => {
    const module = moduleOf(file);
    return !existsSync(join(ROOT, module));
  });
  expect(orphans).toEqual([]);
});

it('gives no two test files the same name, but unit tests of modules whose names repeat in src', () => {
  const byName = new Map<string, string[]>();
  for (const file of all) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
  const clashes = [...byName.values()].filter((files) => files.length > 1 && files.some((f) => !f.startsWith('test/unit/')));
  expect(clashes).toEqual([]);
});

it('counts the gateway modules with a test at their path: at least 80, and every in-process module of http/, upstream/ and realtime/', () => {
  const tested = new Set(unit.map(moduleOf).filter((module) => module.startsWith('src/')));
  expect(tested.size).toBeGreaterThanOrEqual(80);
  const elsewhere = new Set([
    // Types or re-exports only: nothing runs.
    ...['realtime/index.ts', 'realtime/source.ts', 'upstream/api.ts', 'upstream/index.ts', 'upstream/models.ts', 'upstream/observer.ts', 'upstream/params.ts', 'upstream/spec.ts', 'upstream/transport.ts'],
    // Wiring over a real socket, a server or a transport: the integration suites (test/realtime, test/security, test/upstream).
    ...['http/connections.ts', 'http/graphql-route.ts', 'http/realtime-session.ts', 'http/sse.ts', 'http/websocket.ts', 'realtime/follow.ts', 'upstream/client.ts', 'upstream/transport-got.ts', 'upstream/transport-node.ts'],
    // In-process tests still to write; covered meanwhile over HTTP (test/upstream/decoding.test.ts, test/realtime/receiver.test.ts, test/realtime/sse.test.ts).
    ...['http/sse-adapter.ts', 'http/webhook-route.ts', 'upstream/decode.ts'],
    // The Apollo plugins of the GraphQL route, moved out of graphql-route.ts unchanged; covered over HTTP meanwhile
    // (test/gateway: the auth gate's 401s, the cache headers, the key status a refused key tells).
    ...['http/auth-gate.ts', 'http/cache-headers.ts', 'http/refused-key-status.ts'],
  ].map((module) => `src/${module}`));
  const untested = ['http', 'upstream', 'realtime']
    .flatMap((dir) => readdirSync(join(ROOT, 'src', dir)).map((name) => `src/${dir}/${name}`))
    .filter((module) => module.endsWith('.ts') && !tested.has(module) && !elsewhere.has(module));
  expect(untested).toEqual([]);
});
