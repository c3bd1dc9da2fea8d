/**
 * The decode memo (src/upstream/decode-memo.ts): an item that is the same
 * JSON value as one decoded before is not validated again, and the memo can
 * only ever answer with what that very value decodes to.
 */
import { describe, expect, it } from 'vitest';
import { createDecodeMemo, sameJson } from '../../../src/upstream/decode-memo.js';
import { decodePage, parseJsonBody, resourceShape } from '../../../src/upstream/decode.js';
import { UpstreamInvalidResponseError } from '../../../src/upstream/errors.js';
import { payoutModel, transactionModel } from '../../../src/upstream/models.js';
import { aTransaction, enveloped } from '../../upstream/fixtures.js';

const ctx = { route: 'GET /v1/transactions' };
const page = (items: unknown[]) => parseJsonBody(JSON.stringify(enveloped('transactions', items)), 'transactions', ctx);

describe('decode memo', () => {
  const memo = createDecodeMemo(100);
  const shape = { ...resourceShape('transaction', 'transactions', transactionModel), memo };

  it('hands back the object decoded before for the same text, and decodes a changed one afresh', () => {
    const first = decodePage(page([aTransaction({ id: 1 }), aTransaction({ id: 2 })]), shape, ctx).items;
    const again = decodePage(page([aTransaction({ id: 1 }), aTransaction({ id: 2, status: 'canceled' })]), shape, ctx).items;
    expect(again[0]).toBe(first[0]);
    expect(again[1]).not.toBe(first[1]);
    expect(again[1]).toMatchObject({ id: 2, status: 'canceled' });
    expect(first[1]).toMatchObject({ id: 2, status: 'pending' });
  });

  it('keeps amounts exact through the memo', () => {
    const big = JSON.stringify(enveloped('transactions', [aTransaction({ id: 3 })])).replace('"amount":2500', '"amount":9007199254740993');
    const decode = () => decodePage(parseJsonBody(big, 'transactions', ctx), shape, ctx).items[0] as { amount: unknown };
    expect(String(decode().amount)).toBe('9007199254740993');
    expect(String(decode().amount)).toBe('9007199254740993');
  });

  it('never remembers a failure: a malformed item is an error every time', () => {
    const bad = aTransaction({ id: 4, amount: 'lots' });
    for (let i = 0; i < 2; i++) expect(decodePage(page([bad]), shape, ctx).items[0]).toBeInstanceOf(UpstreamInvalidResponseError);
  });

  it('answers per model: the same text under another model is validated by that model', () => {
    const text = aTransaction({ id: 5 });
    const asTransaction = decodePage(page([text]), shape, ctx).items[0];
    const payouts = { ...resourceShape('payout', 'payouts', payoutModel), memo };
    const asPayout = decodePage(parseJsonBody(JSON.stringify(enveloped('payouts', [text])), 'payouts', ctx), payouts, ctx).items[0];
    expect(asPayout).not.toBe(asTransaction);
  });

  it('keeps a body parsed losslessly out (its ids are number objects), and a plain look-alike of it is invalid', () => {
    // The same transaction with one number beyond 2^53: parsed losslessly (every number an object).
    const lossless = JSON.stringify(enveloped('transactions', [aTransaction({ id: 9 })])).replace('"amount":2500', '"amount":9007199254740993');
    // The same text with every number written as the object JSON.stringify makes of a lossless number: invalid.
    const lookalike = lossless.replace(/:(\d+)([,}])/g, ':{"value":"$1","isLosslessNumber":true}$2');
    expect(decodePage(parseJsonBody(lossless, 'transactions', ctx), shape, ctx).items[0]).not.toBeInstanceOf(UpstreamInvalidResponseError);
    expect(decodePage(parseJsonBody(lookalike, 'transactions', ctx), shape, ctx).items[0]).toBeInstanceOf(UpstreamInvalidResponseError);
  });

  it('forgets the least recently used items past its size', () => {
    const small = { ...shape, memo: createDecodeMemo(2) };
    const [one] = decodePage(page([aTransaction({ id: 6 })]), small, ctx).items;
    decodePage(page([aTransaction({ id: 7 }), aTransaction({ id: 8 })]), small, ctx);
    const [again] = decodePage(page([aTransaction({ id: 6 })]), small, ctx).items;
    expect(again).not.toBe(one);
    expect(again).toEqual(one);
  });

  it('holds a bounded number of bytes, whatever the count allows', () => {
    const big = createDecodeMemo(2_000);
    const model = {};
    // Items of about 8,000 characters count 32,000 bytes each: 600 of them are over the 16 MB bound.
    const item = (id: number) => ({ id, text: 'x'.repeat(7_980) });
    for (let i = 0; i < 600; i++) big.set(model, item(i), { i });
    expect(big.get(model, item(0))).toBeUndefined();
    expect(big.get(model, item(599))).toEqual({ i: 599 });
  });

  it('answers only for the same value: a changed field, key order or number under the same id is a miss, and the new value then hits', () => {
    const small = createDecodeMemo(10);
    const model = {};
    small.set(model, { id: 1, status: 'pending', meta: { a: 1, b: [1, 2] } }, { decoded: 'first' });
    expect(small.get(model, { id: 1, status: 'pending', meta: { a: 1, b: [1, 2] } })).toEqual({ decoded: 'first' });
    expect(small.get(model, { id: 1, status: 'pending', meta: { a: 1, b: [1, 3] } })).toBeUndefined();
    expect(small.get(model, { id: 1, status: 'pending', meta: { b: [1, 2], a: 1 } })).toBeUndefined();
    expect(small.get(model, { id: 1, status: 'pending', meta: { a: 1, b: [1, 2], c: null } })).toBeUndefined();
    expect(small.get({}, { id: 1, status: 'pending', meta: { a: 1, b: [1, 2] } })).toBeUndefined();
    small.set(model, { id: 1, status: 'canceled', meta: {} }, { decoded: 'second' });
    expect(small.get(model, { id: 1, status: 'canceled', meta: {} })).toEqual({ decoded: 'second' });
    expect(small.get(model, { id: 1, status: 'pending', meta: { a: 1, b: [1, 2] } })).toBeUndefined();
  });

  it('remembers nothing for an item without a whole-number id', () => {
    const small = createDecodeMemo(10);
    const model = {};
    for (const item of [{ id: '1' }, { id: 1.5 }, { name: 'x' }]) {
      small.set(model, item, { ok: true });
      expect(small.get(model, item)).toBeUndefined();
    }
  });

  it('compares JSON values exactly', () => {
    expect(sameJson({ a: [1, { b: 'x' }], c: null }, { a: [1, { b: 'x' }], c: null })).toBe(true);
    expect(sameJson(0, -0)).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({ 0: 'a' }, ['a'])).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    expect(sameJson({ a: undefined }, {})).toBe(false);
    class NumberObject {
      constructor(readonly value: string) {}
    }
    expect(sameJson({ value: '1' }, new NumberObject('1'))).toBe(false);
  });
});
