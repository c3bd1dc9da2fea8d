/**
 * Keyed payments as a careful client makes them: `createTransaction` with an idempotency key, retried with the same
 * key on any refusal or silence for a retry window, round the gateways; once answered, sent once more as a client
 * that lost the answer would, which must replay the same transaction. The upstream ignores the key, so the
 * emulator's count of transactions per key is what the payer pays.
 */
import type { RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { sleep } from '../realtime/support.js';
import type { Gateway } from './world.js';

const CREATE = `mutation ($k: String!, $d: String!) { createTransaction(idempotencyKey: $k, input: { amountDecimal: "1500", description: $d, currency: { iso: "XOF" } }) { transaction { id } userErrors { code message } } }`;
/** An attempt with no answer by then counts as unanswered (the operation deadline is 15 s). */
const ATTEMPT_MS = 8_000;

export type PaymentRefusalKind = 'IDEMPOTENCY_UNAVAILABLE' | 'IDEMPOTENCY_IN_PROGRESS' | 'payment unanswered' | 'other error';

export interface PaymentRefusal {
  at: number;
  kind: PaymentRefusalKind;
}

interface Payment {
  key: string;
  /** The transaction the client was answered, or null when it gave up. */
  answered: string | null;
  /** What the resend with the same key answered. */
  replayed: string | null;
  /** What a resend once the fault was over answered. */
  late?: string | null;
}

export interface PaymentsCount {
  keyed: number;
  answered: number;
  /** Resends that answered the same transaction. */
  replayed: number;
  /** Of the resends once the fault was over (every answered payment once more), those that answered the same. */
  replayedAfter: number;
  /** Those refused for the whole retry window (a record left running by a write that failed holds its key for its lock). */
  refusedAfter: number;
  /** Keys with more than one transaction upstream, or a resend answering another. */
  doubled: number;
  /** The client's retry window ran out: nothing was created. */
  gaveUp: number;
  /** The client's retry window ran out, but the upstream had created it (a gateway killed mid-payment). */
  createdUnanswered: number;
}

export interface PaymentsLoad {
  refusals: PaymentRefusal[];
  /** Stops starting payments; resolves when those under way are done. */
  stop(): Promise<void>;
  /** Every answered payment sent once more with its key, as clients that lost their answers before a restart. */
  resendAnswered(): Promise<void>;
  count(): Promise<PaymentsCount>;
}

export interface PaymentsOptions {
  emulator: RunningEmulator;
  apiKey: string;
  /** Where each attempt goes (a gateway that is down answers nothing, and the client tries the next). */
  gateways(): Gateway[];
  label: string;
  concurrency: number;
  retryWindowMs: number;
  /** Asked before each attempt (`resend`: the one after an answer): a fault may pick a payment and aim it at a gateway. */
  route?(key: string, attempt: number, resend: boolean): Gateway | undefined;
}

export function startPayments(options: PaymentsOptions): PaymentsLoad {
  const refusals: PaymentRefusal[] = [];
  const payments: Payment[] = [];
  let stopped = false;
  let turn = 0;

  const attempt = async (gateway: Gateway, key: string): Promise<string | PaymentRefusalKind> => {
    try {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
        body: JSON.stringify({ query: CREATE, variables: { k: key, d: `chaos ${key}` } }),
        signal: AbortSignal.timeout(ATTEMPT_MS),
      });
      const body = (await res.json()) as { data?: { createTransaction: { transaction: { id: string } | null; userErrors: unknown[] } | null }; errors?: { extensions?: { code?: string } }[] };
      const id = body.data?.createTransaction?.transaction?.id;
      if (id) return id;
      const code = body.errors?.[0]?.extensions?.code;
      return code === 'IDEMPOTENCY_UNAVAILABLE' || code === 'IDEMPOTENCY_IN_PROGRESS' ? code : 'other error';
    } catch {
      return 'payment unanswered';
    }
  };

  /** Same key until answered or the window is over. */
  const untilAnswered = async (key: string, resend: boolean): Promise<string | null> => {
    const deadline = Date.now() + options.retryWindowMs;
    for (let n = 0; ; n++) {
      const all = options.gateways();
      const gateway = options.route?.(key, n, resend) ?? all[turn++ % all.length]!;
      const outcome = await attempt(gateway, key);
      if (outcome !== 'IDEMPOTENCY_UNAVAILABLE' && outcome !== 'IDEMPOTENCY_IN_PROGRESS' && outcome !== 'payment unanswered' && outcome !== 'other error') return outcome;
      refusals.push({ at: Date.now(), kind: outcome });
      if (Date.now() > deadline) return null;
      await sleep(150);
    }
  };

  let seq = 0;
  const client = async () => {
    while (!stopped) {
      const payment: Payment = { key: `${options.label}-${seq++}`, answered: null, replayed: null };
      payments.push(payment);
      payment.answered = await untilAnswered(payment.key, false);
      if (payment.answered) payment.replayed = await untilAnswered(payment.key, true);
      await sleep(20);
    }
  };
  const clients = Promise.all(Array.from({ length: options.concurrency }, client));

  return {
    refusals,
    async stop() {
      stopped = true;
      await clients;
    },
    async resendAnswered() {
      for (const payment of payments) if (payment.answered) payment.late = await untilAnswered(payment.key, true);
    },
    async count() {
      const created = new Map<string, number>();
      const f = factories(options.emulator, options.apiKey);
      for (let page = 1; ; page++) {
        const listed = (await f.rest('GET', `/v1/transactions?per_page=100&page=${page}`)) as { 'v1/transactions': { description: string }[] };
        const rows = listed['v1/transactions'];
        for (const row of rows) created.set(row.description, (created.get(row.description) ?? 0) + 1);
        if (rows.length < 100) break;
      }
      const upstream = (p: Payment) => created.get(`chaos ${p.key}`) ?? 0;
      return {
        keyed: payments.length,
        answered: payments.filter((p) => p.answered).length,
        replayed: payments.filter((p) => p.answered && p.replayed === p.answered).length,
        replayedAfter: payments.filter((p) => p.answered && p.late === p.answered).length,
        refusedAfter: payments.filter((p) => p.answered && p.late === null).length,
        doubled: payments.filter((p) => upstream(p) > 1 || (p.replayed !== null && p.replayed !== p.answered) || (p.late && p.late !== p.answered)).length,
        gaveUp: payments.filter((p) => !p.answered && upstream(p) === 0).length,
        createdUnanswered: payments.filter((p) => !p.answered && upstream(p) === 1).length,
      };
    },
  };
}
