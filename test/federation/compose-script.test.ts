/**
 * `npm run compose`, the npm equivalent of `rover supergraph compose`: the
 * shipped Rover config composes to the supergraph @apollo/composition makes of
 * the committed SDL; a config naming another subgraph by file, inline SDL or
 * `subgraph_url` composes with it; a bad one fails with its reasons on stderr
 * and exit code 1, nothing on stdout.
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { composeFromConfig } from '../../scripts/compose-supergraph.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAYMENTS = join(ROOT, 'supergraph/payments.graphql');
const paymentsSdl = readFileSync(PAYMENTS, 'utf8');
const ORDERS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Query { order(id: ID!): Order }
  type Order @key(fields: "id") { id: ID! transaction: Transaction }
  type Transaction @key(fields: "id", resolvable: false) { id: ID! }
`;

const dir = mkdtempSync(join(tmpdir(), 'compose-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function config(name: string, text: string): URL {
  const file = join(dir, name);
  writeFileSync(file, text);
  return pathToFileURL(file);
}

describe('npm run compose', () => {
  it('prints the supergraph of the shipped Rover config, the one @apollo/composition makes of the committed SDL', () => {
    const run = spawnSync('npm', ['run', '-s', 'compose'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const expected = composeServices([{ name: 'payments', url: 'http://localhost:4000/graphql', typeDefs: parse(paymentsSdl) }]);
    expect(expected.errors).toBeUndefined();
    expect(run.stdout.trimEnd()).toBe(expected.supergraphSdl!.trimEnd());
    expect(run.stdout).toContain('PAYMENTS @join__graph(name: "payments", url: "http://localhost:4000/graphql")');
  });

  it('takes a subgraph from a file, inline SDL or its running server, as Rover does', async () => {
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { _service: { sdl: ORDERS } } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    try {
      for (const schema of [`sdl: |\n${ORDERS.replace(/^/gm, '        ')}`, `subgraph_url: ${url}`]) {
        const file = config('two.yaml', `federation_version: =2.14.4\nsubgraphs:\n  payments:\n    routing_url: http://payments/graphql\n    schema:\n      file: ${PAYMENTS}\n  orders:\n    routing_url: http://orders/graphql\n    schema:\n      ${schema}\n`);
        const composed = await composeFromConfig(file);
        expect('supergraphSdl' in composed ? composed.supergraphSdl : composed.errors).toContain('ORDERS @join__graph(name: "orders", url: "http://orders/graphql")');
      }
    } finally {
      server.close();
    }
  });

  it('fails with the reasons on stderr and exit code 1, and prints no supergraph', async () => {
    const clash = config('clash.yaml', `subgraphs:\n  payments:\n    schema:\n      file: ${PAYMENTS}\n  other:\n    schema:\n      sdl: "type Query { transaction(id: Int): String }"\n`);
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/compose-supergraph.ts', '--config', fileURLToPath(clash)], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^composition failed:\n {2}- .*Query\.transaction/m);
    expect(await composeFromConfig(config('empty.yaml', 'subgraphs: {}\n'))).toMatchObject({ errors: ['no subgraphs in the config'] });
    expect(await composeFromConfig(config('ref.yaml', 'subgraphs:\n  a:\n    schema:\n      graphref: g@v\n'))).toMatchObject({ errors: ['a: schema needs file, sdl or subgraph_url (use rover for a graph_ref)'] });
    expect(await composeFromConfig(new URL('file:///nonexistent.yaml'))).toMatchObject({ errors: [expect.stringMatching(/^cannot read the Rover config \/nonexistent\.yaml/)] });
  });

  it('notes a federation_version other than the installed composition, and composes with the installed one', async () => {
    const composed = await composeFromConfig(config('old.yaml', `federation_version: =2.3.0\nsubgraphs:\n  payments:\n    schema:\n      file: ${PAYMENTS}\n`));
    expect(composed.notes).toEqual([expect.stringMatching(/^federation_version asks for =2\.3\.0; composing with the installed @apollo\/composition 2\.\d+\.\d+$/)]);
    expect('supergraphSdl' in composed).toBe(true);
  });
});
