/**
 * Event log bench: what the Redis event log costs in Redis memory and append time.
 * A throwaway redis-server (from PATH) on a free port; N webhook events shaped like the
 * emulator's (a real transaction as the entity, over 20 accounts) appended through the
 * log's own script, as the receiver appends them. Memory is read with INFO memory
 * (used_memory, before and after) and MEMORY USAGE of each partition's stream; what is
 * not the streams is the ledger beside them (one claim per event, a version per object).
 */
import { singleServer } from '../src/redis-target.js';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startEmulator } from '../emulator/index.js';
import { createLogger } from '../src/logger.js';
import { RedisLinks } from '../src/redis.js';
import { LOG_PARTITIONS, logKeys } from '../src/realtime/log-keys.js';
import { redisEventLog } from '../src/realtime/redis-log.js';
import { toPaymentEvent, webhookPayloadSchema } from '../src/realtime/events.js';
import { factories } from '../test/support/factories.js';
import { freePort } from '../test/support/ports.js';
import { codeLine, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const OPTIONS = { events: { type: 'string', default: '10000' }, bound: { type: 'string', default: '100000' } } as const;
const ACCOUNTS = 20;
const PREFIX = 'bench:';

async function redisServer() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: (n) => (n > 100 ? null : 50) });
  // Refused until the server listens: ioredis retries meanwhile.
  client.on('error', () => undefined);
  await client.ping();
  return { url, client, stop: () => (client.disconnect(), child.kill('SIGTERM')) };
}

const usedMemory = async (redis: Redis) => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);

async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const events = Number(values.events);
  const bound = Number(values.bound);
  if (!Number.isInteger(events) || events < 1) throw new Error('--events must be a whole number >= 1');
  if (!Number.isInteger(bound) || bound < 1000) throw new Error('--bound must be a whole number >= 1000');

  // One real transaction from the emulator, as the entity of every event.
  const emulator = await startEmulator({ port: 0 });
  const transaction = await factories(emulator, 'sk_sandbox_event_log_bench').transaction({ description: 'Order 1042' });
  await emulator.stop();

  const redis = await redisServer();
  const logger = createLogger('silent');
  const log = await redisEventLog({ target: singleServer(redis.url), prefix: PREFIX, logger, links: new RedisLinks(logger), maxEvents: bound });
  const before = await usedMemory(redis.client);
  const times: number[] = [];
  let bodyBytes = 0;
  const started = performance.now();
  for (let i = 0; i < events; i += 1) {
    const body = {
      id: 1_000_000 + i,
      name: 'transaction.approved',
      type: 'transaction.approved',
      object: 'transaction',
      entity: { ...transaction, id: 10_000 + i, status: 'approved', updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() },
      object_id: 10_000 + i,
      account_id: 1 + (i % ACCOUNTS),
      created_at: new Date().toISOString(),
    };
    bodyBytes += JSON.stringify(body).length;
    const t0 = performance.now();
    await log.append(toPaymentEvent(webhookPayloadSchema.parse(body)));
    times.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await usedMemory(redis.client);
  const keys = logKeys(PREFIX);
  let streamBytes = 0;
  let kept = 0;
  for (let p = 0; p < LOG_PARTITIONS; p += 1) {
    streamBytes += Number((await redis.client.memory('USAGE', keys.stream(p), 'SAMPLES', '0')) ?? 0);
    kept += await redis.client.xlen(keys.stream(p));
  }
  await log.close();
  redis.stop();

  const per10k = (bytes: number) => `${((bytes / kept) * 10_000 / 1024 / 1024).toFixed(1)} MiB`;
  console.log(`${machineLine()}\n${loadLine()}\n${codeLine()}\n`);
  console.log(
    markdownTable(
      ['events appended', 'kept (bound)', 'webhook body, mean', 'streams (MEMORY USAGE)', 'streams per 10,000', 'used_memory growth per 10,000 (log + ledger)', 'append p50 / p99', 'appends/s (one at a time)'],
      [[String(events), `${kept} (${bound})`, `${Math.round(bodyBytes / events)} B`, `${(streamBytes / 1024 / 1024).toFixed(1)} MiB`, per10k(streamBytes), `${((after - before) / events * 10_000 / 1024 / 1024).toFixed(1)} MiB`, `${ms(percentile(times, 50))} / ${ms(percentile(times, 99))} ms`, String(Math.round(events / seconds))]],
    ),
  );
}

export const eventLogBench: Bench = {
  name: 'event-log',
  summary: 'Redis memory and append time of the event log (a throwaway redis-server from PATH)',
  usage: ['--events <n>   events appended (10000)', '--bound <n>    EVENT_LOG_MAX_EVENTS (100000)'],
  run,
};
