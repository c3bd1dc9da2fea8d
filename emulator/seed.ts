/**
 * Demo data for one sandbox key: twelve customers on the sandbox phone numbers,
 * 36 transactions (six in each status) and 20 payouts (four in each status),
 * created over the last 60 days so pagination and date filters have something
 * to show. A seeded PRNG picks amounts, customers and ages, so every seed makes
 * the same rows; ids are the same on a fresh emulator, and dates are fixed
 * offsets from the moment of seeding (a fixed epoch would age out of any
 * "last 30 days" filter). Seeding the same key twice (without a reset) does
 * nothing the second time.
 */
import type { Engine } from './engine.js';
import { createCustomer } from './resources/customers.js';
import { beginPayout, createPayout, schedulePayout, setPayoutStatus } from './resources/payouts.js';
import { createTransaction, setTransactionStatus } from './resources/transactions.js';

export const DEMO_API_KEY = 'sk_sandbox_demo';

const DAY_MS = 24 * 3600 * 1000;
const DEMO_SEED = 0x5eed;

const PEOPLE: ReadonlyArray<readonly [string, string, string]> = [
  ['Ama', 'Kossi', '64000001'],
  ['Bio', 'Dossou', '64000002'],
  ['Chantal', 'Hounsa', '64000003'],
  ['Kofi', 'Mensah', '64000001'],
  ['Aïcha', 'Diallo', '64000004'],
  ['Moussa', 'Traoré', '64000001'],
  ['Fatou', 'Ndiaye', '64000002'],
  ['Kwame', 'Asante', '64000003'],
  ['Adjoa', 'Agbodjan', '64000001'],
  ['Sékou', 'Camara', '64000004'],
  ['Yaa', 'Boateng', '64000001'],
  ['Ibrahim', 'Ouédraogo', '64000003'],
];

const TX_STATUSES = ['pending', 'approved', 'declined', 'canceled', 'refunded', 'transferred'] as const;
const PAYOUT_STATUSES = ['pending', 'scheduled', 'started', 'sent', 'failed'] as const;

/** mulberry32: tiny, well known, and enough for demo figures. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function emailOf(first: string, last: string): string {
  const ascii = (s: string) => s.normalize('NFD').replace(/[^A-Za-z]/g, '').toLowerCase();
  return `${ascii(first)}.${ascii(last)}@demo.example`;
}

export function seedDemo(engine: Engine, seeded: Set<string>, apiKey = DEMO_API_KEY): string {
  if (seeded.has(apiKey)) return apiKey;
  seeded.add(apiKey);
  const account = engine.accountFor(apiKey);
  const xof = engine.defaultCurrency(account.id);
  if (!xof) return apiKey;
  const random = prng(DEMO_SEED);
  const start = Date.now();
  // Oldest first, so ids grow with created_at as they do for live rows.
  const ages = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 60 * DAY_MS)).sort((a, b) => b - a);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const amount = () => (1 + Math.floor(random() * 100)) * 500;

  const customerAges = ages(PEOPLE.length).map((age) => age + 60 * DAY_MS);
  const customers = PEOPLE.map(([firstname, lastname, phone], i) =>
    engine.at(new Date(start - (customerAges[i] ?? 0)), () =>
      createCustomer(engine, account.id, { firstname, lastname, email: emailOf(firstname, lastname), phone: { number: phone, country: 'bj' } }),
    ),
  );
  const phoneOf = (c: (typeof customers)[number]) => c.phone_number?.number ?? '64000001';
  const noAnswer = customers.filter((c) => phoneOf(c) === '64000003');

  const txStatuses = TX_STATUSES.flatMap((s) => [s, s, s, s, s, s]).sort(() => random() - 0.5);
  const txAges = ages(txStatuses.length);
  txStatuses.forEach((status, i) => {
    engine.at(new Date(start - (txAges[i] ?? 0)), () => {
      const customer = pick(customers);
      const tx = createTransaction(engine, account.id, account.balance_id, {
        amount: amount(), currency: xof, description: `Demo: order ${i + 1} (${status})`, customer, mode: 'mtn_open',
      });
      if (status === 'pending') return;
      if (status === 'declined') return setTransactionStatus(engine, tx, 'declined', 'INSUFFICIENT_FUNDS');
      if (status === 'canceled') return setTransactionStatus(engine, tx, 'canceled');
      setTransactionStatus(engine, tx, 'approved');
      if (status === 'refunded' || status === 'transferred') setTransactionStatus(engine, tx, status);
    });
  });

  const payoutStatuses = PAYOUT_STATUSES.flatMap((s) => [s, s, s, s]).sort(() => random() - 0.5);
  const payoutAges = ages(payoutStatuses.length);
  payoutStatuses.forEach((status, i) => {
    engine.at(new Date(start - (payoutAges[i] ?? 0)), () => {
      // A started payout stays started only on the no-answer number.
      const customer = status === 'started' ? pick(noAnswer) : pick(customers);
      const p = createPayout(engine, account.id, account.balance_id, { amount: amount(), currency: xof, customerId: customer.id, mode: 'mtn_open' });
      if (status === 'pending') return;
      if (status === 'scheduled') return schedulePayout(engine, p, new Date(start + (1 + i) * DAY_MS), phoneOf(customer));
      beginPayout(engine, p, phoneOf(customer));
      if (status === 'started') return;
      setPayoutStatus(engine, p, status, status === 'failed' ? 'INSUFFICIENT_FUNDS' : undefined);
    });
  });
  return apiKey;
}
