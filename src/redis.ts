/**
 * Every Redis connection, each with the options its use needs; keys live under `payments-gateway:` (idempotency
 * records keep their first prefix: docs/architecture.md, Where state lives).
 */
import { createRequire } from 'node:module';
import type { ChainableCommander, Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';
import type { RedisTarget } from './redis-target.js';

export type { RedisTarget } from './redis-target.js';

/** One server, a Sentinel-watched master (both `Redis`) or a cluster: the roles use only what all three share. */
export type RedisClient = Redis | Cluster;

export const STATE_PREFIX = 'payments-gateway:';

export type RedisRole = 'limits' | 'key-news' | 'entity-cache' | 'idempotency' | 'bus-publisher' | 'bus-subscriber';

const OPTIONS: Readonly<Record<RedisRole, RedisOptions>> = {
  // Rate limits fall back to memory while Redis is away: fail fast, queue nothing.
  limits: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
  // A subscribed connection runs no other command.
  'key-news': { lazyConnect: true },
  // A slow cache must cost less than the upstream call it saves: fail fast, read the upstream.
  'entity-cache': { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 500, enableOfflineQueue: false },
  idempotency: { maxRetriesPerRequest: 2 },
  // Appends to the event log: a webhook sender waits on it, so a stalled Redis answers 503 rather than hanging.
  'bus-publisher': { lazyConnect: true, maxRetriesPerRequest: 2, commandTimeout: 2000 },
  'bus-subscriber': { lazyConnect: true },
};

const SLOTS_REFRESH_MS = 2_000;

/** A connection back within this long after dropping is a blip, not an outage: no line. */
const LOSS_SETTLE_MS = 250;

const WHAT_FAILS: Readonly<Record<RedisRole, string>> = {
  limits: 'rate limits counted per instance',
  'key-news': 'key revocations not shared',
  'entity-cache': 'entity cache bypassed (reads go upstream)',
  idempotency: 'keyed mutations answer IDEMPOTENCY_UNAVAILABLE',
  'bus-publisher': 'webhooks refused with 503 (the sender redelivers them) and re-reads paused',
  'bus-subscriber': 'events from other instances not received (read from the event log when it returns)',
};

/** The connections by role: readiness, and one log line when Redis goes and one when all are back. */
export class RedisLinks {
  private readonly connections: { role: RedisRole; redis: RedisClient }[] = [];
  private lost = false;
  private quiet = false;
  private settling: NodeJS.Timeout | null = null;

  constructor(private readonly logger: Logger) {}

  /** `sharded`: this connection takes sharded subscriptions (`SSUBSCRIBE`): on a Cluster, one subscriber per master. */
  open(target: RedisTarget, role: RedisRole, use: { sharded?: boolean } = {}): RedisClient {
    const redis = connect(target, OPTIONS[role], use.sharded === true);
    this.connections.push({ role, redis });
    // Each failed reconnect attempt emits one: the transitions below are what the log says.
    redis.on('error', (error: Error) => this.logger.debug({ err: { message: error.message }, client: role }, 'redis connection error'));
    redis.on('close', () => this.closed());
    redis.on('ready', () => this.ready());
    if (redis.isCluster) {
      // A cluster stays `ready` while one master is away: its node connections tell, until the slots move to a replica.
      redis.on('-node', () => this.closed());
      redis.on('+node', (node: Redis) => node.once('ready', () => this.ready()));
      redis.on('refresh', () => this.ready());
    }
    return redis;
  }

  state(): Partial<Record<RedisRole, boolean>> {
    const state: Partial<Record<RedisRole, boolean>> = {};
    for (const { role, redis } of this.connections) state[role] = (state[role] ?? true) && up(redis);
    return state;
  }

  /** Shutdown: closing on purpose is not an outage. */
  closing(): void {
    this.quiet = true;
    if (this.settling) clearTimeout(this.settling);
  }

  private down(): RedisRole[] {
    return Object.entries(this.state())
      .filter(([, up]) => !up)
      .map(([role]) => role as RedisRole);
  }

  private closed(): void {
    if (this.quiet || this.lost || this.settling) return;
    // The other connections to the same server drop within moments: one line names them all.
    this.settling = setTimeout(() => {
      this.settling = null;
      const down = this.down();
      if (this.quiet || this.lost || down.length === 0) return;
      this.lost = true;
      const degraded = down.map((role) => WHAT_FAILS[role]);
      this.logger.error({ redis: 'down', roles: down }, `redis unreachable: ${degraded.join('; ')}, until it returns`);
    }, LOSS_SETTLE_MS);
    this.settling.unref();
  }

  private ready(): void {
    if (this.quiet || this.down().length > 0) return;
    if (this.settling) clearTimeout(this.settling);
    this.settling = null;
    if (!this.lost) return;
    this.lost = false;
    this.logger.info({ redis: 'up' }, 'redis reachable again: shared state restored');
  }
}

/** A connection that lost its server, is closed, or not yet there; a cluster node not yet used ('wait') is not down. */
const DOWN = new Set(['connecting', 'connect', 'close', 'reconnecting', 'end']);

/**
 * A cluster is up while it is ready and every slot's master is a node it holds a live connection to: ioredis drops a
 * dead master's connection at once, but routes its slots there until a replica has taken them over.
 */
function up(redis: RedisClient): boolean {
  if (redis.status !== 'ready') return false;
  if (!redis.isCluster) return true;
  const cluster = redis as Cluster;
  const live = new Set(cluster.nodes('all').filter((node) => !DOWN.has(node.status)).map((node) => `${node.options.host}:${node.options.port}`));
  const owners = new Set<string>();
  for (const slot of cluster.slots) if (slot?.[0]) owners.add(slot[0]);
  return owners.size > 0 && [...owners].every((owner) => live.has(owner));
}

/**
 * ioredis, required on the first connection: a gateway without a Redis target does not load it (about 0.6 MB of heap).
 * It is CommonJS, so `import` would have loaded the same module.
 */
function ioredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

function connect(target: RedisTarget, role: RedisOptions, sharded: boolean): RedisClient {
  const access: RedisOptions = {
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    connectTimeout: target.connectTimeoutMs,
  };
  if (target.mode === 'url') {
    // Credentials and TLS written in the URL win over REDIS_PASSWORD / REDIS_TLS.
    return new (ioredis().Redis)(target.url, { ...access, ...role });
  }
  if (target.mode === 'sentinel') {
    // failoverDetector: the sentinels' +switch-master moves the connection at once, not at its next error.
    return connectingAgainAfterEnd(new (ioredis().Redis)({
      ...access,
      ...role,
      sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
      name: target.master,
      failoverDetector: true,
      ...(target.password ? { sentinelPassword: target.password } : {}),
      ...(target.tls ? { enableTLSForSentinelMode: true } : {}),
    }));
  }
  const { lazyConnect, enableOfflineQueue, ...perNode } = role;
  const options: ClusterOptions = {
    redisOptions: { ...access, ...perNode },
    // An idle connection would keep routing to a master that failed over (and readiness would say so) until its
    // next command came back MOVED: the slots are read every few seconds instead.
    slotsRefreshInterval: SLOTS_REFRESH_MS,
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(sharded ? { shardedSubscribers: true } : {}),
    // Managed clusters announce node addresses that only resolve as TLS names: keep them as given.
    ...(target.tls ? { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) } : {}),
  };
  return new (ioredis().Cluster)(target.nodes.map(({ host, port }) => ({ host, port })), options);
}

/** How long an ended Sentinel connection waits before it connects again: about a reconnect's first pause. */
const CONNECT_AGAIN_AFTER_END_MS = 100;

/**
 * ioredis (5.x) ends a Sentinel connection for good when the failover detector of its previous connection fires while
 * it is being made again: the detector disconnects the connector mid-connect, which rejects with "Connection is
 * closed." and leaves the client in `end`, every command refused until the process restarts. Ended without our
 * `quit` or `disconnect`, it connects again (docs/deployment.md, Redis Sentinel).
 */
function connectingAgainAfterEnd(redis: Redis): Redis {
  let closing = false;
  const quit = redis.quit.bind(redis);
  const disconnect = redis.disconnect.bind(redis);
  redis.quit = ((...args: Parameters<Redis['quit']>) => {
    closing = true;
    return quit(...args);
  }) as Redis['quit'];
  redis.disconnect = (reconnect = false) => {
    if (!reconnect) closing = true;
    disconnect(reconnect);
  };
  redis.on('end', () => {
    if (closing) return;
    setTimeout(() => {
      if (!closing && redis.status === 'end') redis.connect().catch(() => undefined);
    }, CONNECT_AGAIN_AFTER_END_MS).unref();
  });
  return redis;
}

/** A money write that reached its master but not the replicas asked for: not acted on (docs/deployment.md, Replicas). */
export class ReplicaAckError extends Error {
  constructor(readonly wanted: number, readonly got: number) {
    super(`redis write confirmed by ${got} of ${wanted} replicas`);
    this.name = 'ReplicaAckError';
  }
}

export interface ReplicaAcks {
  replicaAcks: number;
  replicaAckTimeoutMs: number;
}

/** No replica to wait for: the write is confirmed by the master's answer alone. */
export const NO_REPLICA_ACKS: ReplicaAcks = Object.freeze({ replicaAcks: 0, replicaAckTimeoutMs: 0 });

/** A cluster's answer that the command was not run where it was sent: run nowhere, so sending it again is safe. */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;
const REDIRECT_ATTEMPTS = 5;

/**
 * Sends the commands `queue` adds, then WAIT on the same connection (on a cluster: the node of their slot), so an
 * idempotency record or a logged event is on `replicaAcks` replicas before the gateway acts on it: replication is
 * asynchronous, and a master that dies first takes an acknowledged write with it. Resolves to the commands' replies.
 * ioredis follows a cluster's redirections for a pipeline only when the rest of it is read-only, and WAIT is not:
 * a redirected write is sent again here, after the slots are read anew.
 */
export async function writeConfirmed(redis: RedisClient, acks: ReplicaAcks, queue: (pipeline: ChainableCommander) => void): Promise<unknown[]> {
  for (let attempt = 1; ; attempt += 1) {
    const pipeline = redis.pipeline();
    queue(pipeline);
    const commands = pipeline.length;
    if (acks.replicaAcks > 0) pipeline.wait(acks.replicaAcks, acks.replicaAckTimeoutMs);
    const results = (await pipeline.exec()) ?? [];
    const redirected = redis.isCluster && results.some(([error]) => error && REDIRECTED.test(error.message));
    if (redirected && attempt < REDIRECT_ATTEMPTS) {
      await slotsReadAgain(redis as Cluster, attempt * 100);
      continue;
    }
    for (const [error] of results) if (error) throw error;
    if (acks.replicaAcks > 0) {
      const got = Number(results[commands]?.[1] ?? 0);
      if (got < acks.replicaAcks) throw new ReplicaAckError(acks.replicaAcks, got);
    }
    return results.slice(0, commands).map(([, reply]) => reply);
  }
}

/** A failover takes a moment to settle: wait, then ask the cluster where the slots are now. */
async function slotsReadAgain(cluster: Cluster, ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
}
