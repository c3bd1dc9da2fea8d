/**
 * A stream's context (context.ts): before each event its client, loaders, cache scope, idempotency scope and upstream
 * gate are made afresh, so an event's reads are counted by the gate that admits them, as `extensions.cost` and the
 * stream door read them.
 */
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { KeyStatus } from '../../src/access/key-status.js';
import { createStreamContext, type ContextDeps } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { Observability } from '../../src/observability/index.js';
import type { RealtimeSource } from '../../src/realtime/source.js';
import { keyId } from '../../src/upstream/key-id.js';

const config = loadConfig({ METRICS_ENABLED: 'false' });
const caller = { apiKey: 'sk_sandbox_stream', callerId: keyId('sk_sandbox_stream') };

it("makes each event's gate afresh and carries it, so the calls counted are that event's", async () => {
  const logger = createLogger('silent');
  const observability = new Observability(config.observability, logger);
  const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
  keys.learn(caller.callerId, 'proven');
  const deps = {
    config,
    logger,
    observability,
    keys,
    upstream: { forKey: () => ({ currencies: { list: async () => [] } }) },
    entityCache: { scope: () => ({}) },
    idempotencyStore: {},
  } as unknown as ContextDeps;
  let beforeEach = () => undefined as void;
  const input = () => ({ caller, deadlineAt: Date.now() + 1_000, telemetry: observability.startOperation({ transport: 'websocket', headers: {} }) });
  const context = createStreamContext(deps, input, (before) => ((beforeEach = before), {} as RealtimeSource));

  await context.api.currencies.list();
  await context.api.currencies.list();
  expect(context.upstreamGate?.calls).toBe(2);
  const first = context.upstreamGate;

  beforeEach();
  expect(context.upstreamGate).not.toBe(first);
  expect(context.upstreamGate?.calls).toBe(0);
  await context.api.currencies.list();
  expect(context.upstreamGate?.calls).toBe(1);
  expect(first?.calls).toBe(2);
});
