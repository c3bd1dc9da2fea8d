/**
 * Real-time: the webhook receiver feeds an event bus, the bus feeds GraphQL
 * subscriptions. Shared state (bus, dedupe and ordering records) is in memory
 * for one instance, or in Redis when REDIS_URL is set.
 */
import type { Logger } from '../logger.js';
import { memoryBus, redisBus, type EventBus } from './bus.js';
import { memoryLedger, redisLedger, type DeliveryLedger } from './ledger.js';

export { createWebhookIntake } from './receiver.js';
export type { RealtimeSource } from './source.js';
export type { PaymentEvent } from './events.js';

const REDIS_PREFIX = 'payments-gateway:';

export interface RealtimeCore {
  bus: EventBus;
  ledger: DeliveryLedger;
  close(): Promise<void>;
}

export async function startRealtime(options: { redisUrl: string | null; logger: Logger }): Promise<RealtimeCore> {
  if (!options.redisUrl) {
    const bus = memoryBus(options.logger);
    return { bus, ledger: memoryLedger(), close: () => bus.close() };
  }
  const bus = await redisBus({ url: options.redisUrl, channel: `${REDIS_PREFIX}events`, logger: options.logger });
  return { bus, ledger: redisLedger(bus.publisher, REDIS_PREFIX), close: () => bus.close() };
}
