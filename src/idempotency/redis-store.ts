/**
 * Records in Redis, shared by every instance: each state change is one Lua script, so it is atomic across
 * instances. Waiting duplicates poll: a record changes once or twice in its life.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient as Redis } from '../redis.js';
import { DEFAULT_RECORDS_PER_CALLER, peekRecord, type Claim, type IdempotencyStore, type Peek, type RecordBody } from './store.js';

/** A new record past the caller's quota drops that caller's oldest records (KEYS[2], by claim time), never another's. */
const CLAIM = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local rec = cjson.decode(cur)
  if rec.fp ~= ARGV[1] then return {'mismatch'} end
  if rec.s == 'done' then return {'completed', rec.v} end
  if rec.s == 'running' then return {'in_progress'} end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[5]))
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
if over > 0 then
  for _, old in ipairs(redis.call('ZPOPMIN', KEYS[2], over)) do
    if old ~= KEYS[1] and string.sub(old, 1, string.len(ARGV[7])) == ARGV[7] then redis.call('DEL', old) end
  end
end
return {'acquired'}
`;

const FINISH = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local rec = cjson.decode(cur)
  if rec.owner ~= ARGV[1] then return 0 end
elseif ARGV[4] == 'if-present' then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

const POLL_MS = 25;

export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gateway:idempotency:',
    private readonly perCaller = DEFAULT_RECORDS_PER_CALLER,
    private readonly retentionMs = 24 * 60 * 60 * 1000,
  ) {}

  async peek(recordKey: string, fingerprint: string): Promise<Peek> {
    const raw = await this.redis.get(this.prefix + recordKey);
    return peekRecord(raw === null ? undefined : (JSON.parse(raw) as RecordBody), fingerprint);
  }

  async claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim> {
    const owner = randomUUID();
    const body: RecordBody = { s: 'running', fp: fingerprint, owner };
    const reply = (await this.redis.eval(
      CLAIM,
      2,
      this.prefix + recordKey,
      `${this.prefix}caller:${caller}`,
      fingerprint,
      JSON.stringify(body),
      lockMs,
      Date.now(),
      this.retentionMs,
      this.perCaller,
      this.prefix,
    )) as string[];
    switch (reply[0]) {
      case 'acquired':
        return { kind: 'acquired', owner };
      case 'completed':
        return { kind: 'completed', json: reply[1] ?? 'null' };
      case 'in_progress':
        return { kind: 'in_progress' };
      default:
        return { kind: 'mismatch' };
    }
  }

  async complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number): Promise<boolean> {
    const body: RecordBody = { s: 'done', fp: fingerprint, v: json };
    return (await this.redis.eval(FINISH, 1, this.prefix + recordKey, owner, JSON.stringify(body), ttlMs, 'always')) === 1;
  }

  async release(recordKey: string, owner: string, fingerprint: string, ttlMs: number): Promise<void> {
    const body: RecordBody = { s: 'open', fp: fingerprint };
    await this.redis.eval(FINISH, 1, this.prefix + recordKey, owner, JSON.stringify(body), ttlMs, 'if-present');
  }

  changed(_recordKey: string, ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(ms, POLL_MS))));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
