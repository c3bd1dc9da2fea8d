/**
 * Shared by the pending-poll suites (one instance, two over Redis): the route whose reads are counted, proving a
 * key, an approval announced by webhook under 20 pollers, and a run of polls that must each read the upstream.
 */
import type { factories, RestObject } from '../support/factories.js';
import { emulatorAdmin } from '../support/harness.js';
import { pollers, readStatus } from '../support/polling.js';
import { postWebhook, setUpstreamStatus, transactionEvent } from '../realtime/support.js';

export const ROUTE = 'GET /v1/transactions/:id';

/** Upstream reads of one transaction by id so far, counted by the emulator. */
export async function routeReads(emulatorUrl: string): Promise<number> {
  const stats = (await emulatorAdmin(emulatorUrl)('GET', '/_emulator/stats')) as { routes: Record<string, number> };
  return stats.routes[ROUTE] ?? 0;
}

export const resetRouteReads = (emulatorUrl: string) => emulatorAdmin(emulatorUrl)('DELETE', '/_emulator/stats');

/** A key not proven lately reads for itself (it is served nothing kept): one poll on each gateway proves it. */
export async function proveKey(urls: readonly string[], key: string, make: ReturnType<typeof factories>): Promise<void> {
  const other = await make.transaction({ amount: 1 });
  await Promise.all(urls.map((url) => readStatus(url, key, other.id)));
}

export interface ApprovalRun {
  /** What a poll read once the pollers ran a while, before the upstream changed, and after, before the webhook. */
  keptBeforeChange: string | null;
  keptBeforeWebhook: string | null;
  webhookStatus: number;
  /** A poll started right after the acknowledgement. */
  afterAck: string | null;
  /** Answers of polls started after the acknowledgement that were not APPROVED. */
  late: string[];
  errors: unknown[];
}

/**
 * 20 pollers over `pollUrls` for 2 s; the upstream approves the payment, then its webhook goes to `webhookPort`;
 * `checkUrl` is read between the steps.
 */
export async function approvalUnderPollers(o: {
  pollUrls: readonly string[];
  checkUrl: string;
  webhookPort: number;
  emulatorUrl: string;
  secret: string;
  key: string;
  accountId: number;
  pending: RestObject;
}): Promise<ApprovalRun> {
  const late: string[] = [];
  let ackedAt = Number.POSITIVE_INFINITY;
  const run = pollers({
    url: o.pollUrls,
    key: o.key,
    id: o.pending.id,
    count: 20,
    intervalMs: 50,
    durationMs: 2_000,
    onAnswer: (status, startedAt) => {
      if (startedAt > ackedAt && status !== 'APPROVED') late.push(String(status));
    },
  });
  await new Promise((r) => setTimeout(r, 600));
  const keptBeforeChange = (await readStatus(o.checkUrl, o.key, o.pending.id)).status;
  await setUpstreamStatus(o.emulatorUrl, 'transactions', o.pending.id, 'approved');
  const keptBeforeWebhook = (await readStatus(o.checkUrl, o.key, o.pending.id)).status;
  const body = transactionEvent({ accountId: o.accountId, transaction: { ...o.pending, status: 'approved', updated_at: new Date().toISOString() } });
  const webhook = await postWebhook(o.webhookPort, body, { secret: o.secret });
  ackedAt = Date.now();
  const afterAck = (await readStatus(o.checkUrl, o.key, o.pending.id)).status;
  const done = await run;
  return { keptBeforeChange, keptBeforeWebhook, webhookStatus: webhook.status, afterAck, late, errors: done.errors };
}

/** Five polls one after another on `one`, then five at once on `other`: each must read the upstream. */
export async function pollsOneByOneThenTogether(one: string, other: string, key: string, id: number): Promise<(string | null)[]> {
  const statuses: (string | null)[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await readStatus(one, key, id)).status);
  const together = await Promise.all(Array.from({ length: 5 }, () => readStatus(other, key, id)));
  return [...statuses, ...together.map((t) => t.status)];
}
