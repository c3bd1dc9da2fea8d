/**
 * Replica acks bench: what confirming money writes on a replica (REDIS_REPLICA_ACKS, a WAIT after each write) costs.
 * A throwaway master and replica (redis-server from PATH) on free ports; a keyed mutation's two record writes (claim,
 * then result) and one event log append, each timed with acks 0 and 1, alternating in rounds in one run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../src/idempotency/redis-store.js';
import { createLogger } from '../src/logger.js';
import { RedisLinks } from '../src/redis.js';
import { redisTarget } from '../src/redis-target.js';
import { redisEventLog, type RedisEventLog } from '../src/realtime/redis-log.js';
import { freePort } from '../test/support/ports.js';
import { codeLine, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const OPTIONS = { ops: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '4' } } as const;

async function server(dir: string, extra: string[]) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], { stdio: 'ignore' });
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: null, retryStrategy: (n) => (n > 100 ? null : 50) });
  client.on('error', () => undefined);
  await client.ping();
  return { port, client, stop: () => (client.disconnect(), child.kill('SIGTERM')) };
}

interface Lane {
  acks: number;
  store: RedisIdempotencyStore;
  log: RedisEventLog;
  record: number[];
  append: number[];
}

async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const ops = Number(values.ops);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(ops) || ops < 1) throw new Error('--ops must be a whole number >= 1');
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a whole number >= 1');

  const dir = mkdtempSync(path.join(tmpdir(), 'bench-replica-acks-'));
  const master = await server(dir, []);
  const replica = await server(dir, ['--replicaof', '127.0.0.1', String(master.port)]);
  while (!(await master.client.info('replication')).includes('state=online')) await new Promise((r) => setTimeout(r, 50));
  const logger = createLogger('silent');
  const lanes: Lane[] = [];
  for (const acks of [0, 1]) {
    const target = { ...redisTarget({ REDIS_URL: `redis://127.0.0.1:${master.port}` })!, replicaAcks: acks, replicaAckTimeoutMs: 1000 };
    const redis = new Redis(master.port, '127.0.0.1');
    const store = new RedisIdempotencyStore(redis, `bench-${acks}:`, ops * rounds + 1, 60_000, undefined, { acks: target });
    const log = await redisEventLog({ target, prefix: `bench-log-${acks}:`, logger, links: new RedisLinks(logger), maxEvents: 100_000 });
    lanes.push({ acks, store, log, record: [], append: [] });
  }
  let n = 0;
  for (let round = 0; round < rounds; round += 1) {
    for (const lane of round % 2 === 0 ? lanes : [...lanes].reverse()) {
      for (let i = 0; i < ops; i += 1) {
        n += 1;
        const t0 = performance.now();
        const claim = await lane.store.claim(`k${n}`, 'fp', 60_000, 'caller');
        if (claim.kind !== 'acquired') throw new Error(`claim: ${claim.kind}`);
        await lane.store.complete(`k${n}`, claim.owner, 'fp', '{"ok":true}', 60_000, 'caller');
        const t1 = performance.now();
        await lane.log.append({ id: n, type: 'transaction.approved', object: 'transaction', objectId: n, accountId: 1 + (n % 20), entity: { id: n, status: 'approved' }, createdAt: new Date().toISOString() });
        lane.record.push(t1 - t0);
        lane.append.push(performance.now() - t1);
      }
    }
  }
  for (const lane of lanes) await Promise.all([lane.log.close(), lane.store.close()]);
  replica.stop();
  master.stop();
  rmSync(dir, { recursive: true, force: true });

  console.log(`${machineLine()}\n${loadLine()}\n${codeLine()}\n`);
  console.log(
    markdownTable(
      ['REDIS_REPLICA_ACKS', 'keyed mutation\'s record writes (claim + result) p50 / p99', 'event log append p50 / p99', 'samples'],
      lanes.map((lane) => [String(lane.acks), `${ms(percentile(lane.record, 50))} / ${ms(percentile(lane.record, 99))} ms`, `${ms(percentile(lane.append, 50))} / ${ms(percentile(lane.append, 99))} ms`, String(lane.record.length)]),
    ),
  );
}

export const replicaAcksBench: Bench = {
  name: 'replica-acks',
  summary: 'what waiting for a replica (REDIS_REPLICA_ACKS) adds to idempotency record writes and event log appends (throwaway master and replica from PATH)',
  usage: ['--ops <n>      keyed mutations and appends per lane and round (2000)', '--rounds <n>   rounds, the lanes alternating (4)'],
  run,
};
