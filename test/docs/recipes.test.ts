/**
 * The install recipes for client and router teams stay true to this
 * repository: the `overrides` docs/federation.md gives for the typed client
 * and docs/routers.md gives for Hive Gateway on Node 20 pin the versions the
 * repository pins itself (package.json, test/routers/package.json), which
 * its own engines test holds to Node 20; federation.md composes with the
 * npm script beside rover; and the federation packages share one version,
 * so the install holds one @apollo/federation-internals.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const json = (path: string) => JSON.parse(read(path)) as Record<string, unknown>;
const root = json('package.json') as { scripts: Record<string, string>; overrides: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };
const routers = json('test/routers/package.json') as { overrides: Record<string, string> };

/** The `overrides` of the ```json block that follows `marker` in a page. */
function recipe(page: string, marker: string): Record<string, string> {
  const text = read(page);
  const at = text.indexOf(marker);
  expect(at, `${page} has "${marker}"`).toBeGreaterThan(-1);
  const block = /```json\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  return (JSON.parse(block!) as { overrides: Record<string, string> }).overrides;
}

describe('Node 20 recipes', () => {
  it('gives the typed client the overrides package.json itself pins', () => {
    const overrides = recipe('docs/federation.md', 'Installing it on Node 20');
    expect(Object.keys(overrides).sort()).toEqual(['@whatwg-node/disposablestack', '@whatwg-node/fetch', '@whatwg-node/node-fetch', '@whatwg-node/promise-helpers', 'listr2', 'sync-fetch']);
    for (const [name, version] of Object.entries(overrides)) expect(root.overrides[name], name).toBe(version);
  });

  it("gives Hive Gateway the repository's versions, test/routers' two among them", () => {
    const overrides = recipe('docs/routers.md', 'Installing it on Node 20');
    for (const [name, version] of Object.entries(overrides)) expect(root.overrides[name] ?? routers.overrides[name], name).toBe(version);
    expect(overrides).toMatchObject(routers.overrides);
    expect(Object.keys(overrides)).toContain('sync-fetch');
  });
});

describe('composing a supergraph', () => {
  it('documents npm run compose beside rover, and the script is there', () => {
    const page = read('docs/federation.md');
    expect(page).toContain('rover supergraph compose --config supergraph/supergraph.yaml > supergraph.graphql');
    expect(page).toContain('npm run -s compose > supergraph.graphql');
    expect(root.scripts.compose).toBe('tsx scripts/compose-supergraph.ts');
    expect(root.devDependencies['@apollo/composition']).toBeDefined();
  });

  it('keeps the subgraph, composition and gateway on one version, so one federation-internals is installed', () => {
    const versions = [root.dependencies['@apollo/subgraph'], root.devDependencies['@apollo/composition'], root.devDependencies['@apollo/gateway']].map((v) => v!.replace(/^\^/, ''));
    expect(new Set(versions).size).toBe(1);
    const packages = (JSON.parse(read('package-lock.json')) as { packages: Record<string, { version: string }> }).packages;
    const internals = Object.entries(packages).filter(([path]) => path.endsWith('node_modules/@apollo/federation-internals'));
    expect(internals.map(([path, p]) => `${path}@${p.version}`)).toEqual([`node_modules/@apollo/federation-internals@${versions[0]}`]);
    expect(read('docs/federation.md')).not.toMatch(/2\.12\.4|newest for Node 20/);
  });
});
