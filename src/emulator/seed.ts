/**
 * Demo data for one sandbox key: customers with the sandbox phone numbers,
 * transactions in every status and payouts in every status. Seeding the same
 * key twice (without a reset) does nothing the second time.
 */
import type { Engine } from './engine.js';
import { createCustomer } from './resources/customers.js';
import { beginPayout, createPayout, schedulePayout, setPayoutStatus } from './resources/payouts.js';
import { createTransaction, setTransactionStatus } from './resources/transactions.js';

export const DEMO_API_KEY = 'sk_sandbox_demo';

export function seedDemo(engine: Engine, seeded: Set<string>, apiKey = DEMO_API_KEY): string {
  if (seeded.has(apiKey)) return apiKey;
  seeded.add(apiKey);
  const account = engine.accountFor(apiKey);
  const xof = engine.defaultCurrency(account.id);
  if (!xof) return apiKey;
  const people = [
    { firstname: 'Ama', lastname: 'Kossi', email: 'ama.kossi@demo.example', phone: '64000001' },
    { firstname: 'Bio', lastname: 'Dossou', email: 'bio.dossou@demo.example', phone: '64000002' },
    { firstname: 'Chantal', lastname: 'Hounsa', email: 'chantal.hounsa@demo.example', phone: '64000003' },
  ];
  const customers = people.map((p) =>
    createCustomer(engine, account.id, { ...p, phone: { number: p.phone, country: 'bj' } }),
  );
  const [ama, bio, chantal] = customers;
  if (!ama || !bio || !chantal) return apiKey;

  const tx = (amount: number, description: string, customer = ama) =>
    createTransaction(engine, account.id, account.balance_id, { amount, currency: xof, description, customer, mode: 'mtn_open' });
  tx(1000, 'Demo: pending order');
  setTransactionStatus(engine, tx(2500, 'Demo: approved order'), 'approved');
  setTransactionStatus(engine, tx(3000, 'Demo: declined order', bio), 'declined', 'INSUFFICIENT_FUNDS');
  setTransactionStatus(engine, tx(1500, 'Demo: canceled order'), 'canceled');
  const refunded = tx(4000, 'Demo: refunded order');
  setTransactionStatus(engine, refunded, 'approved');
  setTransactionStatus(engine, refunded, 'refunded');
  const transferred = tx(10_000, 'Demo: transferred order');
  setTransactionStatus(engine, transferred, 'approved');
  setTransactionStatus(engine, transferred, 'transferred');

  const payout = (amount: number, customer = ama) =>
    createPayout(engine, account.id, account.balance_id, { amount, currency: xof, customerId: customer.id, mode: 'mtn_open' });
  payout(5000);
  schedulePayout(engine, payout(6000), new Date(Date.now() + 24 * 3600 * 1000), ama.phone_number?.number ?? '64000001');
  beginPayout(engine, payout(7000, chantal), '64000003');
  const sent = payout(8000);
  beginPayout(engine, sent, '64000001');
  engine.cancelPending(`payout:${sent.id}`);
  setPayoutStatus(engine, sent, 'sent');
  const failed = payout(9000, bio);
  beginPayout(engine, failed, '64000002');
  engine.cancelPending(`payout:${failed.id}`);
  setPayoutStatus(engine, failed, 'failed', 'INSUFFICIENT_FUNDS');
  return apiKey;
}
