/**
 * The start-up check of the idempotency Redis, against real redis-servers: one
 * without persistence (as the test servers run), one with appendonly yes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkIdempotencyRedis, RedisNotPersistentError } from '../../../src/idempotency/index.js';
import type { Logger } from '../../../src/logger.js';
import { describeWith } from '../../support/tools.js';
import { startRedisServer, type RedisServer } from '../../realtime/redis-server.js';

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_obj: object, msg: string) => void lines.push({ level, msg });
  return { lines, logger: { warn: at('warn'), error: at('error') } as unknown as Logger };
}

describeWith('redis-server', 'the idempotency Redis persistence check', () => {
  let volatile: RedisServer;
  let durable: RedisServer;
  const clients: Redis[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'idem-aof-'));
  beforeAll(async () => {
    volatile = await startRedisServer();
    durable = await startRedisServer(['--appendonly', 'yes', '--dir', dir, '--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru']);
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await volatile?.stop();
    await durable?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const client = (server: RedisServer) => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 0 });
    clients.push(c);
    return c;
  };

  it('refuses a Redis with appendonly no when persistence is required', async () => {
    const { logger } = recordingLogger();
    await expect(checkIdempotencyRedis(client(volatile), 'require', logger)).rejects.toThrow(RedisNotPersistentError);
    await expect(checkIdempotencyRedis(client(volatile), 'require', logger)).rejects.toThrow(/appendonly no/);
  });

  it('only logs an error for it in warn mode, and warns of the missing maxmemory', async () => {
    const { lines, logger } = recordingLogger();
    await checkIdempotencyRedis(client(volatile), 'warn', logger);
    expect(lines).toContainEqual({ level: 'error', msg: expect.stringMatching(/append-only persistence off/) });
    expect(lines).toContainEqual({ level: 'warn', msg: expect.stringMatching(/no maxmemory/) });
  });

  it('passes a Redis with appendonly yes, maxmemory and volatile-lru, silently', async () => {
    const { lines, logger } = recordingLogger();
    await checkIdempotencyRedis(client(durable), 'require', logger);
    expect(lines).toEqual([]);
  });

  it('warns of a policy that drops running claims first', async () => {
    const c = client(durable);
    await c.config('SET', 'maxmemory-policy', 'volatile-ttl');
    const { lines, logger } = recordingLogger();
    await checkIdempotencyRedis(c, 'require', logger);
    expect(lines).toContainEqual({ level: 'warn', msg: expect.stringMatching(/maxmemory-policy/) });
  });
});
