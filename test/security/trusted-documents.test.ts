/** Trusted documents: behind a known frontend only its operations run, and an unknown one is refused before parsing. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/limits/trusted-documents.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const CURRENCIES = 'query Currencies { currencies { iso } }';

describe.each([
  ['client-preset persisted documents', (doc: string) => ({ [sha256(doc)]: doc })],
  ['an Apollo persisted query list', (doc: string) => ({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(doc), body: doc, name: 'Currencies', type: 'query' }] })],
])('TRUSTED_DOCUMENTS with %s', (_label, manifest) => {
  let stack: Stack;
  const key = newKey('trusted');
  beforeAll(async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'trusted-')), 'manifest.json');
    writeFileSync(path, JSON.stringify(manifest(CURRENCIES)));
    stack = await startStack({ env: { TRUSTED_DOCUMENTS: path } });
  });
  afterAll(() => stack.stop());

  const post = (body: unknown) =>
    fetch(stack.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) }).then(
      async (r) => ({ status: r.status, ...((await r.json()) as { data?: unknown; errors?: { extensions: { code: string } }[] }) }),
    );

  it('runs a listed operation by documentId, by persisted-query hash, or by its exact text', async () => {
    const hash = sha256(CURRENCIES);
    for (const body of [{ documentId: hash }, { documentId: `sha256:${hash}` }, { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }, { query: CURRENCIES }]) {
      const res = await post(body);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ currencies: expect.arrayContaining([{ iso: 'XOF' }]) });
    }
  });

  it('refuses any other document, known hash or not, before parsing and with no upstream call', async () => {
    await stack.resetCounts();
    for (const body of [{ query: '{ currencies { iso name } }' }, { documentId: sha256('{ transactions { totalCount } }') }, { query: '{ this is not graphql' }]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    }
    expect(await stack.upstreamCalls()).toBe(0);
  });
});
