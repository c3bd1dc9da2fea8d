/**
 * WebSocket and SSE operations go through `admitDocument`, which remembers
 * the documents that parsed and validated, by their text, as Apollo Server's
 * document store does for HTTP. What it remembers is the document only: the
 * operation's own checks (cost with these variables, refused root fields)
 * still run every time, and a document that failed is never remembered.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { validatedDocuments } from '../../../src/limits/document-store.js';
import { admitDocument, documentRules, operationCheck, type AdmissionGuard } from '../../../src/limits/graphql-limits.js';
import { buildSchema } from '../../../src/schema.js';

describe('admission of WebSocket and SSE documents, repeated', () => {
  const schema = buildSchema();
  const config = loadConfig({ MAX_OPERATION_COST: '90' });
  const guard = (): AdmissionGuard => ({
    maxTokens: config.limits.maxTokens,
    rules: documentRules(config.limits),
    check: operationCheck(schema, config.limits, config.pagination),
    refusedRootFields: ['_service'],
    validated: validatedDocuments({ maxBytes: 32 * 1024 * 1024, callerShare: 1 }),
  });
  const page = 'query Page($first: Int) { transactions(first: $first) { nodes { id customer { email } } } }';
  const admitted = (result: ReturnType<typeof admitDocument>) => {
    if ('errors' in result) throw new Error(`refused: ${result.errors.map((e) => e.message).join('; ')}`);
    return result.document;
  };
  const codes = (result: ReturnType<typeof admitDocument>) => ('errors' in result ? result.errors.map((e) => e.extensions['code']) : []);

  it('parses and validates a text once: the same text again gets the same document', () => {
    const g = guard();
    const first = admitted(admitDocument(schema, page, 'Page', { first: 5 }, g));
    const again = admitted(admitDocument(schema, page, 'Page', { first: 5 }, g));
    expect(again).toBe(first);
    // Another text (one space more) is another document.
    expect(admitted(admitDocument(schema, `${page} `, 'Page', { first: 5 }, g))).not.toBe(first);
  });

  it('still prices a remembered document with each call’s variables', () => {
    const g = guard();
    admitted(admitDocument(schema, page, 'Page', { first: 5 }, g));
    expect(codes(admitDocument(schema, page, 'Page', { first: 100 }, g))).toEqual(['OPERATION_TOO_COSTLY']);
    admitted(admitDocument(schema, page, 'Page', { first: 5 }, g));
  });

  it('still refuses root fields the transport does not serve, whatever was admitted before', () => {
    const g = guard();
    const text = 'query S($skip: Boolean!) { _service @skip(if: $skip) { sdl } }';
    admitted(admitDocument(schema, text, undefined, { skip: true }, g));
    expect(codes(admitDocument(schema, text, undefined, { skip: false }, g))).toEqual(['UNAUTHENTICATED']);
  });

  it('never remembers a document that failed to parse or validate', () => {
    const g = guard();
    const invalid = '{ transactions(first: 5) { nodes { noSuchField } } }';
    expect(codes(admitDocument(schema, invalid, undefined, {}, g))).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(codes(admitDocument(schema, invalid, undefined, {}, g))).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(codes(admitDocument(schema, '{ transactions(', undefined, {}, g))).toEqual(['GRAPHQL_PARSE_FAILED']);
    expect(g.validated!.size).toBe(0);
  });

  it('bounds the memo by the heap a parsed document holds, not by its text: a very long one is not remembered', () => {
    const g = guard();
    // About 100 bytes of heap per character of text: 400,000 characters would be some 40 MB, over the 32 MB bound.
    const long = `# ${'x'.repeat(400_000)}\n{ __typename }`;
    admitted(admitDocument(schema, long, undefined, {}, g));
    expect(g.validated!.size).toBe(0);
    admitted(admitDocument(schema, page, 'Page', { first: 5 }, g));
    expect(g.validated!.size).toBe(1);
    expect(g.validated!.bytes).toBe(page.length * 100);
  });

  it("holds a caller's documents to its share: its flood pushes out its own, not another caller's", () => {
    const g = { ...guard(), validated: validatedDocuments({ maxBytes: 1_000_000, callerShare: 0.25 }) };
    admitted(admitDocument(schema, page, 'Page', { first: 5 }, { ...g, owner: 'other' }));
    const flood = (i: number) => `query Flood${i} { __typename }`;
    for (let i = 0; i < 200; i++) admitted(admitDocument(schema, flood(i), undefined, {}, { ...g, owner: 'flooder' }));
    expect(g.validated.bytesOf('flooder')).toBeLessThanOrEqual(250_000);
    expect(g.validated.get(flood(199))).toBeDefined();
    expect(g.validated.get(flood(0))).toBeUndefined();
    expect(g.validated.get(page)).toBeDefined();
  });

  it('works the same without a memo, parsing every time', () => {
    const { validated: _, ...plain } = guard();
    const first = admitted(admitDocument(schema, page, 'Page', { first: 5 }, plain));
    expect(admitted(admitDocument(schema, page, 'Page', { first: 5 }, plain))).not.toBe(first);
    expect(codes(admitDocument(schema, page, 'Page', { first: 100 }, plain))).toEqual(['OPERATION_TOO_COSTLY']);
  });
});
