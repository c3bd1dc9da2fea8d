/**
 * Apollo Server's document store and APQ cache are told a key only; the plugin tells them who sent
 * the text while the request runs, so each caller's documents and texts are charged to its share.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { documentBytes, fairDocumentStore, UNPROVEN_OWNER } from '../../../src/limits/document-store.js';

type Hooks = { didResolveSource(c: { queryHash: string }): Promise<void>; willSendResponse(): Promise<void> };

describe("Apollo's document store, fair between callers", () => {
  const text = (i: number) => `query Q${String(i).padStart(3, '0')} { __typename }`;
  const each = documentBytes(text(0).length);
  const setUp = () => fairDocumentStore({ maxBytes: 10 * each, callerShare: 0.3 }, (context) => (context as { owner: string }).owner);

  /** One request as Apollo runs it: source resolved, document stored after validation, text registered (APQ), answer sent. */
  async function request(documents: ReturnType<typeof setUp>, owner: string, i: number) {
    const hooks = (await documents.plugin.requestDidStart!({ contextValue: { owner } } as never)) as unknown as Hooks;
    const hash = `hash${i}`;
    await hooks.didResolveSource({ queryHash: hash });
    if ((await documents.store.get(`schema:${hash}`)) === undefined) await documents.store.set(`schema:${hash}`, parse(text(i)));
    await documents.persisted.set(`apq:${hash}`, text(i));
    await hooks.willSendResponse();
  }

  it("charges each document to the caller who sent it, and holds a caller's flood to its own share", async () => {
    const documents = setUp();
    await request(documents, 'other', 999);
    for (let i = 0; i < 20; i++) await request(documents, 'flooder', i);
    const textBytes = 64 + 2 * text(0).length;
    expect(documents.bytesOf('other')).toBe(each + textBytes);
    // Texts are small: the flooder's 20 fit its share of them; of its parsed documents, 3 do.
    expect(documents.bytesOf('flooder')).toBe(3 * each + 20 * textBytes);
    expect(documents.bytesOf(UNPROVEN_OWNER)).toBe(0);
    expect(await documents.store.get('schema:hash999')).toBeDefined();
    expect(await documents.store.get('schema:hash0')).toBeUndefined();
    expect(await documents.persisted.get('apq:hash999')).toBe(text(999));
    expect(await documents.persisted.get('apq:hash0')).toBe(text(0));
  });

  it('charges a document stored with no request running to the one owner of the unproven', async () => {
    const documents = setUp();
    await documents.store.set('schema:stray', parse(text(1)));
    expect(documents.bytesOf(UNPROVEN_OWNER)).toBe(each);
  });
});
