/**
 * Whether the Redis that holds the records still holds all of them. A marker beside them: an epoch, made once per
 * Redis, and a sequence every record write moves on. A Redis that came back empty has no marker (or a new epoch); one
 * back from an older snapshot, or a replica that missed the last writes, has a sequence below one this instance saw.
 * Either way records may be gone, so new claims are refused for a quarantine while clients retry what was lost
 * (docs/resilience.md, Redis that loses records). The quarantine's end is written in the marker too (`until`), so an
 * instance started meanwhile, which knows no earlier marker, refuses with the others.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { NO_REPLICA_ACKS, writeConfirmed, type RedisClient as Redis, type ReplicaAcks } from '../redis.js';
import type { StoreCondition } from './store.js';

export const CHECK_EVERY_MS = 1_000;

export interface ContinuityOptions {
  quarantineMs: number;
  logger: Pick<Logger, 'error' | 'info'>;
  checkEveryMs?: number;
  /**
   * With replicas to wait for, a check reads what they hold too: a sequence read from the master alone may count
   * writes a replica never got, and after a failover that would read as a loss.
   */
  acks?: ReplicaAcks;
}

/** One marker's epoch and sequence as this instance last saw them. */
interface Seen {
  key: string;
  epoch: string | null;
  seq: number;
  /** Adoptions so far: a reply to a request sent before the last one belongs to the loss that adoption followed. */
  generation: number;
}

/**
 * Makes the marker where there is none and reads it, in one step: read apart, a Redis emptied in between would give
 * no epoch to compare with, and nothing would be checked again. HINCRBY by 0 writes nothing new but lets WAIT
 * confirm the replicas hold as much (see `read`).
 */
const ADOPT = `
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1])
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 0)
local m = redis.call('HMGET', KEYS[1], 'epoch', 'until')
return {m[1], tostring(seq), m[2] or ''}
`;

export class RedisContinuity {
  /** One marker per partition of callers (one on a single server): each is checked, a loss in any quarantines all. */
  private readonly markers: Seen[];
  private quarantinedUntil = 0;
  private losses = 0;
  private reason: string | null = null;
  /** Re-adopting the markers after a loss: what is seen meanwhile is the same loss. */
  private adopting: Promise<void> | null = null;
  private checking = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly onReady = () => void this.check();

  constructor(
    private readonly redis: Redis,
    keys: string | readonly string[],
    private readonly options: ContinuityOptions,
  ) {
    this.markers = (typeof keys === 'string' ? [keys] : keys).map((key) => ({ key, epoch: null, seq: 0, generation: 0 }));
  }

  /** The first marker: the only one on a single server. */
  get key(): string {
    return this.markers[0]!.key;
  }

  get keys(): readonly string[] {
    return this.markers.map((m) => m.key);
  }

  /** Takes the markers as they are (making them on a new Redis), then checks them every second and on each reconnect. */
  async start(): Promise<void> {
    await this.adopt();
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs ?? CHECK_EVERY_MS);
    this.timer.unref();
    this.redis.on('ready', this.onReady);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.redis.off('ready', this.onReady);
  }

  /** What a record script is given: the epoch and sequence it must find (`*`: not adopted yet, nothing to compare). */
  expected(marker = 0): [string, string] {
    const m = this.markers[marker]!;
    return [m.epoch ?? '*', String(m.seq)];
  }

  get refusing(): boolean {
    return Date.now() < this.quarantinedUntil;
  }

  condition(): StoreCondition {
    return { quarantinedUntil: this.refusing ? this.quarantinedUntil : null, losses: this.losses, reason: this.refusing ? this.reason : null };
  }

  /** The adoption a request sent now belongs to: given back to `saw` with its reply. */
  generation(marker = 0): number {
    return this.markers[marker]!.generation;
  }

  /**
   * A marker as a script or a check found it: `epoch` empty when it was missing. `sentAt`: the sequence this instance
   * knew when it asked; only below that is a loss, since replies to concurrent requests may be read in another order.
   * `sentIn`: the adoption it was sent in; a reply to a request sent before the marker was adopted again belongs to
   * the loss already told (it may read the emptied Redis, or compare the adopted marker to the old sequence).
   */
  saw(epoch: string, seq: number, marker = 0, sentAt?: number, sentIn?: number): void {
    const m = this.markers[marker]!;
    if (m.epoch === null || this.adopting) return;
    if (sentIn !== undefined && sentIn !== m.generation) return;
    const floor = sentAt ?? m.seq;
    const where = this.markers.length > 1 ? ` (marker ${m.key})` : '';
    if (epoch !== m.epoch) this.lost(`${epoch === '' ? 'its marker is gone: it came back empty' : 'its marker is another: it was replaced or emptied'}${where}`);
    else if (seq < floor) this.lost(`its write sequence went back from ${floor} to ${seq}: it came back from an older snapshot, or a replica missed the last writes${where}`);
    else m.seq = Math.max(m.seq, seq);
  }

  /** The sequence this instance knows for a marker: what a request sent now must not find less than. */
  known(marker = 0): number {
    return this.markers[marker]!.seq;
  }

  async check(): Promise<void> {
    if (this.checking || this.markers[0]!.epoch === null) return;
    this.checking = true;
    try {
      // One read per marker: on a cluster each lives on the node of its partition.
      await Promise.all(
        this.markers.map(async (m, marker) => {
          const [sentIn, sentAt] = [m.generation, m.seq];
          const [epoch, seq, until] = await this.read(m.key);
          this.saw(epoch ?? '', Number(seq ?? 0), marker, sentAt, sentIn);
          this.join(Number(until ?? 0));
        }),
      );
    } catch {
      // Unreachable: redis.ts says so; the next check after the reconnect compares.
    } finally {
      this.checking = false;
    }
  }

  /**
   * The marker, and with replicas asked for, only once they hold as much: HINCRBY by 0 writes nothing new but moves
   * this connection's replication offset past every write before it, which WAIT then waits for.
   */
  private async read(key: string): Promise<(string | null)[]> {
    const acks = this.options.acks;
    if (!acks || acks.replicaAcks === 0) return this.redis.hmget(key, 'epoch', 'seq', 'until');
    const [seq, [epoch, until]] = (await writeConfirmed(this.redis, acks, (p) => p.hincrby(key, 'seq', 0).hmget(key, 'epoch', 'until'))) as [number, (string | null)[]];
    return [epoch ?? null, String(seq), until ?? null];
  }

  private lost(reason: string): void {
    this.losses += 1;
    this.reason = `idempotency Redis lost records: ${reason}`;
    this.quarantinedUntil = Date.now() + this.options.quarantineMs;
    this.options.logger.error(
      { redis: 'records lost', quarantineMs: this.options.quarantineMs },
      `${this.reason}; new keyed mutations answer IDEMPOTENCY_UNAVAILABLE for ${Math.round(this.options.quarantineMs / 1000)} s, while clients retry what was lost`,
    );
    // Unreachable again: the old epochs stay, so the next check finds the loss once more.
    const until = String(this.quarantinedUntil);
    this.adopting = this.adopt()
      .then(() => Promise.all(this.markers.map((m) => this.redis.hset(m.key, 'until', until))))
      .then(() => undefined)
      .catch(() => undefined);
  }

  /** A quarantine another instance started (written in the markers): this one refuses until it ends too. */
  private join(until: number): void {
    if (!(until > Date.now()) || until <= this.quarantinedUntil) return;
    const first = !this.refusing;
    this.quarantinedUntil = until;
    if (!first) return;
    this.losses += 1;
    this.reason = 'idempotency Redis lost records: another gateway found the loss';
    this.options.logger.error(
      { redis: 'records lost', quarantinedUntil: new Date(until).toISOString() },
      `${this.reason}; new keyed mutations answer IDEMPOTENCY_UNAVAILABLE until ${new Date(until).toISOString()}, while clients retry what was lost`,
    );
  }

  private async adopt(): Promise<void> {
    try {
      const acks = this.options.acks ?? NO_REPLICA_ACKS;
      const found = await Promise.all(
        this.markers.map(async (m) => {
          const [[epoch, seq, until]] = (await writeConfirmed(this.redis, acks, (p) => p.eval(ADOPT, 1, m.key, randomUUID()))) as [[string, string, string]];
          return [epoch, seq, until] as const;
        }),
      );
      found.forEach(([epoch, seq, until], marker) => {
        const m = this.markers[marker]!;
        m.epoch = epoch;
        m.seq = Number(seq);
        m.generation += 1;
        this.join(Number(until || 0));
      });
    } finally {
      this.adopting = null;
    }
  }
}
