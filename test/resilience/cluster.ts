/**
 * One emulator and N gateway instances on 127.0.0.1, optionally sharing
 * idempotency records through Redis: the shape of a scaled-out deployment.
 */
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { RedisIdempotencyStore } from '../../src/idempotency/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { emulatorAdmin } from '../support/harness.js';

export interface Cluster {
  emulator: RunningEmulator;
  urls: string[];
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startCluster(options: { instances: number; redisUrl?: string; env?: Record<string, string> }): Promise<Cluster> {
  const emulator = await startEmulator({ port: 0, settleMs: 50 });
  const running: { gateway: RunningGateway; upstream: UpstreamClient; store?: RedisIdempotencyStore }[] = [];
  for (let i = 0; i < options.instances; i++) {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', ...options.env });
    const upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
    const store = options.redisUrl ? new RedisIdempotencyStore(new Redis(options.redisUrl)) : undefined;
    const gateway = await startGateway({ config, upstream, logger: createLogger('silent'), ...(store ? { idempotencyStore: store } : {}) });
    running.push({ gateway, upstream, ...(store ? { store } : {}) });
  }
  return {
    emulator,
    urls: running.map((r) => r.gateway.url),
    admin: emulatorAdmin(emulator.url),
    async stop() {
      for (const r of running) {
        await r.gateway.stop();
        r.upstream.close();
        await r.store?.close();
      }
      await emulator.stop();
    },
  };
}
