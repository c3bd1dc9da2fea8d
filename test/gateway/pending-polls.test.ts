/**
 * Pending payments under webhook control, one instance (memory store), counted at the emulator: 20 pollers
 * cost one upstream read per object per PENDING_OBJECT_MAX_AGE_MS plus the reconciler's, concurrent polls
 * make one read, an approval by webhook is in the first poll after the acknowledgement, a lost webhook is
 * caught by the max age or by a re-read, a mutation evicts, and without WEBHOOK_SECRETS every poll reads.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';
import { eventually, setUpstreamStatus } from '../realtime/support.js';
import { accountIdOf } from './cache-support.js';
import { approvalUnderPollers, pollsOneByOneThenTogether, proveKey, ROUTE } from './pending-polls-support.js';
import { pollFor, pollers, readStatus } from '../support/polling.js';

const SECRET = 'whsec_pending_polls_tests';
const MAX_AGE_MS = 1_000;

describe('pending payments polled, under webhook control, one instance', () => {
  let stack: Stack;
  let noSecrets: GatewayOnly;
  let webhookOnly: GatewayOnly;
  let reconciled: GatewayOnly;
  let byReread: GatewayOnly;
  const key = newKey('polls');
  let make: ReturnType<typeof factories>;
  let accountId: number;

  beforeAll(async () => {
    // Background re-reads off where upstream reads are counted exactly: the emulator counts by route, not by object.
    const env = { WEBHOOK_SECRETS: SECRET, PENDING_OBJECT_MAX_AGE_MS: String(MAX_AGE_MS), RATE_LIMIT_PER_MINUTE: '0', RECONCILE_READS_PER_SECOND: '0' };
    stack = await startStack({ env });
    const over = (more: Record<string, string>) => startGatewayOver(stack.emulator.url, { ...env, ...more });
    // No webhook secret: nothing evicts a pending object, so none is kept.
    noSecrets = await over({ WEBHOOK_SECRETS: '' });
    // A max age far past the test and no re-reads: only the webhook can show the change.
    webhookOnly = await over({ PENDING_OBJECT_MAX_AGE_MS: '60000' });
    reconciled = await over({ RECONCILE_READS_PER_SECOND: '20' });
    // A max age far past the test: only a background re-read can show a change no webhook announced.
    byReread = await over({ PENDING_OBJECT_MAX_AGE_MS: '60000', RECONCILE_READS_PER_SECOND: '20', RECONCILE_INITIAL_MS: '200', RECONCILE_MAX_MS: '400', RECONCILE_JITTER: '0' });
    make = factories(stack.emulator, key);
    accountId = await accountIdOf(make);
  }, 30_000);
  beforeEach(() => stack.resetCounts());
  afterAll(async () => {
    await Promise.all([noSecrets?.stop(), webhookOnly?.stop(), reconciled?.stop(), byReread?.stop()]);
    await stack?.stop();
  });

  const reconcilerReads = async (url: string) => {
    const health = (await (await fetch(url.replace(/\/graphql$/, '/healthz'))).json()) as { reconcile: { reads: number } };
    return health.reconcile.reads;
  };

  it('makes one upstream read for 20 concurrent polls of an object not yet kept', async () => {
    const pending = await make.transaction({ amount: 502 });
    // Where a kept copy outlives the test: twenty requests on a loaded machine can take longer than
    // MAX_AGE_MS to arrive, and a copy that lapsed meanwhile is read again, which is not what this counts.
    const { url } = webhookOnly.gateway;
    await proveKey([url], key, make);
    await stack.resetCounts();
    const answers = await Promise.all(Array.from({ length: 20 }, () => readStatus(url, key, pending.id)));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 'PENDING'));
    expect(await stack.upstreamCalls(ROUTE)).toBe(1);
  });

  it("never serves one key's kept pending object to another key, nor joins its read", async () => {
    const strangers = [newKey('stranger'), newKey('stranger')];
    // Proven (an answer that is not 401 proves a key), so they may join reads in flight: only their own.
    await Promise.all(strangers.map((k) => readStatus(stack.gateway.url, k, 1)));
    const pending = await make.transaction({ amount: 507 });
    await stack.resetCounts();
    const [own, ...theirs] = await Promise.all([key, ...strangers, ...strangers].map((k) => readStatus(stack.gateway.url, k, pending.id)));
    expect(own!.status).toBe('PENDING');
    // Their accounts have no such transaction: the upstream says so, not the key's copy.
    expect(theirs.map((s) => s.found)).toEqual([false, false, false, false]);
    await readStatus(stack.gateway.url, key, pending.id);
    const later = await Promise.all(strangers.map((k) => readStatus(stack.gateway.url, k, pending.id)));
    expect(later.map((s) => s.found)).toEqual([false, false]);
  });

  it('reads a pending object upstream on every poll when no WEBHOOK_SECRETS are set', async () => {
    const pending: RestObject = await make.transaction({ amount: 508 });
    await stack.resetCounts();
    expect(await pollsOneByOneThenTogether(noSecrets.gateway.url, noSecrets.gateway.url, key, pending.id)).toEqual(Array.from({ length: 10 }, () => 'PENDING'));
    expect(await stack.upstreamCalls(ROUTE)).toBe(10);
    // A final one is still kept there.
    await setUpstreamStatus(stack.emulator.url, 'transactions', pending.id, 'canceled');
    await eventually(() => readStatus(noSecrets.gateway.url, key, pending.id), (a) => a.status === 'CANCELED');
    await stack.resetCounts();
    await readStatus(noSecrets.gateway.url, key, pending.id);
    expect(await stack.upstreamCalls(ROUTE)).toBe(0);
  });

  it('evicts what a mutation through the gateway changed', async () => {
    const pending = await make.transaction({ amount: 506 });
    expect((await readStatus(stack.gateway.url, key, pending.id)).description).not.toBe('changed by a poller');
    const update = await stack.gql<{ updateTransaction: { userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "changed by a poller" }) { userErrors { message } } }',
      { id: String(pending.id) },
      key,
    );
    expect(update.data!.updateTransaction.userErrors).toEqual([]);
    expect((await readStatus(stack.gateway.url, key, pending.id)).description).toBe('changed by a poller');
  });

  it('shows an approval whose webhook was lost within the max age', async () => {
    const pending = await make.transaction({ amount: 504 });
    expect((await readStatus(stack.gateway.url, key, pending.id)).status).toBe('PENDING');
    await setUpstreamStatus(stack.emulator.url, 'transactions', pending.id, 'approved');
    const approvedAt = Date.now();
    const seenAt = await pollFor(stack.gateway.url, key, pending.id, 'APPROVED', { intervalMs: 100, timeoutMs: 10_000 });
    // The bound plus one poll interval and a slow machine's margin.
    expect(seenAt - approvedAt).toBeLessThanOrEqual(MAX_AGE_MS + 100 + 1_000);
  });

  it('shows an approval announced by webhook to every poll that starts after the acknowledgement', async () => {
    const pending = await make.transaction({ amount: 503 });
    const gateway = webhookOnly.gateway;
    const run = await approvalUnderPollers({ pollUrls: [gateway.url], checkUrl: gateway.url, webhookPort: gateway.port, emulatorUrl: stack.emulator.url, secret: SECRET, key, accountId, pending });
    // The kept copy until the webhook: the upstream's change is not known before.
    expect([run.keptBeforeChange, run.keptBeforeWebhook, run.webhookStatus, run.afterAck]).toEqual(['PENDING', 'PENDING', 200, 'APPROVED']);
    expect(run.errors).toEqual([]);
    expect(run.late).toEqual([]);
  });

  it('answers 20 pollers with one upstream read per max age, plus the reconciler\'s re-reads', async () => {
    const pending = await make.transaction({ amount: 501 });
    await stack.resetCounts();
    const rereadsBefore = await reconcilerReads(reconciled.gateway.url);
    const started = Date.now();
    const run = await pollers({ url: reconciled.gateway.url, key, id: pending.id, count: 20, intervalMs: 100, durationMs: 3_000 });
    const elapsed = Date.now() - started;
    expect(run.errors).toEqual([]);
    expect(run.statuses).toEqual(new Set(['PENDING']));
    expect(run.polls).toBeGreaterThan(60);
    const rereads = (await reconcilerReads(reconciled.gateway.url)) - rereadsBefore;
    // Each max age begun in the run is one read at most; the rest are the reconciler's.
    expect(await stack.upstreamCalls(ROUTE)).toBeLessThanOrEqual(Math.ceil(elapsed / MAX_AGE_MS) + 1 + rereads);
    // A router keeps no pending answer: only the gateway, which hears the webhook, does.
    expect(run.cacheControl).toEqual(new Set(['private, no-store']));
  });

  it('evicts at a background re-read that finds the object changed, long before the max age', async () => {
    const pending = await make.transaction({ amount: 505 });
    expect((await readStatus(byReread.gateway.url, key, pending.id)).status).toBe('PENDING');
    await setUpstreamStatus(stack.emulator.url, 'transactions', pending.id, 'approved');
    const approvedAt = Date.now();
    const seenAt = await pollFor(byReread.gateway.url, key, pending.id, 'APPROVED', { intervalMs: 100, timeoutMs: 8_000 });
    expect(seenAt - approvedAt).toBeLessThan(8_000);
    expect(await reconcilerReads(byReread.gateway.url)).toBeGreaterThan(0);
  });
});
