/** Real-time: webhooks feed the event bus, the bus feeds subscriptions; shared state in Redis when REDIS_URL is set. */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { STATE_PREFIX, type RedisLinks, type RedisTarget } from '../redis.js';
import { memoryBus, redisBus, type EventBus } from './bus.js';
import { memoryLedger, redisLedger, type DeliveryLedger } from './ledger.js';
import { redisLease, soleLease, type PollLease } from './poll-lease.js';

export { createWebhookIntake } from './receiver.js';
export type { RealtimeSource } from './source.js';
export type { PaymentEvent } from './events.js';
export { createReconciler, type Reconciler, type ReconcileStats, type SnapshotReader } from './reconciler.js';


export interface RealtimeCore {
  bus: EventBus;
  ledger: DeliveryLedger;
  lease: PollLease;
  close(): Promise<void>;
}

export async function startRealtime(options: { redis: RedisTarget | null; logger: Logger; links: RedisLinks }): Promise<RealtimeCore> {
  if (!options.redis) {
    const bus = memoryBus(options.logger);
    return { bus, ledger: memoryLedger(), lease: soleLease, close: () => bus.close() };
  }
  // v2: Decimal amounts tagged (upstream/codec.ts); kept apart from the plain-JSON channel during a rolling deploy.
  const bus = await redisBus({ target: options.redis, channel: `${STATE_PREFIX}events:v2`, logger: options.logger, links: options.links });
  const lease = redisLease(bus.publisher, STATE_PREFIX, randomUUID());
  return { bus, ledger: redisLedger(bus.publisher, STATE_PREFIX), lease, close: () => bus.close() };
}
