/**
 * Records in Redis, shared by every instance: each state change is one Lua script, so it is atomic across
 * instances. Waiting duplicates poll: a record changes once or twice in its life.
 */
import { randomUUID } from 'node:crypto';
import { NO_REPLICA_ACKS, ReplicaAckError, writeConfirmed, type RedisClient as Redis, type ReplicaAcks } from '../redis.js';
import type { RedisContinuity } from './redis-continuity.js';
import { idempotencyKeys, type IdempotencyKeys } from './redis-keys.js';
import { DEFAULT_RECORDS_PER_CALLER, peekRecord, type Claim, type IdempotencyStore, type Peek, type RecordBody, type StoreCondition } from './store.js';

/** The continuity marker first (KEYS[3]); then a caller at its quota (KEYS[2], scored by expiry) is refused, never trimmed. */
const CLAIM = `
local m = redis.call('HMGET', KEYS[3], 'epoch', 'seq')
if ARGV[8] ~= '*' and (m[1] ~= ARGV[8] or tonumber(m[2] or '0') < tonumber(ARGV[9])) then
  return {'lost', m[1] or '', m[2] or '0'}
end
local cur = redis.call('GET', KEYS[1])
if cur then
  local rec = cjson.decode(cur)
  if rec.fp ~= ARGV[1] then return {'mismatch'} end
  if rec.s == 'done' then return {'completed', rec.v} end
  if rec.s == 'running' then return {'in_progress'} end
end
if ARGV[7] == 'refuse' then return {'full'} end
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[2], KEYS[1]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return {'full'} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
return {'acquired', m[1] or '', tostring(seq)}
`;

/** Written whatever the marker says (the side effect happened); the marker as found goes back to be checked. */
const FINISH = `
local m = redis.call('HMGET', KEYS[3], 'epoch')
local cur = redis.call('GET', KEYS[1])
if cur then
  local rec = cjson.decode(cur)
  if rec.owner ~= ARGV[1] then return {0} end
elseif ARGV[4] == 'if-present' then
  return {0}
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[5]) + tonumber(ARGV[3]), KEYS[1])
local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
return {1, m[1] or '', tostring(seq)}
`;

const POLL_MS = 25;
/** How long a result is sent again while Redis fails over, and how often. */
const RESULT_RETRY_MS = 15_000;
const RESULT_RETRY_PAUSE_MS = 250;

export interface RedisStoreLayout {
  /** Callers' partitions, each with its hash tag and marker (a cluster); absent: one server's layout. */
  partitions?: number;
  /** Claims and results wait for this many replicas before the gateway acts on them (`REDIS_REPLICA_ACKS`). */
  acks?: ReplicaAcks;
}

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly keys: IdempotencyKeys;
  private readonly acks: ReplicaAcks;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gateway:idempotency:',
    private readonly perCaller = DEFAULT_RECORDS_PER_CALLER,
    private readonly retentionMs = 24 * 60 * 60 * 1000,
    private readonly continuity?: RedisContinuity,
    layout: RedisStoreLayout = {},
  ) {
    this.keys = idempotencyKeys(prefix, layout.partitions ?? null);
    this.acks = layout.acks ?? NO_REPLICA_ACKS;
    if (continuity && continuity.keys.join() !== this.keys.markers.join()) throw new Error('the continuity markers are not the store\'s');
  }

  async peek(recordKey: string, fingerprint: string, caller = ''): Promise<Peek> {
    const raw = await this.redis.get(this.keys.record(caller, recordKey));
    return peekRecord(raw === null ? undefined : (JSON.parse(raw) as RecordBody), fingerprint);
  }

  async claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim> {
    const owner = randomUUID();
    const body: RecordBody = { s: 'running', fp: fingerprint, owner };
    const marker = this.keys.partitionOf(caller);
    const [epoch, seq] = this.continuity?.expected(marker) ?? ['*', '0'];
    const sentIn = this.continuity?.generation(marker);
    const args = [fingerprint, JSON.stringify(body), lockMs, Date.now(), this.retentionMs, this.perCaller, this.continuity?.refusing ? 'refuse' : 'take', epoch, seq];
    // Confirmed on the replicas before the upstream is called: a claim only the dead master had would let a retry act again.
    const [reply] = (await writeConfirmed(this.redis, this.acks, (p) => p.eval(CLAIM, 3, this.keys.record(caller, recordKey), this.keys.callerIndex(caller), this.keys.markers[marker]!, ...args)).catch(async (error: unknown) => {
      // Refused, so nothing is sent: open the claim again where it landed, or a retry would wait for its lock to expire.
      if (error instanceof ReplicaAckError) await this.finish(recordKey, owner, { s: 'open', fp: fingerprint }, lockMs, caller, 'if-present', NO_REPLICA_ACKS).catch(() => undefined);
      throw error;
    })) as [string[]];
    switch (reply[0]) {
      case 'acquired':
        this.continuity?.saw(reply[1]!, Number(reply[2]), marker, Number(seq), sentIn);
        return { kind: 'acquired', owner };
      case 'completed':
        return { kind: 'completed', json: reply[1] ?? 'null' };
      case 'in_progress':
        return { kind: 'in_progress' };
      case 'mismatch':
        return { kind: 'mismatch' };
      case 'lost':
        // Records may be gone: nothing is taken until the quarantine ends.
        this.continuity?.saw(reply[1]!, Number(reply[2]), marker, Number(seq), sentIn);
        return { kind: 'full' };
      default:
        return { kind: 'full' };
    }
  }
  async complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean> {
    const body: RecordBody = { s: 'done', fp: fingerprint, v: json };
    // The payment happened: a result lost with a failing master would let a retry, once the lock expires, pay again.
    // So it is sent again through a failover (a replica promoted, then one to confirm on) before giving up.
    const until = Date.now() + RESULT_RETRY_MS;
    for (;;) {
      try {
        return await this.finish(recordKey, owner, body, ttlMs, caller, 'always');
      } catch (error) {
        if (Date.now() + RESULT_RETRY_PAUSE_MS > until) throw error;
        await new Promise((resolve) => setTimeout(resolve, RESULT_RETRY_PAUSE_MS));
      }
    }
  }

  async release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void> {
    const body: RecordBody = { s: 'open', fp: fingerprint };
    await this.finish(recordKey, owner, body, ttlMs, caller, 'if-present');
  }

  changed(_recordKey: string, ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(ms, POLL_MS))));
  }

  condition(): StoreCondition | undefined {
    return this.continuity?.condition();
  }

  async close(): Promise<void> {
    this.continuity?.stop();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async finish(recordKey: string, owner: string, body: RecordBody, ttlMs: number, caller: string, mode: 'always' | 'if-present', acks = this.acks): Promise<boolean> {
    const marker = this.keys.partitionOf(caller);
    const sentAt = this.continuity?.known(marker);
    const sentIn = this.continuity?.generation(marker);
    const [reply] = (await writeConfirmed(this.redis, acks, (p) =>
      p.eval(FINISH, 3, this.keys.record(caller, recordKey), this.keys.callerIndex(caller), this.keys.markers[marker]!, owner, JSON.stringify(body), ttlMs, mode, Date.now()),
    )) as [[number, string?, string?]];
    if (reply[0] !== 1) return false;
    // A sequence no replica confirmed is not one to hold the Redis to after a failover.
    if (acks === this.acks) this.continuity?.saw(reply[1]!, Number(reply[2]), marker, sentAt, sentIn);
    return true;
  }
}
