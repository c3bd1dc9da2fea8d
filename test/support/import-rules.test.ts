/**
 * The import rules of .dependency-cruiser.cjs can fail: a small tree with one
 * forbidden import per rule is cruised with the project's own configuration,
 * and each rule must name its import, while the allowed ways in pass.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tree = mkdtempSync(join(tmpdir(), 'import-rules-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
}

async function cruise(): Promise<string> {
  const run = promisify(execFile);
  const bin = join(ROOT, 'node_modules/.bin/depcruise');
  const args = ['src', 'emulator', '--config', join(ROOT, '.dependency-cruiser.cjs')];
  try {
    const { stdout } = await run(bin, args, { cwd: tree });
    return stdout;
  } catch (error) {
    return (error as { stdout: string }).stdout;
  }
}

write({
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true }, include: ['src', 'emulator'] }),
  'src/upstream/index.ts': "export { decode } from './codec.js';\n",
  'src/upstream/codec.ts': 'export const decode = 1;\n',
  'src/access/rate-limit.ts': 'export const rate = 1;\n',
  'src/access/admission.ts': 'export const admit = 1;\n',
  'emulator/index.ts': "export { seed } from './seed.js';\n",
  'emulator/seed.ts': 'export const seed = 1;\n',
  'src/config.ts': 'export const config = 1;\n',
  // The ways in the rules allow.
  'src/resolvers/fine.ts': "import { decode } from '../upstream/index.js';\nexport const fine = decode;\n",
  'src/main.ts': "import { seed } from '../emulator/index.js';\nexport const main = seed;\n",
  'src/http/fine.ts': "import { admit } from '../access/admission.js';\nexport const fine = admit;\n",
  // One forbidden import per rule.
  'src/resolvers/deep.ts': "import { decode } from '../upstream/codec.js';\nexport const deep = decode;\n",
  'src/upstream/call.ts': "import { rate } from '../access/rate-limit.js';\nexport const call = rate;\n",
  'src/server/start.ts': "import { seed } from '../../emulator/seed.js';\nexport const start = seed;\n",
  'src/schema.ts': "import { seed } from '../emulator/index.js';\nexport const schema = seed;\n",
  'emulator/leak.ts': "import { config } from '../src/config.js';\nexport const leak = config;\n",
  'src/http/door.ts': "import { rate } from '../access/rate-limit.js';\nexport const door = rate;\n",
  'src/limits/cost.ts': "import { rate } from '../access/rate-limit.js';\nexport const cost = rate;\n",
});

it('names each forbidden import by its rule, and lets the allowed ways in pass', async () => {
  const report = await cruise();
  const errors = [...report.matchAll(/error ([\w-]+): (\S+) → (\S+)/g)].map((m) => `${m[1]}: ${m[2]} -> ${m[3]}`).sort();
  expect(errors).toEqual(
    [
      'emulator-stands-alone: emulator/leak.ts -> src/config.ts',
      'emulator-through-its-entry: src/server/start.ts -> emulator/seed.ts',
      'one-way-in: src/http/door.ts -> src/access/rate-limit.ts',
      'limits-below-access: src/limits/cost.ts -> src/access/rate-limit.ts',
      'only-main-starts-the-emulator: src/schema.ts -> emulator/index.ts',
      'only-main-starts-the-emulator: src/server/start.ts -> emulator/seed.ts',
      'upstream-knows-no-gateway: src/upstream/call.ts -> src/access/rate-limit.ts',
      'upstream-holds-no-policy: src/upstream/call.ts -> src/access/rate-limit.ts',
      'upstream-through-its-index: src/resolvers/deep.ts -> src/upstream/codec.ts',
    ].sort(),
  );
}, 60_000);
