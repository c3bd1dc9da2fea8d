/** Real-time: webhooks feed the event log, the log feeds subscriptions; shared in Redis when REDIS_URL is set. */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { STATE_PREFIX, type RedisLinks, type RedisTarget } from '../redis.js';
import { memoryBus, type EventBus } from './bus.js';
import { memoryLedger, type DeliveryLedger } from './ledger.js';
import { ledgerLog, type EventLog } from './log.js';
import { redisLease, soleLease, type PollLease } from './poll-lease.js';
import type { EventLogStats } from './log-reader.js';
import { redisEventLog } from './redis-log.js';

export { createWebhookIntake } from './receiver.js';
export type { RealtimeSource } from './source.js';
export type { PaymentEvent } from './events.js';
export type { DeliveryLedger } from './ledger.js';
export type { DiskLedger } from './disk-ledger.js';
/** The disk ledger loads lmdb's native module: only a gateway without Redis pays its memory. */
export const loadDiskLedger = async () => (await import('./disk-ledger.js')).DiskLedger;
export type { EventLogStats } from './log-reader.js';
export { createReconciler, type Reconciler, type ReconcileStats, type SnapshotReader } from './reconciler.js';

export interface RealtimeCore {
  bus: EventBus;
  /** Where webhooks and re-reads are kept, with their delivery ledger: memory here, or Redis (redis-log.ts). */
  log: EventLog;
  lease: PollLease;
  /** What the Redis log's reader processed; absent without Redis. */
  stats?(): EventLogStats;
  close(): Promise<void>;
}

export interface RealtimeOptions {
  redis: RedisTarget | null;
  logger: Logger;
  links: RedisLinks;
  /** EVENT_LOG_MAX_EVENTS: the Redis log's bound. */
  logMaxEvents: number;
  /** Without Redis: the delivery ledger (on disk, from main.ts); in memory when absent. */
  ledger?: DeliveryLedger | undefined;
}

export async function startRealtime(options: RealtimeOptions): Promise<RealtimeCore> {
  if (!options.redis) {
    const bus = memoryBus(options.logger);
    const ledger = options.ledger ?? memoryLedger();
    return { bus, log: ledgerLog(ledger, bus), lease: soleLease, close: () => bus.close() };
  }
  const log = await redisEventLog({ target: options.redis, prefix: STATE_PREFIX, logger: options.logger, links: options.links, maxEvents: options.logMaxEvents });
  const lease = redisLease(log.redis, STATE_PREFIX, randomUUID());
  return { bus: log, log, lease, stats: () => log.stats(), close: () => log.close() };
}
