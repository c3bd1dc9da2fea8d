/**
 * Real Redis topologies for the fleet suites, from Debian's redis-server and redis-cli: a Redis Cluster of three
 * masters and three replicas, and one master, one replica and three sentinels. Every process listens on 127.0.0.1,
 * keeps its files in a temporary folder, and is stopped by `stop()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

interface Node {
  port: number;
  child: ChildProcess;
  args: string[];
}

async function ping(port: number, deadlineMs = 8000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch {
      if (Date.now() > deadline) throw new Error(`redis on port ${port} did not answer`);
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      client.disconnect();
    }
  }
}

function spawnNode(args: string[]): ChildProcess {
  return spawn('redis-server', args, { stdio: 'ignore' });
}

async function end(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

async function until(what: string, check: () => Promise<boolean>, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function info(port: number, section: string): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.call(...(section === 'cluster' ? ['cluster', 'info'] : ['info', section]) as [string, ...string[]])) as string;
  } finally {
    client.disconnect();
  }
}

export interface RedisClusterHandle {
  /** `REDIS_CLUSTER_NODES` for a gateway: every master and replica as a seed. */
  seeds: string;
  ports: number[];
  /** The port of the master holding `key`'s slot. */
  masterOf(key: string): Promise<number>;
  /** SIGKILL that master and wait until a replica took its slots over and the cluster is ok again. */
  killMaster(port: number): Promise<{ promoted: number; tookMs: number }>;
  stop(): Promise<void>;
}

/** Three masters, three replicas, append-only on (the money roles need it), failover after 1 s of silence. */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const nodes: Node[] = [];
  for (let i = 0; i < 6; i += 1) {
    const port = await freePort();
    const args = [
      '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout', '1000', '--dir', dir, '--dbfilename', `dump-${port}.rdb`, '--appendonly', 'yes', '--appendfilename', `aof-${port}.aof`,
      '--appenddirname', `aof-${port}`, '--save', '',
    ];
    nodes.push({ port, child: spawnNode(args), args });
  }
  const stop = async () => {
    await Promise.all(nodes.map((n) => end(n.child, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(nodes.map((n) => ping(n.port)));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await until('the cluster to be ok on every node', async () => (await Promise.all(nodes.map((n) => info(n.port, 'cluster')))).every((text) => text.includes('cluster_state:ok')), 20_000);
    // Writes wait for a replica (WAIT): each must have synced with its master first.
    await until('every replica to sync with its master', async () => (await Promise.all(nodes.map((n) => info(n.port, 'replication')))).every((text) => text.includes('role:master') || text.includes('master_link_status:up')), 20_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const alive = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const masterOf = async (key: string) => {
    const node = alive()[0]!;
    const client = new Redis({ port: node.port, host: '127.0.0.1', lazyConnect: true });
    try {
      await client.connect();
      const slot = (await client.call('cluster', 'keyslot', key)) as number;
      const slots = (await client.call('cluster', 'slots')) as [number, number, [string, number, string]][];
      const range = slots.find(([from, to]) => slot >= from && slot <= to)!;
      return range[2][1];
    } finally {
      client.disconnect();
    }
  };
  return {
    seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    ports: nodes.map((n) => n.port),
    masterOf,
    async killMaster(port) {
      const started = Date.now();
      const victim = nodes.find((n) => n.port === port)!;
      const slotOwner = async (at: Node, slot: number) => {
        const client = new Redis({ port: at.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          const slots = (await client.call('cluster', 'slots')) as [number, number, [string, number, string]][];
          return slots.find(([from, to]) => slot >= from && slot <= to)?.[2][1] ?? 0;
        } finally {
          client.disconnect();
        }
      };
      const slots = (await (async () => {
        const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
        try {
          await client.connect();
          return (await client.call('cluster', 'slots')) as [number, number, [string, number, string]][];
        } finally {
          client.disconnect();
        }
      })()).find((range) => range[2][1] === port)!;
      await end(victim.child, 'SIGKILL');
      let promoted = 0;
      // Every other node must name another master for the killed one's slots: only then did a replica take over.
      await until(
        'a replica to take over the killed master and the cluster to be ok',
        async () => {
          const others = alive();
          const texts = await Promise.all(others.map((n) => info(n.port, 'cluster')));
          if (!texts.every((t) => t.includes('cluster_state:ok'))) return false;
          const owners = await Promise.all(others.map((n) => slotOwner(n, slots[0])));
          if (!owners.every((owner) => owner !== port && owner === owners[0])) return false;
          promoted = owners[0]!;
          return true;
        },
        30_000,
      );
      // Back on its port with its nodes.conf: it rejoins as the replica of the node that took its slots.
      victim.child = spawnNode(victim.args);
      await ping(port);
      return { promoted, tookMs: Date.now() - started };
    },
    stop,
  };
}

export interface SentinelHandle {
  sentinels: string;
  master: string;
  masterPort(): Promise<number>;
  /** SIGKILL the current master and wait until the sentinels name the replica as master. */
  killMaster(): Promise<{ promoted: number; tookMs: number }>;
  stop(): Promise<void>;
}

/** One master, one replica, three sentinels (quorum 2), failover after 1 s of silence. */
export async function startRedisSentinel(): Promise<SentinelHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const children: ChildProcess[] = [];
  const name = 'gatewaymaster';
  const stop = async () => {
    await Promise.all(children.map((c) => end(c, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  const argsOf = new Map<number, string[]>();
  const data = async (role: string, extra: string[]) => {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', `${role}.rdb`, '--appendonly', 'yes', '--appendfilename', `${role}.aof`, '--appenddirname', `aof-${role}`, '--save', '', ...extra];
    argsOf.set(port, args);
    const child = spawnNode(args);
    children.push(child);
    await ping(port);
    return { port, child };
  };
  try {
    const master = await data('master', []);
    const replica = await data('replica', ['--replicaof', '127.0.0.1', String(master.port)]);
    await until('the replica to sync', async () => (await info(replica.port, 'replication')).includes('master_link_status:up'), 15_000);
    const sentinelPorts: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const port = await freePort();
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      children.push(spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
      sentinelPorts.push(port);
    }
    await Promise.all(sentinelPorts.map((p) => ping(p)));
    const sentinels = sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',');
    const askMaster = async (): Promise<number> => {
      const client = new Redis({ port: sentinelPorts[0]!, host: '127.0.0.1', lazyConnect: true });
      try {
        await client.connect();
        const [, port] = (await client.call('sentinel', 'get-master-addr-by-name', name)) as [string, string];
        return Number(port);
      } finally {
        client.disconnect();
      }
    };
    await until('the sentinels to see each other and the replica', async () => (await info(sentinelPorts[0]!, 'sentinel')).includes('sentinels=3') && (await info(sentinelPorts[0]!, 'sentinel')).includes('slaves=1'), 20_000);
    const ports = new Map([[master.port, master.child], [replica.port, replica.child]]);
    return {
      sentinels,
      master: name,
      masterPort: askMaster,
      async killMaster() {
        const started = Date.now();
        const before = await askMaster();
        await end(ports.get(before)!, 'SIGKILL');
        let promoted = 0;
        await until('the sentinels to promote the replica', async () => {
          promoted = await askMaster();
          return promoted !== before && (await info(promoted, 'replication')).includes('role:master');
        }, 30_000);
        // Back on its port: the sentinels turn the old master into the new one's replica.
        const child = spawnNode(argsOf.get(before)!);
        children.push(child);
        ports.set(before, child);
        await ping(before);
        return { promoted, tookMs: Date.now() - started };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
