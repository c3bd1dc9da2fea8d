/**
 * Where the shared state lives: one server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or a Sentinel-watched
 * master (REDIS_SENTINELS + REDIS_SENTINEL_MASTER). Parsed here, opened by RedisLinks (redis.ts); the modes and their
 * trade-offs are in docs/deployment.md, Three ways to reach Redis.
 */

export interface HostPort {
  host: string;
  port: number;
}

/** What applies to every mode: credentials, TLS, time-outs and the replica confirmation money writes wait for. */
export interface RedisAccess {
  username: string | null;
  password: string | null;
  tls: boolean;
  connectTimeoutMs: number;
  /** Replicas that must hold an idempotency record or a logged event before the gateway acts on it (`WAIT`); 0: none. */
  replicaAcks: number;
  replicaAckTimeoutMs: number;
}

export type RedisTarget =
  | ({ mode: 'url'; url: string } & RedisAccess)
  | ({ mode: 'cluster'; nodes: readonly HostPort[] } & RedisAccess)
  | ({ mode: 'sentinel'; sentinels: readonly HostPort[]; master: string } & RedisAccess);

export interface RedisEnv {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: string | undefined;
  REDIS_SENTINELS?: string | undefined;
  REDIS_SENTINEL_MASTER?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS?: boolean | undefined;
  REDIS_CONNECT_TIMEOUT_MS?: number | undefined;
  REDIS_REPLICA_ACKS?: number | undefined;
  REDIS_REPLICA_ACK_TIMEOUT_MS?: number | undefined;
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** `host:port` seeds, or the first entry that is not one (for the message). */
export function parseSeeds(value: string): { ok: true; seeds: HostPort[] } | { ok: false; bad: string } {
  const seeds: HostPort[] = [];
  for (const raw of value.split(',').map((v) => v.trim())) {
    const match = HOST_PORT.exec(raw);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65_535) return { ok: false, bad: raw };
    seeds.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return { ok: true, seeds };
}

/** Each problem as `VARIABLE: what is wrong`, so the configuration's error lists them with the rest. */
export function redisTargetProblems(env: RedisEnv): string[] {
  const problems: string[] = [];
  const modes = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name]);
  if (modes.length > 1) problems.push(`${modes.join(', ')}: set one of them, not ${modes.length} (one server, a cluster or Sentinel)`);
  for (const name of ['REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const) {
    const value = env[name];
    if (!value) continue;
    const parsed = parseSeeds(value);
    if (!parsed.ok) problems.push(`${name}: "${parsed.bad}" is not host:port (expected comma-separated host:port entries, e.g. 10.0.0.1:6379,10.0.0.2:6379)`);
  }
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_MASTER) problems.push('REDIS_SENTINEL_MASTER: is required with REDIS_SENTINELS (the master name the sentinels monitor, e.g. mymaster)');
  if (env.REDIS_SENTINEL_MASTER && !env.REDIS_SENTINELS) problems.push('REDIS_SENTINEL_MASTER: is set without REDIS_SENTINELS (the sentinels to ask, host:port)');
  return problems;
}

/** Null: no shared state (one instance). Call after redisTargetProblems found none. */
export function redisTarget(env: RedisEnv): RedisTarget | null {
  const access: RedisAccess = {
    username: env.REDIS_USERNAME || null,
    password: env.REDIS_PASSWORD || null,
    tls: env.REDIS_TLS ?? false,
    connectTimeoutMs: env.REDIS_CONNECT_TIMEOUT_MS ?? 10_000,
    // One server has no replica to wait for; a cluster or Sentinel has at least one by construction.
    replicaAcks: env.REDIS_REPLICA_ACKS ?? (env.REDIS_URL || !(env.REDIS_CLUSTER_NODES || env.REDIS_SENTINELS) ? 0 : 1),
    replicaAckTimeoutMs: env.REDIS_REPLICA_ACK_TIMEOUT_MS ?? 500,
  };
  const seeds = (value: string) => Object.freeze((parseSeeds(value) as { seeds: HostPort[] }).seeds);
  if (env.REDIS_URL) return Object.freeze({ mode: 'url', url: env.REDIS_URL, ...access, tls: access.tls || env.REDIS_URL.startsWith('rediss:') });
  if (env.REDIS_CLUSTER_NODES) return Object.freeze({ mode: 'cluster', nodes: seeds(env.REDIS_CLUSTER_NODES), ...access });
  if (env.REDIS_SENTINELS && env.REDIS_SENTINEL_MASTER) {
    return Object.freeze({ mode: 'sentinel', sentinels: seeds(env.REDIS_SENTINELS), master: env.REDIS_SENTINEL_MASTER, ...access });
  }
  return null;
}

/** For logs and /readyz: where, never the password. */
export function describeTarget(target: RedisTarget): string {
  if (target.mode === 'cluster') return `cluster ${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  if (target.mode === 'sentinel') return `sentinel ${target.master} via ${target.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}`;
  const url = new URL(target.url);
  url.password = '';
  url.username = '';
  return url.href;
}

/** One server at `url` with the defaults: what tests and benches open. */
export function singleServer(url: string): RedisTarget {
  return redisTarget({ REDIS_URL: url })!;
}
