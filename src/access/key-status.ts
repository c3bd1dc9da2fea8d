/**
 * What the gateway knows of each API key, by its hash (auth.ts `callerId`):
 * - revoked: the upstream answered 401 for it lately. Every transport refuses
 *   it before any work, and whoever listens (live streams) is told at once.
 *   A revocation seen by one instance reaches the others through the channel
 *   (Redis pub/sub when instances share REDIS_URL), within a round trip.
 * - proven: the upstream accepted it within `revalidateMs`. Past that, the
 *   key must be proven again by an upstream call before the entity cache
 *   serves it, so a revocation no instance saw still holds within the interval.
 *   A proof is shared too (once per key per interval per instance), so a key
 *   proven on one instance reads what another cached for it.
 * Both are bounded LRUs: a flood of invented keys evicts only its own kind.
 * What an upstream answer says of a key is decided in one place, `keyVerdict`,
 * and learned through one method, `KeyStatus.learn`: the operation's gate
 * (upstream-budget.ts), the door's own reads (admission.ts: a proof, the
 * account) and the reconciler's re-reads (server.ts) all go through it.
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { UpstreamAuthenticationError, UpstreamError, UpstreamPermissionError, type CallOutcome } from '../upstream/index.js';

/** How long a key the upstream accepted counts as known for pacing: its calls go out in parallel, its rate is its own. */
const KNOWN_TTL_MS = 10 * 60_000;

/**
 * Whether an upstream refusal still shows that the key was accepted: one about the request itself (400, 404,
 * 409, 422...). Not a 401 or 403, nor a 408, 429 or 5xx, which a proxy or a limiter in front may answer before
 * the key is looked at.
 */
export function refusalProvesKey(error: unknown): boolean {
  if (!(error instanceof UpstreamError) || error.statusCode === undefined) return false;
  const status = error.statusCode;
  return status >= 400 && status < 500 && ![401, 403, 407, 408, 429].includes(status);
}

/**
 * What one upstream answer says of the key it was made with: `revoked` (a 401, or a key that cannot travel in a
 * header), `refused` for this operation only (a 403 may concern one route), `proven` (an answer, or a refusal of the
 * request itself), or nothing (`unsaid`: a 5xx, a time-out, a 429, a network error).
 */
export type KeyVerdict = 'revoked' | 'refused' | 'proven' | 'unsaid';

/** The one rule: a 401 revokes the key, any answer from behind the key check proves it. */
export function keyVerdict(outcome: CallOutcome): KeyVerdict {
  if (outcome.ok) return 'proven';
  if (outcome.error instanceof UpstreamAuthenticationError) return 'revoked';
  if (outcome.error instanceof UpstreamPermissionError) return 'refused';
  return refusalProvesKey(outcome.error) ? 'proven' : 'unsaid';
}

export type KeyNews = 'revoked' | 'proven';

/** How revocations and proofs travel between instances. */
export interface RevocationChannel {
  publish(news: KeyNews, callerId: string): Promise<void>;
  /** Called for what any instance published, this one included. */
  listen(onNews: (news: KeyNews, callerId: string) => void): void;
  close(): Promise<void>;
}

/** One instance: nothing to tell anyone. */
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
    close: async () => void (await subscriber.quit().catch(() => undefined)),
  };
}

export interface KeyStatusOptions {
  /** How long a refused key is refused without asking the upstream again (REJECTED_KEY_TTL_MS; 0: not remembered). */
  rejectedTtlMs: number;
  /** How long an accepted key counts as proven (KEY_REVALIDATE_MS). */
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
    const max = options.max ?? 10_000;
    this.refused = options.rejectedTtlMs > 0 ? new LRUCache<string, true>({ max, ttl: options.rejectedTtlMs }) : null;
    this.proven = new LRUCache<string, true>({ max, ttl: options.revalidateMs });
    this.known = new LRUCache<string, true>({ max, ttl: Math.max(KNOWN_TTL_MS, options.revalidateMs) });
    this.revokedLately = new LRUCache<string, true>({ max, ttl: options.revalidateMs });
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

  /** What a call made with the key said of it (`keyVerdict`), learned: revoked everywhere, or proven. */
  learn(callerId: string, verdict: KeyVerdict): void {
    if (verdict === 'revoked') this.revoke(callerId);
    else if (verdict === 'proven') this.accept(callerId);
  }

  /** A read the gateway makes with a caller's key outside any operation (a proof, the account, a re-read): its answer is learned. */
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

  /** The upstream refused the key (401): here at once, on the other instances through the channel. */
  revoke(callerId: string): void {
    const known = this.refused?.has(callerId) ?? false;
    this.revokedHere(callerId);
    // A key already known refused was already told to everyone: a flood of calls with it publishes nothing.
    if (!known) void this.channel.publish('revoked', callerId);
  }

  isRevoked(callerId: string): boolean {
    return this.refused?.has(callerId) ?? false;
  }

  /** The upstream answered a call made with the key. */
  accept(callerId: string): void {
    if (this.revokedLately.has(callerId)) return;
    // Shared once per interval: the calls of a key in use publish nothing.
    const news = !this.proven.has(callerId);
    this.proven.set(callerId, true);
    this.known.set(callerId, true);
    if (news) void this.channel.publish('proven', callerId);
  }

  /**
   * Accepted by the upstream within the last ten minutes (or the revalidation interval, if longer): such a key's
   * calls go out in parallel and its rate is its own. Serving the cache asks more: `isProven`.
   */
  isKnown(callerId: string): boolean {
    return this.known.has(callerId);
  }

  /** Accepted by the upstream within the revalidation interval. */
  isProven(callerId: string): boolean {
    return this.proven.has(callerId);
  }

  /** How long the key stays proven from now, in ms (0 or less: not proven). */
  provenFor(callerId: string): number {
    return this.proven.getRemainingTTL(callerId);
  }

  /** Told of every revocation, wherever it was seen; returns the stop. */
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
