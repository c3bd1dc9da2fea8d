/**
 * A throwaway redis-server from PATH on a free port, no persistence. CI
 * installs it (.ci/run); suites that need it use describeWith (test/support/tools.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from '../support/ports.js';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** SIGKILL, as a crash: no goodbye to its clients. */
  kill(): Promise<void>;
}

/** `extra`: more redis-server arguments, later ones winning (e.g. `--appendonly yes --dir <tmp>`); `port` to bring one back where its clients reconnect. */
export async function startRedisServer(extra: string[] = [], port?: number): Promise<RedisServer> {
  // Whether redis-server is there is describeWith's question, asked before any suite runs this.
  port ??= await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 5000;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') {
        client.disconnect();
        break;
      }
    } catch {
      client.disconnect();
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`redis-server did not answer on port ${port}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  return { url, port, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/**
 * A redis-server for the suite this is called in (started before its tests, stopped after them) and a client
 * of it: the getter returns the client once the suite's tests run.
 */
export function redisForSuite(): () => Redis {
  let redis: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });
  return () => client!;
}

/**
 * A redis-server for the suite, and a maker of clients of it (each a connection of its own, as two
 * instances or a subscriber need), all closed after the suite.
 */
export function redisClientsForSuite(): () => Redis {
  let redis: RedisServer | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redis?.stop();
  });
  return () => {
    const c = new Redis(redis!.url, { maxRetriesPerRequest: 0 });
    clients.push(c);
    return c;
  };
}

export interface MasterAndReplica {
  master: RedisServer;
  replica: RedisServer;
  /** A client of the master. */
  redis: Redis;
}

/**
 * A master and one replica following it for the suite, and a client of the master once the replica is in sync;
 * all stopped after the suite. The replica's full sync goes through a file: in a temporary folder, not the tree.
 */
export function masterAndReplicaForSuite(): () => MasterAndReplica {
  let pair: MasterAndReplica | undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-replica-'));
  beforeAll(async () => {
    const master = await startRedisServer(['--dir', dir]);
    const replica = await startRedisServer(['--dir', dir, '--replicaof', '127.0.0.1', String(master.port)]);
    const redis = new Redis(master.url, { maxRetriesPerRequest: 0 });
    pair = { master, replica, redis };
    const deadline = Date.now() + 10_000;
    while (!(await redis.info('replication')).includes('state=online') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }, 20_000);
  afterAll(async () => {
    pair?.redis.disconnect();
    await pair?.replica.stop();
    await pair?.master.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => pair!;
}
