import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

const ROOT = fileURLToPath(new URL('.', import.meta.url));

/** The test files under `dir`, as paths from the root (what `include` reads). */
function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/**
 * Unit files that replace a module (`vi.mock`) need a module graph of their own; the
 * rest share one per worker, which saves re-importing the gateway for every file.
 */
const MOCKING = testFiles('test/unit').filter((file) => /\bvi\.(do)?[mM]ock\(/.test(read(file)));

/**
 * Suites that run src/main.ts as its own process (`npm start`'s way, test/realtime/processes.ts)
 * or build it: each start compiles the gateway, so they run one at a time, after the rest.
 */
const STARTS_MAIN_TEXT = /processes\.js'|spawn\([^)]*'src\/main\.ts'|\['run', '-s', 'build'\]|'src\/main\.ts'/;
/** A file's text and that of the modules beside it it imports (`./scenario.js`, and theirs), where a suite keeps its processes. */
function withLocalImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  let text: string;
  try {
    text = read(file);
  } catch {
    return '';
  }
  const dir = file.slice(0, file.lastIndexOf('/'));
  const local = [...text.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((m) => `${dir}/${m[1]}.ts`);
  return [text, ...local.map((f) => withLocalImports(f, seen))].join('\n');
}
const STARTS_MAIN = testFiles('test').filter((file) => !file.startsWith('test/unit/') && STARTS_MAIN_TEXT.test(withLocalImports(file)));

/** Suites that measure one request's latency against another's: no other file may share their cores. */
const MEASURES_LATENCY = ['test/security/fairness.test.ts'];

const SERIAL = [...STARTS_MAIN, ...MEASURES_LATENCY];

/**
 * Integration suites mostly wait on their servers, so one per core runs beside another; three failed
 * timing-bound tests on a loaded machine (docs/development.md, "Where the suite's time goes").
 */
const INTEGRATION_WORKERS = 2;
/** One at a time: start-up waits sized for one gateway compiling, latencies measured on an otherwise idle machine. */
const SERIAL_WORKERS = 1;

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM builds; @apollo/subgraph and Apollo Server load
    // the CJS one, so tests must too, or graphql-js sees two "realms" of its types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Says after the summary which suites a missing redis-server or Chromium skipped.
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/slowest-files.ts'],
    slowTestThreshold: 2_000,
    // Integration suites start real servers on 127.0.0.1; give slow shared machines room.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // In-process only (no servers, processes, Redis or browser): the one-minute loop, `npm run test:unit`.
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**/*.{redis,net}.test.ts', ...MOCKING],
          setupFiles: ['test/support/in-process-only.ts'],
          pool: 'threads',
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-mocks',
          include: MOCKING,
          setupFiles: ['test/support/in-process-only.ts'],
          pool: 'threads',
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**/!(*.redis|*.net).test.ts', ...SERIAL],
          maxWorkers: INTEGRATION_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          maxWorkers: SERIAL_WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
