/**
 * Large answers decode in slices that give the event loop back, keys in turn
 * (src/upstream/decode-sliced.ts, decode-turns.ts), and to the same value as the whole-body parse.
 */
import { describe, expect, it } from 'vitest';
import { isLosslessNumber } from 'lossless-json';
import { decodePage, parseJsonBody, parsedLosslessly, resourceShape } from '../../../src/upstream/decode.js';
import { checkItemsSliced, parseJsonBodySliced, slicerFor } from '../../../src/upstream/decode-sliced.js';
import { DecodeTurns } from '../../../src/upstream/decode-turns.js';
import { ENDPOINTS } from '../../../src/upstream/endpoints.js';
import { transactionModel } from '../../../src/upstream/models.js';
import { aTransaction } from '../../upstream/fixtures.js';
import { setup } from './fake-calls.js';

const ctx = { route: 'GET /v1/transactions' };
const shape = resourceShape('transaction', 'transactions', transactionModel);

/** A page of `count` transactions, each carrying `metadataChars` of metadata (the heavy tenant's kind). */
function heavyPage(count: number, metadataChars: number, extra: (i: number) => Record<string, unknown> = () => ({})): string {
  const note = 'x'.repeat(metadataChars);
  const items = Array.from({ length: count }, (_, i) => aTransaction({ id: i + 1, metadata: { note, line: i, quote: 'a "b" \\ [c] {d},:' }, ...extra(i) }));
  return JSON.stringify({ 'v1/transactions': items, meta: { current_page: 1, per_page: count, total_pages: 1, total_count: count } });
}

async function sliced(text: string, turns = new DecodeTurns()): Promise<unknown> {
  const slicer = slicerFor(turns, 'k');
  return parseJsonBodySliced(text, 'transactions', ctx, slicer);
}

/** Compares values as decoding sees them: a lossless number that a JS number holds whole is that number, any other by its digits. */
function normal(value: unknown): unknown {
  if (isLosslessNumber(value)) {
    const digits = (value as { value: string }).value;
    return String(Number(digits)) === digits ? Number(digits) : { lossless: digits };
  }
  if (Array.isArray(value)) return value.map(normal);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normal(v)]));
  return value;
}

describe('the sliced parse', () => {
  const big = heavyPage(300, 2_000);

  it.each([
    ['a heavy page', big],
    ['a top-level list', `[${JSON.stringify(aTransaction())}, 1, "a,b", [1,[2]], {"x":{"y":[1,2]}}]`],
    ['an empty list and object', ' { "v1/transactions" : [ ] , "meta" : { } } '],
    ['a repeated key and a __proto__ key', '{"a":1,"__proto__":{"p":1},"a":[2,3]}'],
    ['exact numbers the whole parse keeps losslessly', heavyPage(300, 2_000, (i) => (i === 7 ? { amount: '__AMOUNT__', id: '__ID__' } : {})).replace('"__AMOUNT__"', '12345678901234567890.5').replace('"__ID__"', '99999999999999999999')],
    ['a bare exact number in a list', `{"v1/transactions":[${'1,'.repeat(40_000)}12345678901234567890123]}`],
  ])('%s: the same value as the whole parse', async (_, text) => {
    const whole = parseJsonBody(text, 'transactions', ctx);
    const parts = await sliced(text);
    expect(normal(parts)).toEqual(normal(whole));
    expect(Object.keys(parts as object)).toEqual(Object.keys(whole as object));
  });

  it.each([
    ['a trailing comma', big.replace(/\]\s*,\s*"meta"/, ',],"meta"')],
    ['an empty item', big.replace('},{', '},,{')],
    ['a missing bracket', big.slice(0, -1)],
    ['garbage after the body', `${big} x`],
    ['a byte-order mark', `\uFEFF${big}`],
    ['a key without value', `{"v1/transactions":[${'1,'.repeat(40_000)}1], "meta"}`],
  ])('%s: not JSON, as for the whole parse', async (_, text) => {
    expect(() => parseJsonBody(text, 'transactions', ctx)).toThrow(/not JSON/);
    await expect(sliced(text)).rejects.toThrow(/not JSON/);
  });

  it('decodes a page with exact amounts to what decodePage makes of the whole body', async () => {
    const text = heavyPage(400, 2_000, (i) => ({ amount: i === 3 ? '__EXACT__' : 2500 + i })).replace('"__EXACT__"', '1234567890123456789.25');
    const whole = decodePage(parseJsonBody(text, 'transactions', ctx), shape, ctx);
    expect(String((whole.items[3] as { amount: unknown }).amount)).toBe('1234567890123456789.25');
    const body = await sliced(text);
    expect(parsedLosslessly(body)).toBe(false);
    const list = (body as { 'v1/transactions': unknown[] })['v1/transactions'];
    const items = await checkItemsSliced(body, list, shape, ctx, slicerFor(new DecodeTurns(), 'k'));
    expect(normal(items.map((i) => JSON.parse(JSON.stringify(i))))).toEqual(normal(whole.items.map((i) => JSON.parse(JSON.stringify(i)))));
    expect(String((items[3] as { amount: unknown }).amount)).toBe('1234567890123456789.25');
  });
});

/** The longest gap between two ticks of a 1 ms timer while `work` runs. */
async function longestStall(work: () => Promise<unknown> | unknown): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await new Promise((r) => setTimeout(r, 5));
    last = performance.now();
    await work();
    longest = Math.max(longest, performance.now() - last);
  } finally {
    clearInterval(timer);
  }
  return longest;
}

describe('a large page through an upstream call', () => {
  // ~40 MB: metadata-heavy, as the tenant that stalled the others read.
  const text = heavyPage(8_000, 5_000);
  const list = (keyCalls: ReturnType<typeof setup>, apiKey: string) => keyCalls.calls.call(keyCalls.caller(apiKey), ENDPOINTS.transactions.list, [{ perPage: 8_000 }]);

  it('never stalls the event loop for long, where the whole decode does', async () => {
    const whole = await longestStall(() => decodePage(parseJsonBody(text, 'transactions', ctx), shape, ctx, { perPage: 8_000 }));
    const calls = setup(() => ({ statusCode: 200, headers: {}, body: text }), { callTimeoutMs: 60_000 });
    let page: unknown;
    const stall = await longestStall(async () => (page = await list(calls, 'sk_test_heavy')));
    expect((page as { items: unknown[] }).items).toHaveLength(8_000);
    // A generous bound for a loaded machine; slices are 8 ms each.
    expect(stall).toBeLessThan(200);
    expect(whole).toBeGreaterThan(stall * 2);
  }, 120_000);

  it("lets another key's smaller answers finish while one key's large page decodes", async () => {
    const small = heavyPage(150, 5_000); // ~0.8 MB: decoded in turns too
    const tiny = heavyPage(5, 10);
    const calls = setup((n) => ({ statusCode: 200, headers: {}, body: n === 1 ? text : n === 2 ? small : tiny }), { callTimeoutMs: 60_000 });
    const done: string[] = [];
    const heavy = list(calls, 'sk_test_heavy').then(() => done.push('heavy'));
    await new Promise((r) => setImmediate(r));
    const bystander = list(calls, 'sk_test_bystander').then(() => done.push('bystander'));
    const five = list(calls, 'sk_test_small').then(() => done.push('five rows'));
    await Promise.all([heavy, bystander, five]);
    expect(done).toEqual(['five rows', 'bystander', 'heavy']);
  }, 120_000);
});
