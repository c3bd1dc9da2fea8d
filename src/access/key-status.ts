/**
 * What the gateway knows of each API key, by its hash: revoked (a 401 lately) or proven (accepted within
 * `revalidateMs`), shared between instances; bounded LRUs, so invented keys evict only their own kind.
 * See docs/architecture.md, "Where a key's revocation is decided".
 */
import { LRUCache } from 'lru-cache';
import type { RedisClient as Redis } from '../redis.js';
import type { Logger } from '../logger.js';
import { UpstreamAuthenticationError, UpstreamError, UpstreamPermissionError, type CallOutcome } from '../upstream/index.js';

/** How long a key the upstream accepted counts as known for pacing: its calls go out in parallel, its rate is its own. */
const KNOWN_TTL_MS = 10 * 60_000;

/** A refusal of the request itself (400, 404, 409, 422...) proves the key; 408, 429 and 5xx may come from a proxy before the key check. */
export function refusalProvesKey(error: unknown): boolean {
  if (!(error instanceof UpstreamError) || error.statusCode === undefined) return false;
  const status = error.statusCode;
  return status >= 400 && status < 500 && ![401, 403, 407, 408, 429].includes(status);
}

/** `refused` concerns this operation only: a 403 may concern one route. */
export type KeyVerdict = 'revoked' | 'refused' | 'proven' | 'unsaid';

export function keyVerdict(outcome: CallOutcome): KeyVerdict {
  if (outcome.ok) return 'proven';
  if (outcome.error instanceof UpstreamAuthenticationError) return 'revoked';
  if (outcome.error instanceof UpstreamPermissionError) return 'refused';
  return refusalProvesKey(outcome.error) ? 'proven' : 'unsaid';
}

export type KeyNews = 'revoked' | 'proven';

export interface RevocationChannel {
  publish(news: KeyNews, callerId: string): Promise<void>;
  listen(onNews: (news: KeyNews, callerId: string) => void): void;
  close(): Promise<void>;
}

export const localRevocations: RevocationChannel = { publish: async () => {}, listen: () => {}, close: async () => {} };

/** Over Redis pub/sub: `subscriber` is a connection of its own (a subscribed connection runs no other command). */
export async function redisRevocations(publisher: Redis, subscriber: Redis, channel: string, logger: Logger): Promise<RevocationChannel> {
  const listeners: ((news: KeyNews, callerId: string) => void)[] = [];
  subscriber.on('message', (ch: string, message: string) => {
    const parsed = ch === channel ? /^(revoked|proven):([0-9a-f]{32})$/.exec(message) : null;
    if (!parsed) return;
    for (const listener of listeners) listener(parsed[1] as KeyNews, parsed[2]!);
  });
  await subscriber.subscribe(channel);
  return {
    async publish(news, callerId) {
      // A lost message is bounded by the revalidation interval: the other instances find out by asking.
      await publisher.publish(channel, `${news}:${callerId}`).catch((error: Error) => logger.warn({ err: { message: error.message } }, 'key status not shared: redis unreachable'));
    },
    listen: (onNews) => void listeners.push(onNews),
    // QUIT waits for Redis: while it is away, drop the connection instead of holding the shutdown.
    close: async () => void (subscriber.status === 'ready' ? await subscriber.quit().catch(() => undefined) : subscriber.disconnect()),
  };
}

export interface KeyStatusOptions {
  /** How long a refused key is refused without asking the upstream again (REJECTED_KEY_TTL_MS; 0: not remembered). */
  rejectedTtlMs: number;
  revalidateMs: number;
  channel?: RevocationChannel;
  max?: number;
}

export class KeyStatus {
  private readonly refused: LRUCache<string, true> | null;
  private readonly proven: LRUCache<string, true>;
  private readonly known: LRUCache<string, true>;
  /** Revoked within the interval: no answer proves the key again (a slow call accepted before the 401 may end after it). */
  private readonly revokedLately: LRUCache<string, true>;
  private readonly listeners = new Set<(callerId: string) => void>();
  private readonly channel: RevocationChannel;

  constructor(options: KeyStatusOptions) {
    // Counted through maxSize, not max: with max, lru-cache allocates every slot of the four up front.
    const max = { maxSize: options.max ?? 10_000, sizeCalculation: () => 1 };
    this.refused = options.rejectedTtlMs > 0 ? new LRUCache<string, true>({ ...max, ttl: options.rejectedTtlMs }) : null;
    this.proven = new LRUCache<string, true>({ ...max, ttl: options.revalidateMs });
    this.known = new LRUCache<string, true>({ ...max, ttl: Math.max(KNOWN_TTL_MS, options.revalidateMs) });
    this.revokedLately = new LRUCache<string, true>({ ...max, ttl: options.revalidateMs });
    this.channel = options.channel ?? localRevocations;
    this.channel.listen((news, callerId) => {
      if (news === 'revoked') this.revokedHere(callerId);
      // A proof made before a revocation this instance already knows of changes nothing.
      else if (!this.revokedLately.has(callerId)) {
        this.proven.set(callerId, true);
        this.known.set(callerId, true);
      }
    });
  }

  learn(callerId: string, verdict: KeyVerdict): void {
    if (verdict === 'revoked') this.revoke(callerId);
    else if (verdict === 'proven') this.accept(callerId);
  }

  /** A read made with a caller's key outside any operation (a proof, the account, a re-read). */
  heard<T>(callerId: string, call: Promise<T>): Promise<T> {
    return call.then(
      (value) => {
        this.learn(callerId, 'proven');
        return value;
      },
      (error: unknown) => {
        this.learn(callerId, keyVerdict({ ok: false, error }));
        throw error;
      },
    );
  }

  revoke(callerId: string): void {
    const known = this.refused?.has(callerId) ?? false;
    this.revokedHere(callerId);
    // A key already known refused was already told to everyone: a flood of calls with it publishes nothing.
    if (!known) void this.channel.publish('revoked', callerId);
  }

  isRevoked(callerId: string): boolean {
    return this.refused?.has(callerId) ?? false;
  }

  accept(callerId: string): void {
    if (this.revokedLately.has(callerId)) return;
    // Shared once per interval: the calls of a key in use publish nothing.
    const news = !this.proven.has(callerId);
    this.proven.set(callerId, true);
    this.known.set(callerId, true);
    if (news) void this.channel.publish('proven', callerId);
  }

  /** Known for pacing (calls in parallel, own rate); serving the cache asks more: `isProven`. */
  isKnown(callerId: string): boolean {
    return this.known.has(callerId);
  }

  isProven(callerId: string): boolean {
    return this.proven.has(callerId);
  }

  provenFor(callerId: string): number {
    return this.proven.getRemainingTTL(callerId);
  }

  onRevoked(listener: (callerId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    return this.channel.close();
  }

  private revokedHere(callerId: string): void {
    this.proven.delete(callerId);
    this.known.delete(callerId);
    this.revokedLately.set(callerId, true);
    this.refused?.set(callerId, true);
    for (const listener of [...this.listeners]) listener(callerId);
  }
}
