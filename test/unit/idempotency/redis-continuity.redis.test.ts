/**
 * The continuity marker over a real redis-server: a Redis emptied, put back to an older state or replaced is
 * found (by the check and by a record script, whichever comes first), told in one error line, and new claims are
 * refused for the quarantine; records it still has replay meanwhile; an intact Redis raises nothing. With replicas
 * to wait for, over a real master and replica: what a check reads is what a replica confirmed.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../../../src/logger.js';
import { beforeAll, expect, it, vi } from 'vitest';
import { RedisContinuity } from '../../../src/idempotency/redis-continuity.js';
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { masterAndReplicaForSuite, redisClientsForSuite, type RedisServer } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';
import { idempotencyKeys } from '../../../src/idempotency/redis-keys.js';

function recordingLogger() {
  const errors: { obj: object; msg: string }[] = [];
  const logger = { error: (obj: object, msg: string) => void errors.push({ obj, msg }), info: () => undefined } as unknown as Logger;
  return { errors, logger };
}

const until = async (done: () => boolean | Promise<boolean>, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!(await done()) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

describeWith('redis-server', 'the idempotency Redis continuity marker', () => {
  const client = redisClientsForSuite();
  let n = 0;

  async function instance(redis: Redis, options: { quarantineMs?: number; checkEveryMs?: number; prefix?: string } = {}) {
    const prefix = options.prefix ?? `cont-${++n}:`;
    const { errors, logger } = recordingLogger();
    const continuity = new RedisContinuity(redis, `${prefix}continuity`, { quarantineMs: options.quarantineMs ?? 60_000, logger, checkEveryMs: options.checkEveryMs ?? 20 });
    await continuity.start();
    const store = new RedisIdempotencyStore(redis, prefix, 100, 60_000, continuity);
    const done = async (key: string, caller = 'A') => {
      const claim = await store.claim(key, 'fp', 60_000, caller);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await store.complete(key, claim.owner, 'fp', `"${key}"`, 60_000, caller);
    };
    return { prefix, continuity, store, errors, done };
  }

  it('names its first marker its key: the only one on a single server', () => {
    const redis = client();
    const quiet = { quarantineMs: 1_000, logger: recordingLogger().logger };
    expect(new RedisContinuity(redis, 'one:continuity', quiet).key).toBe('one:continuity');
    expect(new RedisContinuity(redis, ['p0:continuity', 'p1:continuity'], quiet).key).toBe('p0:continuity');
  });

  it('makes the marker on a new Redis and raises nothing while records only grow, over two instances', async () => {
    const redis = client();
    const a = await instance(redis);
    const b = await instance(client(), { prefix: a.prefix });
    for (let i = 0; i < 5; i++) {
      await a.done(`a${i}`);
      await b.done(`b${i}`);
    }
    await a.continuity.check();
    await b.continuity.check();
    expect(await redis.hget(`${a.prefix}continuity`, 'seq')).toBe('20');
    expect(a.errors).toEqual([]);
    expect(b.errors).toEqual([]);
    expect(a.store.condition()).toEqual({ quarantinedUntil: null, losses: 0, reason: null });
    a.continuity.stop();
    b.continuity.stop();
  });

  it('an emptied Redis: one error line, refused claims for the quarantine, then claims again', async () => {
    const redis = client();
    const { store, errors, continuity, done } = await instance(redis, { quarantineMs: 400 });
    await done('before');
    await redis.flushall();
    await until(() => errors.length > 0);
    await new Promise((r) => setTimeout(r, 100));

    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(/^idempotency Redis lost records: its marker is gone: it came back empty; new keyed mutations answer IDEMPOTENCY_UNAVAILABLE for 0 s/);
    expect(errors[0]!.obj).toEqual({ redis: 'records lost', quarantineMs: 400 });
    const condition = store.condition()!;
    expect(condition.losses).toBe(1);
    expect(condition.quarantinedUntil).toBeGreaterThan(Date.now());
    expect(condition.reason).toMatch(/marker is gone/);
    expect(await store.claim('before', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    expect(await store.claim('fresh', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    // A record written meanwhile (by an instance past its own quarantine) still replays.
    await redis.set(`${(store as unknown as { prefix: string }).prefix}kept`, JSON.stringify({ s: 'done', fp: 'fp', v: '"kept"' }));
    expect(await store.claim('kept', 'fp', 60_000, 'A')).toEqual({ kind: 'completed', json: '"kept"' });

    await until(() => !continuity.refusing, 2_000);
    expect(store.condition()).toEqual({ quarantinedUntil: null, losses: 1, reason: null });
    expect((await store.claim('before', 'fp', 60_000, 'A')).kind).toBe('acquired');
    expect(errors).toHaveLength(1);
    continuity.stop();
  });

  it('an instance started during a quarantine another one began refuses too, until it ends', async () => {
    const redis = client();
    const first = await instance(redis, { quarantineMs: 1_500 });
    await first.done('before');
    await redis.flushall();
    await until(() => first.errors.length > 0);
    await until(() => false, 100);
    // Started after the loss: it knows no earlier marker, only the quarantine written in it.
    const later = await instance(client(), { prefix: first.prefix, quarantineMs: 1_500 });
    expect(later.continuity.refusing).toBe(true);
    expect(await later.store.claim('fresh', 'fp', 60_000, 'B')).toEqual({ kind: 'full' });
    expect(later.errors).toHaveLength(1);
    expect(later.errors[0]!.msg).toMatch(/another gateway found the loss/);
    await until(() => !later.continuity.refusing && !first.continuity.refusing, 3_000);
    expect((await later.store.claim('fresh', 'fp', 60_000, 'B')).kind).toBe('acquired');
    first.continuity.stop();
    later.continuity.stop();
  });

  it('a claim finds the loss before any check does, and takes nothing', async () => {
    const redis = client();
    const { store, errors, continuity, done } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    await redis.del(`${(store as unknown as { prefix: string }).prefix}continuity`, `${(store as unknown as { prefix: string }).prefix}k1`);
    expect(await store.claim('k1', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    expect(errors).toHaveLength(1);
    await until(() => false, 50);
    // Adopted again: the same loss is not told twice, and the quarantine still refuses.
    expect(await store.claim('k2', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    expect(errors).toHaveLength(1);
    continuity.stop();
  });

  it('a Redis back from an older state: the sequence went back', async () => {
    const redis = client();
    const { store, errors, continuity, done, prefix } = await instance(redis);
    await done('k1');
    await done('k2');
    await redis.hset(`${prefix}continuity`, 'seq', '1');
    await until(() => errors.length > 0);
    expect(errors[0]!.msg).toMatch(/its write sequence went back from 4 to 1: it came back from an older snapshot, or a replica missed the last writes/);
    expect(await store.claim('k3', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    continuity.stop();
  });

  it('another Redis in its place: the epoch is another', async () => {
    const redis = client();
    const { errors, continuity, done, prefix } = await instance(redis);
    await done('k1');
    await redis.hset(`${prefix}continuity`, 'epoch', 'someone-else');
    await until(() => errors.length > 0);
    expect(errors[0]!.msg).toMatch(/its marker is another: it was replaced or emptied/);
    continuity.stop();
  });

  it('a completion tells the loss too (it still writes its result: the side effect happened)', async () => {
    const redis = client();
    const { store, errors, continuity, prefix } = await instance(redis, { checkEveryMs: 60_000 });
    const claim = await store.claim('k', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await redis.del(`${prefix}continuity`);
    expect(await store.complete('k', claim.owner, 'fp', '"done"', 60_000, 'A')).toBe(true);
    expect(errors).toHaveLength(1);
    expect(await store.peek('k', 'fp')).toEqual({ kind: 'completed', json: '"done"' });
    continuity.stop();
  });

  it('finds a second loss after the first, each told once', async () => {
    const redis = client();
    const { errors, continuity, store, done } = await instance(redis, { quarantineMs: 200 });
    await done('k1');
    await redis.flushall();
    await until(() => errors.length > 0);
    await until(() => !continuity.refusing, 2_000);
    await done('k2');
    await redis.flushall();
    await until(() => errors.length > 1);
    expect(errors.map((e) => e.msg.slice(0, 56))).toEqual(['idempotency Redis lost records: its marker is gone: it c', 'idempotency Redis lost records: its marker is gone: it c']);
    expect(store.condition()!.losses).toBe(2);
    continuity.stop();
  });

  it('joins a longer quarantine another instance wrote without a second line, and keeps its own when the written one is shorter', async () => {
    const redis = client();
    // Checked only when asked: a timed check in progress would make the test's own check return without reading.
    const { errors, continuity, store, done, prefix } = await instance(redis, { quarantineMs: 60_000, checkEveryMs: 60_000 });
    await done('k1');
    await redis.del(`${prefix}continuity`);
    await continuity.check();
    expect(errors).toHaveLength(1);
    const own = store.condition()!.quarantinedUntil!;
    // Adopted again with its end written; then another instance writes a shorter one, then a longer one.
    await until(async () => (await redis.hget(`${prefix}continuity`, 'until')) !== null, 2_000);
    await redis.hset(`${prefix}continuity`, 'until', String(Date.now() + 200));
    await continuity.check();
    expect(store.condition()!.quarantinedUntil).toBe(own);
    const longer = own + 30_000;
    await redis.hset(`${prefix}continuity`, 'until', String(longer));
    await continuity.check();
    expect(store.condition()).toEqual({ quarantinedUntil: longer, losses: 1, reason: expect.stringMatching(/marker is gone/) as unknown as string });
    expect(errors).toHaveLength(1);
    continuity.stop();
  });

  it('tells the quarantine it joins, with its end, in its error line', async () => {
    const redis = client();
    const prefix = `cont-${++n}:`;
    const end = Date.now() + 5_000;
    await redis.hset(`${prefix}continuity`, 'epoch', 'e1', 'seq', '3', 'until', String(end));
    const { errors, continuity, store } = await instance(redis, { prefix });
    const iso = new Date(end).toISOString();
    expect(errors).toEqual([{ obj: { redis: 'records lost', quarantinedUntil: iso }, msg: `idempotency Redis lost records: another gateway found the loss; new keyed mutations answer IDEMPOTENCY_UNAVAILABLE until ${iso}, while clients retry what was lost` }]);
    expect(store.condition()).toEqual({ quarantinedUntil: end, losses: 1, reason: 'idempotency Redis lost records: another gateway found the loss' });
    // A quarantine that has ended is none to join.
    const later = `cont-${++n}:`;
    await redis.hset(`${later}continuity`, 'epoch', 'e2', 'seq', '3', 'until', String(Date.now() - 1));
    const after = await instance(redis, { prefix: later });
    expect(after.errors).toEqual([]);
    expect(after.continuity.refusing).toBe(false);
    continuity.stop();
    after.continuity.stop();
  });

  it('checks at its interval (a second by default), and at once on each reconnect', async () => {
    const redis = client();
    const reads = vi.spyOn(redis, 'hmget');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const every = new RedisContinuity(redis, `cont-${++n}:continuity`, { quarantineMs: 1_000, logger: recordingLogger().logger, checkEveryMs: 50 });
      await every.start();
      const started = reads.mock.calls.length;
      vi.advanceTimersByTime(49);
      expect(reads.mock.calls.length).toBe(started);
      vi.advanceTimersByTime(1);
      expect(reads.mock.calls.length).toBe(started + 1);
      every.stop();
      const byDefault = new RedisContinuity(redis, `cont-${++n}:continuity`, { quarantineMs: 1_000, logger: recordingLogger().logger });
      await byDefault.start();
      const adopted = reads.mock.calls.length;
      vi.advanceTimersByTime(999);
      expect(reads.mock.calls.length).toBe(adopted);
      vi.advanceTimersByTime(1);
      expect(reads.mock.calls.length).toBe(adopted + 1);
      await new Promise((r) => setTimeout(r, 20));
      redis.emit('ready');
      expect(reads.mock.calls.length).toBe(adopted + 2);
      byDefault.stop();
      redis.emit('ready');
      vi.advanceTimersByTime(5_000);
      expect(reads.mock.calls.length).toBe(adopted + 2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('before it has started compares nothing: claims are taken, a check reads nothing, a marker seen is no loss', async () => {
    const redis = client();
    const prefix = `cont-${++n}:`;
    await redis.hset(`${prefix}continuity`, 'epoch', 'e1', 'seq', '3', 'until', String(Date.now() + 60_000));
    const { errors, logger } = recordingLogger();
    const continuity = new RedisContinuity(redis, `${prefix}continuity`, { quarantineMs: 1_000, logger });
    const store = new RedisIdempotencyStore(redis, prefix, 100, 60_000, continuity);
    expect((await store.claim('k', 'fp', 60_000, 'A')).kind).toBe('acquired');
    const reads = vi.spyOn(redis, 'hmget');
    await continuity.check();
    continuity.saw('another', 0);
    expect(reads).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
    expect(continuity.refusing).toBe(false);
  });

  it('takes the sequence it finds at start, so a later one below it is a loss', async () => {
    const redis = client();
    const prefix = `cont-${++n}:`;
    await redis.hset(`${prefix}continuity`, 'epoch', 'e1', 'seq', '5');
    const { errors, continuity } = await instance(redis, { prefix, checkEveryMs: 60_000 });
    expect(continuity.expected()).toEqual(['e1', '5']);
    await redis.hset(`${prefix}continuity`, 'seq', '2');
    await continuity.check();
    expect(errors.map((e) => e.msg)).toEqual([expect.stringContaining('its write sequence went back from 5 to 2') as unknown as string]);
    continuity.stop();
  });

  it('runs one check at a time, and the next after it ends', async () => {
    const redis = client();
    const { continuity } = await instance(redis, { checkEveryMs: 60_000 });
    const reads = vi.spyOn(redis, 'hmget');
    await Promise.all([continuity.check(), continuity.check()]);
    expect(reads).toHaveBeenCalledTimes(1);
    await continuity.check();
    expect(reads).toHaveBeenCalledTimes(2);
    continuity.stop();
  });

  it('tells a loss found while it adopts the marker again as the same loss', async () => {
    const redis = client();
    const { store, errors, continuity, done, prefix } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    await redis.del(`${prefix}continuity`);
    expect(await store.claim('k2', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    // The adoption's first reply cannot have come yet: what is seen now is the loss it is adopting after.
    continuity.saw('', 0);
    expect(errors).toHaveLength(1);
    expect(store.condition()!.losses).toBe(1);
    continuity.stop();
  });

  it('a reply to a request sent before the marker was adopted again is the loss already told, not a second one', async () => {
    const redis = client();
    const { errors, continuity, done } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    await done('k2');
    const [oldEpoch] = continuity.expected();
    const before = continuity.generation();
    await redis.flushall();
    await continuity.check();
    expect(errors).toHaveLength(1);
    // A request sent now, while the marker is being adopted, still carries the old epoch, sequence and adoption.
    const [sentEpoch, sentSeq] = continuity.expected();
    const sentIn = continuity.generation();
    expect([sentEpoch, sentSeq, sentIn]).toEqual([oldEpoch, '4', before]);
    await until(() => continuity.expected()[0] !== oldEpoch);
    const [newEpoch] = continuity.expected();
    expect(continuity.generation()).toBe(before + 1);
    // Its reply, read after the adoption: the new marker below the old sequence, or the Redis still empty.
    continuity.saw(newEpoch, 0, 0, Number(sentSeq), sentIn);
    continuity.saw('', 0, 0, Number(sentSeq), sentIn);
    expect(errors).toHaveLength(1);
    // Sent after the adoption, the same reply is a loss.
    continuity.saw('', 0, 0, 0, continuity.generation());
    expect(errors).toHaveLength(2);
    continuity.stop();
  });

  it('a Redis back from an older state, found while requests were out: one line, though the epoch stays the same', async () => {
    const redis = client();
    const { errors, continuity, done, prefix } = await instance(redis, { checkEveryMs: 60_000 });
    for (let i = 0; i < 6; i++) await done(`k${i}`);
    const [epoch, sentSeq] = continuity.expected();
    const sentIn = continuity.generation();
    // The sequence goes back (an older snapshot, a replica that missed writes); the epoch is the same one.
    await redis.hset(`${prefix}continuity`, 'seq', '3');
    await continuity.check();
    expect(errors).toHaveLength(1);
    await until(() => continuity.generation() !== sentIn);
    expect(continuity.expected()).toEqual([epoch, '3']);
    // A request sent before the adoption, answered after it at 4: below what it knew, but the loss already told.
    continuity.saw(epoch, 4, 0, Number(sentSeq), sentIn);
    expect(errors).toHaveLength(1);
    continuity.stop();
  });

  it('a Redis emptied while the marker is made and read: an epoch is still held, so the next loss is told', async () => {
    const redis = client();
    const other = client();
    const { errors, continuity, done, prefix } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    // Every step of an adoption in two commands has another client empty Redis between them.
    const real = { hsetnx: redis.hsetnx.bind(redis), hmget: redis.hmget.bind(redis) };
    Object.assign(redis, {
      hsetnx: async (...args: Parameters<typeof redis.hsetnx>) => {
        const made = await real.hsetnx(...args);
        await other.flushall();
        return made;
      },
    });
    await redis.flushall();
    await continuity.check();
    await until(() => continuity.generation() === 2);
    expect(continuity.expected()[0]).not.toBe('*');
    expect(await redis.hget(`${prefix}continuity`, 'epoch')).toBe(continuity.expected()[0]);
    await other.flushall();
    await continuity.check();
    expect(errors).toHaveLength(2);
    Object.assign(redis, real);
    continuity.stop();
  });

  it('claims and results sent while the marker is adopted again after a loss add no second error line', async () => {
    const redis = client();
    const { store, errors, continuity, done } = await instance(redis, { checkEveryMs: 60_000, quarantineMs: 60_000 });
    for (let i = 0; i < 5; i++) await done(`before${i}`);
    const [oldEpoch] = continuity.expected();
    // Payments under way when Redis empties: each one's result is written once, in a turn of its own.
    const held: string[] = [];
    for (let i = 0; i < 50; i++) {
      const claim = await store.claim(`held${i}`, 'fp', 60_000, 'A');
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      held.push(claim.owner);
    }
    await redis.flushall();
    // Requests keep going out, one per event-loop turn, through the loss and the adoption that follows it.
    // The window is bounded by time, not turns: on a loaded machine Redis answers after many turns.
    const sent: Promise<unknown>[] = [store.claim('first', 'fp', 60_000, 'A')];
    let results = 0;
    const deadline = Date.now() + 5_000;
    for (let turn = 0; continuity.expected()[0] === oldEpoch && Date.now() < deadline; turn++) {
      sent.push(store.claim(`during${turn}`, 'fp', 60_000, 'A'));
      if (turn < held.length) {
        sent.push(store.complete(`held${turn}`, held[turn]!, 'fp', '"held"', 60_000, 'A').then((written) => void (results += written ? 1 : 0)));
      }
      await new Promise((r) => setImmediate(r));
    }
    for (let turn = 0; turn < 5; turn++) {
      sent.push(store.claim(`after${turn}`, 'fp', 60_000, 'A'));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.allSettled(sent);
    expect(continuity.expected()[0]).not.toBe(oldEpoch);
    expect(results).toBeGreaterThan(1);
    expect(errors.map((e) => e.msg.split(';')[0])).toEqual(['idempotency Redis lost records: its marker is gone: it came back empty']);
    continuity.stop();
  });

  it('the store tells the marker the sequence and adoption each claim and result was sent in', async () => {
    const redis = client();
    const { store, continuity, done } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    const [epoch, seq] = continuity.expected();
    const sentIn = continuity.generation();
    const saw = vi.spyOn(continuity, 'saw');
    const claim = await store.claim('k2', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.complete('k2', claim.owner, 'fp', '"k2"', 60_000, 'A');
    expect(saw.mock.calls).toEqual([
      [epoch, Number(seq) + 1, 0, Number(seq), sentIn],
      [epoch, Number(seq) + 2, 0, Number(seq) + 1, sentIn],
    ]);
    continuity.stop();
  });

  it('a check compares its read with what was known when it asked, not with a newer reply read meanwhile', async () => {
    const redis = client();
    const { errors, continuity, done } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    const [epoch, seq] = continuity.expected();
    // While the check's read is out, a script's reply tells a sequence past the one the read will bring back.
    const hmget = redis.hmget.bind(redis);
    Object.assign(redis, {
      hmget: async (...args: Parameters<typeof redis.hmget>) => {
        const found = await hmget(...args);
        continuity.saw(epoch, Number(seq) + 1, 0, Number(seq), continuity.generation());
        return found;
      },
    });
    await continuity.check();
    Object.assign(redis, { hmget });
    expect(errors).toEqual([]);
    expect(continuity.known()).toBe(Number(seq) + 1);
    continuity.stop();
  });

  it('a reply read after a newer one is no loss; only one below what was known when it was asked is', async () => {
    const redis = client();
    const { errors, continuity, done, prefix } = await instance(redis, { checkEveryMs: 60_000 });
    await done('k1');
    await done('k2');
    const epoch = (await redis.hget(`${prefix}continuity`, 'epoch'))!;
    // Asked when 2 was known, answered 3, read after a reply of 4: in order for when it was asked.
    continuity.saw(epoch, 4, 0, 2);
    continuity.saw(epoch, 3, 0, 2);
    expect(errors).toEqual([]);
    expect(continuity.known()).toBe(4);
    continuity.saw(epoch, 3, 0, 4);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(/went back from 4 to 3/);
    continuity.stop();
  });

  it('several markers (a cluster\'s partitions): each moves on its own, a loss in any one is found', async () => {
    const redis = client();
    const { errors, logger } = recordingLogger();
    const p = `cont-${++n}:`;
    const keys = idempotencyKeys(p, 4);
    const continuity = new RedisContinuity(redis, keys.markers, { quarantineMs: 60_000, logger, checkEveryMs: 20 });
    await continuity.start();
    const store = new RedisIdempotencyStore(redis, p, 100, 60_000, continuity, { partitions: 4 });
    for (const caller of ['A', 'B', 'C', 'D', 'E', 'F']) {
      // Record keys are the caller's own (recordKeyFor): here, named after it.
      const claim = await store.claim(`k-${caller}`, 'fp', 60_000, caller);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await store.complete(`k-${caller}`, claim.owner, 'fp', '"k"', 60_000, caller);
    }
    await continuity.check();
    expect(errors).toEqual([]);
    const moved = keys.markers.filter((_, partition) => continuity.known(partition) > 0);
    expect(moved.length).toBeGreaterThan(1);
    await redis.del(moved[1]!);
    await until(() => errors.length > 0);
    expect(errors[0]!.msg).toContain(`its marker is gone: it came back empty (marker ${moved[1]})`);
    expect(await store.claim('new', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    continuity.stop();
  });
});

describeWith('redis-server', 'the continuity marker read through a replica', () => {
  const ACKS = { replicaAcks: 1, replicaAckTimeoutMs: 200 };
  const pair = masterAndReplicaForSuite();
  let replica: RedisServer;
  let redis: Redis;
  beforeAll(() => void ({ replica, redis } = pair()));

  it('adopts the marker and joins a quarantine written in it, as confirmed by the replica', async () => {
    const { errors, logger } = recordingLogger();
    const continuity = new RedisContinuity(redis, 'rep-1:continuity', { quarantineMs: 60_000, logger, checkEveryMs: 60_000, acks: ACKS });
    await continuity.start();
    try {
      const [epoch, seq] = await redis.hmget('rep-1:continuity', 'epoch', 'seq');
      expect(continuity.expected()).toEqual([epoch, seq ?? '0']);
      const store = new RedisIdempotencyStore(redis, 'rep-1:', 100, 60_000, continuity, { acks: ACKS });
      const claim = await store.claim('k', 'fp', 60_000, 'A');
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await continuity.check();
      expect(errors).toEqual([]);
      expect(continuity.known()).toBe(1);
      // Another gateway found a loss and wrote its quarantine's end in the marker.
      const until = Date.now() + 30_000;
      await redis.hset('rep-1:continuity', 'until', String(until));
      await continuity.check();
      expect(continuity.condition()).toEqual({ quarantinedUntil: until, losses: 1, reason: 'idempotency Redis lost records: another gateway found the loss' });
    } finally {
      continuity.stop();
    }
  });

  it('with the replica gone, a check compares nothing it could not confirm', async () => {
    const { errors, logger } = recordingLogger();
    const continuity = new RedisContinuity(redis, 'rep-2:continuity', { quarantineMs: 60_000, logger, checkEveryMs: 60_000, acks: ACKS });
    await continuity.start();
    try {
      const store = new RedisIdempotencyStore(redis, 'rep-2:', 100, 60_000, continuity, { acks: ACKS });
      for (const key of ['k1', 'k2']) expect((await store.claim(key, 'fp', 60_000, 'A')).kind).toBe('acquired');
      expect(continuity.known()).toBe(2);
      await replica.kill();
      // The master alone reads a sequence below the one known: unconfirmed, it is no evidence of a loss.
      await redis.hset('rep-2:continuity', 'seq', '0');
      await continuity.check();
      expect(errors).toEqual([]);
      expect(continuity.condition().losses).toBe(0);
    } finally {
      continuity.stop();
    }
  });
});
