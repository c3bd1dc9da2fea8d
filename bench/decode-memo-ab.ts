/**
 * `npx tsx bench/decode-memo-ab.ts`: whether the decode memo (src/upstream/decode-memo.ts)
 * pays. Real answers of the emulator (a page of 50 transactions, one transaction,
 * one customer, one currency), each decoded as the client decodes it (parse, then
 * validate every item), with and without a memo, in alternating rounds in one
 * process; the median per round is printed, in µs per answer.
 */
import { performance } from 'node:perf_hooks';
import { startEmulator } from '../emulator/index.js';
import { createDecodeMemo } from '../src/upstream/decode-memo.js';
import { decodeOne, decodePage, parseJsonBody } from '../src/upstream/decode.js';
import { ENDPOINTS } from '../src/upstream/endpoints.js';
import { factories } from '../test/support/factories.js';

const KEY = 'sk_sandbox_memo_ab';
const emulator = await startEmulator({ port: 0, settleMs: 0 });
const make = factories(emulator, KEY);
const customers: { id: number }[] = [];
for (let i = 0; i < 10; i++) customers.push(await make.customer());
const ids: number[] = [];
for (let i = 0; i < 50; i++) ids.push((await make.transaction({ amount: 1000 + i, customer: { id: customers[i % 10]!.id } })).id);
const text = async (path: string) => (await fetch(`${emulator.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } })).text();
const bodies = {
  page: await text('/v1/transactions?per_page=50'),
  transaction: [await text(`/v1/transactions/${ids[0]}`), await text(`/v1/transactions/${ids[1]}`)],
  customer: [await text(`/v1/customers/${customers[0]!.id}`), await text(`/v1/customers/${customers[1]!.id}`)],
  currency: [await text('/v1/currencies/1'), await text('/v1/currencies/2')],
};
await emulator.stop();

const ctx = { route: 'bench' };
type Decode = (memo: ReturnType<typeof createDecodeMemo> | undefined, which?: number) => void;
const cases: Record<string, Decode> = {
  'page of 50 transactions': (memo) => {
    const shape = memo ? { ...ENDPOINTS.transactions.list.shape, memo } : ENDPOINTS.transactions.list.shape;
    decodePage(parseJsonBody(bodies.page, 'transactions', ctx), shape, ctx, { perPage: 50 });
  },
  'one transaction': (memo, which = 0) => {
    const shape = memo ? { ...ENDPOINTS.transactions.retrieve.shape, memo } : ENDPOINTS.transactions.retrieve.shape;
    decodeOne(parseJsonBody(bodies.transaction[which]!, 'transaction', ctx), shape, ctx, ids[which]);
  },
  'one customer': (memo, which = 0) => {
    const shape = memo ? { ...ENDPOINTS.customers.retrieve.shape, memo } : ENDPOINTS.customers.retrieve.shape;
    decodeOne(parseJsonBody(bodies.customer[which]!, 'customer', ctx), shape, ctx, customers[which]!.id);
  },
  'one currency': (memo, which = 0) => {
    const shape = memo ? { ...ENDPOINTS.currencies.retrieve.shape, memo } : ENDPOINTS.currencies.retrieve.shape;
    decodeOne(parseJsonBody(bodies.currency[which]!, 'currency', ctx), shape, ctx, which + 1);
  },
};

const ROUNDS = 9;
const N = 400;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`decode with and without the memo: median of ${ROUNDS} alternating rounds of ${N} answers, µs per answer`);
console.log('| answer | no memo | memo, every item known | memo, every item new |');
console.log('|---|---|---|---|');
for (const [name, decode] of Object.entries(cases)) {
  const memo = createDecodeMemo(2_000);
  const samples = { none: [] as number[], warm: [] as number[], cold: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) decode(undefined);
    samples.none.push(((performance.now() - t) * 1000) / N);
    t = performance.now();
    for (let i = 0; i < N; i++) decode(memo);
    samples.warm.push(((performance.now() - t) * 1000) / N);
    // A memo of one item, over answers that differ: every lookup misses, and every item is remembered, for nothing.
    const missing = createDecodeMemo(1);
    t = performance.now();
    for (let i = 0; i < N; i++) decode(missing, i % 2);
    samples.cold.push(((performance.now() - t) * 1000) / N);
  }
  console.log(`| ${name} | ${median(samples.none).toFixed(1)} | ${median(samples.warm).toFixed(1)} | ${median(samples.cold).toFixed(1)} |`);
}
