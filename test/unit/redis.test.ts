/**
 * The Redis connections' two log lines (src/redis.ts): one when Redis goes, one when every connection is
 * back. ioredis is replaced by a connection whose status and events the test sets, so each role goes down
 * and comes back on its own, which one real redis-server cannot do (test/realtime/redis-outage.test.ts
 * restarts a real one under two gateways).
 */
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

class FakeRedis extends EventEmitter {
  status = 'ready';
  constructor(readonly url: string) {
    super();
  }
}

vi.mock('ioredis', () => ({ Redis: FakeRedis }));

const { RedisLinks } = await import('../../src/redis.js');
const { createLogger } = await import('../../src/logger.js');
const { singleServer } = await import('../../src/redis-target.js');

function setup() {
  const lines: { level: number; msg: string; redis?: string; roles?: string[] }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  const links = new RedisLinks(createLogger('info', { destination }));
  const open = (role: Parameters<typeof links.open>[1]) => links.open(singleServer('redis://127.0.0.1:1'), role) as unknown as FakeRedis;
  const drop = (redis: FakeRedis) => {
    redis.status = 'reconnecting';
    redis.emit('close');
  };
  const back = (redis: FakeRedis) => {
    redis.status = 'ready';
    redis.emit('ready');
  };
  const said = (words: string) => lines.filter((l) => l.msg.startsWith(words));
  return { links, open, drop, back, said, lines };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('redis connections: the outage lines', () => {
  it('says "reachable again" only once every connection is back, not while any role is still down', async () => {
    const { open, drop, back, said } = setup();
    const limits = open('limits');
    const cache = open('entity-cache');
    const bus = open('bus-subscriber');
    for (const r of [limits, cache, bus]) drop(r);
    await vi.advanceTimersByTimeAsync(300);
    expect(said('redis unreachable')).toMatchObject([{ level: 50, redis: 'down', roles: ['limits', 'entity-cache', 'bus-subscriber'] }]);

    back(limits);
    expect(said('redis reachable again')).toEqual([]);
    back(bus);
    expect(said('redis reachable again')).toEqual([]);
    back(cache);
    expect(said('redis reachable again')).toMatchObject([{ level: 30, redis: 'up', msg: 'redis reachable again: shared state restored' }]);
    expect(said('redis unreachable')).toHaveLength(1);
  });

  it('counts a role with two connections down while either is', async () => {
    const { open, drop, back, said } = setup();
    const first = open('idempotency');
    const second = open('idempotency');
    drop(first);
    drop(second);
    await vi.advanceTimersByTimeAsync(300);
    expect(said('redis unreachable')).toMatchObject([{ roles: ['idempotency'] }]);
    back(first);
    expect(said('redis reachable again')).toEqual([]);
    back(second);
    expect(said('redis reachable again')).toHaveLength(1);
  });

  it('a blip shorter than the settle time says nothing, and a connection back while another still drops ends no outage', async () => {
    const { open, drop, back, said, lines } = setup();
    const limits = open('limits');
    const news = open('key-news');
    drop(limits);
    drop(news);
    await vi.advanceTimersByTimeAsync(100);
    back(limits);
    await vi.advanceTimersByTimeAsync(300);
    // key-news is still down when the settle time ends: the outage names it alone.
    expect(said('redis unreachable')).toMatchObject([{ roles: ['key-news'] }]);
    back(news);
    expect(said('redis reachable again')).toHaveLength(1);

    drop(limits);
    await vi.advanceTimersByTimeAsync(100);
    back(limits);
    await vi.advanceTimersByTimeAsync(300);
    expect(lines).toHaveLength(2);
  });

  it('closing on purpose is no outage', async () => {
    const { links, open, drop, lines } = setup();
    const limits = open('limits');
    drop(limits);
    links.closing();
    await vi.advanceTimersByTimeAsync(300);
    expect(lines).toEqual([]);
  });
});
