/**
 * What the same work costs when its code and data are no longer in the CPU's
 * caches, as an operation's are once its upstream call comes back:
 * `npx tsx bench/idle-penalty.ts`. The work is decoding one transaction
 * (parse and validate, src/upstream/decode.ts), timed alone, 2,000 times per
 * row, each time after:
 * - nothing but a setImmediate: the code and its data are hot;
 * - a 5 ms timer: the process sleeps, as it does while waiting for the upstream;
 * - 5 ms of busy work that stays in cache (hashing one 64 kB buffer);
 * - 5 ms of busy work that does not (reading a 32 MB array).
 * The timer row and the last are alike: what costs is the eviction, by
 * sleeping or by other work, not time passing. A server waiting on its
 * upstream pays it on what runs when the answer arrives, which is part of why
 * the benches' CPU per operation at concurrency 1 is above their figure at
 * concurrency 10, for the gateway and the peer alike.
 */
import { createHash } from 'node:crypto';
import { decodeOne, parseJsonBody, resourceShape } from '../src/upstream/decode.js';
import { transactionModel } from '../src/upstream/models.js';

const CALLS = 2000;
const PAUSE_MS = 5;

// One transaction as the emulator answers it (docs/upstream.md, Response shapes).
const text = JSON.stringify({
  'v1/transaction': {
    klass: 'v1/transaction', id: 1, account_id: 854108, reference: 'trx_a795e85429748a63', amount: 1000, status: 'pending',
    currency_id: 1, mode: null, last_error_code: null, commission: 15, fixed_commission: 0, fees: 15, amount_debited: 1000,
    amount_transferred: 985, created_at: '2026-11-23T18:36:23.893Z', updated_at: '2026-11-23T18:36:23.893Z', deleted_at: null,
    metadata: {}, custom_metadata: {}, payment_method_id: null, transaction_key: 'f533fc126a88b4943c4481daf39b4396',
    merchant_reference: null, balance_id: 1, description: 'Order', callback_url: null, customer_id: 1, approved_at: null,
    canceled_at: null, declined_at: null, refunded_at: null, transferred_at: null, receipt_url: null, sub_accounts_commissions: [],
  },
});
const shape = resourceShape('transaction', 'transactions', transactionModel);
const ctx = { route: 'GET /v1/transactions/:id' };
const work = () => decodeOne(parseJsonBody(text, 'transaction', ctx), shape, ctx, 1);

const block = Buffer.alloc(64 * 1024, 1);
const hashing = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) createHash('sha256').update(block).digest();
};
// Four times a typical last-level cache: reading it through pushes everything else out.
const big = new Float64Array((32 * 1024 * 1024) / 8).fill(1);
let sink = 0;
const sweeping = (ms: number) => {
  const until = performance.now() + ms;
  // A cache line (8 doubles) per step, through the whole array, until the time is up.
  for (let i = 0; performance.now() < until; i = (i + 8) % big.length) {
    for (let j = 0; j < 4096; j++, i = (i + 8) % big.length) sink += big[i]!;
  }
};
const pauses: [string, () => Promise<void>][] = [
  ['after a setImmediate (hot)', () => new Promise((resolve) => setImmediate(resolve))],
  [`after a ${PAUSE_MS} ms timer (idle)`, () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS))],
  [`after ${PAUSE_MS} ms hashing (in cache)`, async () => hashing(PAUSE_MS)],
  [`after ${PAUSE_MS} ms reading 32 MB`, async () => sweeping(PAUSE_MS)],
];

async function measure(pause: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    await pause();
    const start = process.hrtime.bigint();
    work();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

for (let i = 0; i < 5000; i++) work();
console.log(`Node ${process.version}; decoding one transaction, ${CALLS} times per row; median µs per decode, best of 2 rounds`);
const best = new Map<string, number>();
for (let round = 0; round < 2; round++) {
  for (const [name, pause] of pauses) best.set(name, Math.min(best.get(name) ?? Infinity, await measure(pause)));
}
const hot = best.get(pauses[0]![0])!;
for (const [name, us] of best) console.log(`${name.padEnd(32)} ${us.toFixed(1).padStart(6)} µs  (${(us / hot).toFixed(1)}x hot)`);
if (sink < 0) console.log(sink);
