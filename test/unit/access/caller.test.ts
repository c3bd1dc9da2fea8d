/**
 * The caller of an operation is decided once, when its context is made (access/caller.ts through context.ts):
 * a frozen record the context carries, from which the entity cache's refresh, the upstream gate and the client's
 * key id are all taken; news after that moment does not rewrite it.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { admitCaller } from '../../../src/access/caller.js';
import { KeyStatus } from '../../../src/access/key-status.js';
import { createContext, type ContextDeps } from '../../../src/context.js';
import { createLogger } from '../../../src/logger.js';
import { Observability } from '../../../src/observability/index.js';
import type { OperationScope } from '../../../src/upstream/index.js';
import { keyId } from '../../../src/upstream/key-id.js';

const config = loadConfig({ METRICS_ENABLED: 'false', MAX_UPSTREAM_CALLS_PER_OPERATION: '7' });
const caller = { apiKey: 'sk_sandbox_record', callerId: keyId('sk_sandbox_record') };

function contextOf(keys: KeyStatus, accountId?: number) {
  const logger = createLogger('silent');
  const observability = new Observability(config.observability, logger);
  const scopes: OperationScope[] = [];
  const refreshes: boolean[] = [];
  const deps = {
    config,
    logger,
    observability,
    keys,
    upstream: { forKey: (_apiKey: string, scope: OperationScope) => (scopes.push(scope), { currencies: { list: async () => [] } }) },
    entityCache: { scope: (_id: string, options: { refresh: boolean }) => (refreshes.push(options.refresh), {}) },
    idempotencyStore: {},
  } as unknown as ContextDeps;
  const context = createContext(deps, { caller, ...(accountId === undefined ? {} : { accountId }), deadlineAt: Date.now() + 1_000, telemetry: observability.startOperation({ transport: 'http', headers: {} }) });
  return { context, scope: scopes[0]!, refresh: refreshes[0]! };
}

describe('the caller record', () => {
  it('is frozen and says what the key status knew when it was made', () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    const before = admitCaller(keys, caller, config.limits);
    keys.learn(caller.callerId, 'proven');
    const after = admitCaller(keys, caller, config.limits);
    expect(before).toEqual({ callerId: caller.callerId, proven: false, known: false, maxUpstreamCalls: 7, accountId: null });
    expect(after).toEqual({ callerId: caller.callerId, proven: true, known: true, maxUpstreamCalls: 7, accountId: null });
    expect(admitCaller(keys, caller, config.limits, 42)).toMatchObject({ accountId: 42 });
    expect(Object.isFrozen(after)).toBe(true);
    expect(JSON.stringify(after)).not.toContain(caller.apiKey);
  });

  it('is carried in the context, which takes the cache refresh, the gate and the key id from it', async () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    const unproven = contextOf(keys);
    expect(unproven.context.caller).toMatchObject({ proven: false, known: false });
    expect(unproven.refresh).toBe(true);
    keys.learn(caller.callerId, 'proven');
    const proven = contextOf(keys);
    expect(proven.context.caller).toMatchObject({ callerId: caller.callerId, proven: true, known: true });
    expect(proven.refresh).toBe(false);
    expect(proven.scope).toMatchObject({ keyId: caller.callerId });
    // The context's client is the view wrapped in the operation's gate: its calls are the gate's to count.
    await proven.context.api.currencies.list();
    expect(proven.context.upstreamGate?.calls).toBe(1);
    // The client tells the gate a large answer's size through the scope: 3 MiB is two calls more.
    proven.scope.onLargeAnswer?.(3 * 1024 * 1024);
    expect(proven.context.upstreamGate?.calls).toBe(3);
    // A revocation after the operation was admitted does not rewrite its record (the gate heeds it on its own).
    keys.learn(caller.callerId, 'revoked');
    expect(proven.context.caller).toMatchObject({ proven: true });
    expect(unproven.context.caller).not.toBe(proven.context.caller);
  });

  it("holds the account a stream's door looked up, and none for an operation that needed none", () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    expect(contextOf(keys, 42).context.caller).toMatchObject({ accountId: 42 });
    expect(contextOf(keys).context.caller).toMatchObject({ accountId: null });
  });
});
