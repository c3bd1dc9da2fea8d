/** The same over a real redis-server: kept apart from the in-process tests of this module, which run in the quick loop. */
import { expect, it, vi } from 'vitest';
import { KeyStatus, redisRevocations } from '../../../src/access/key-status.js';
import type { Logger } from '../../../src/logger.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';

const ID = 'a'.repeat(32);

describeWith('redis-server', 'revocations and proofs over Redis pub/sub', () => {
  const client = redisClientsForSuite();
  const quiet = { warn: () => {} } as unknown as Logger;

  it('a revocation or a proof on one instance reaches the other; other channels and other words do not', async () => {
    const one = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: await redisRevocations(client(), client(), 'keys', quiet) });
    const two = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: await redisRevocations(client(), client(), 'keys', quiet) });
    const elsewhere = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: await redisRevocations(client(), client(), 'other-keys', quiet) });
    one.accept(ID);
    await vi.waitFor(() => expect(two.isProven(ID)).toBe(true), { timeout: 3_000, interval: 10 });
    const ended: string[] = [];
    two.onRevoked((id) => ended.push(id));
    one.revoke(ID);
    await vi.waitFor(() => expect(ended).toEqual([ID]), { timeout: 3_000, interval: 10 });
    expect(two.isRevoked(ID)).toBe(true);

    // What is not exactly "<news>:<32 hex>" on the channel is ignored.
    const other = 'd'.repeat(32);
    const raw = client();
    for (const message of [`revoked:${other}x`, `xrevoked:${other}`, `revoked:${'g'.repeat(32)}`, `revoked:${other.slice(1)}`, `forgotten:${other}`]) await raw.publish('keys', message);
    await raw.publish('keys', `proven:${'e'.repeat(32)}`);
    await vi.waitFor(() => expect(two.isProven('e'.repeat(32))).toBe(true), { timeout: 3_000, interval: 10 });
    expect(two.isRevoked(other)).toBe(false);
    expect(elsewhere.isRevoked(ID)).toBe(false);
    expect(elsewhere.isProven(ID)).toBe(false);
    await Promise.all([one.close(), two.close(), elsewhere.close()]);
  });

  it('a publish that fails is logged, without the key, and the instance goes on', async () => {
    const warned: [unknown, string][] = [];
    const logger = { warn: (o: unknown, msg: string) => void warned.push([o, msg]) } as unknown as Logger;
    const publisher = client();
    const channel = await redisRevocations(publisher, client(), 'keys', logger);
    publisher.disconnect();
    await channel.publish('revoked', ID);
    expect(warned).toHaveLength(1);
    expect(warned[0]![1]).toBe('key status not shared: redis unreachable');
    expect(warned[0]![0]).toEqual({ err: { message: expect.any(String) } });
    await channel.close();
  });

  it('a message on another channel the same subscriber listens to is no news', async () => {
    const subscriber = client();
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: await redisRevocations(client(), subscriber, 'keys', quiet) });
    await subscriber.subscribe('elsewhere');
    const raw = client();
    const marker = 'f'.repeat(32);
    await raw.publish('elsewhere', `revoked:${ID}`);
    await raw.publish('elsewhere', `proven:${ID}`);
    // Published after them on the same connection, so it arrives after them: once it is heard, they were too.
    await raw.publish('keys', `proven:${marker}`);
    await vi.waitFor(() => expect(keys.isProven(marker)).toBe(true), { timeout: 3_000, interval: 10 });
    expect(keys.isRevoked(ID)).toBe(false);
    expect(keys.isProven(ID)).toBe(false);
    await keys.close();
  });

  it('close quits a ready subscriber with QUIT rather than dropping its connection', async () => {
    const subscriber = client();
    const channel = await redisRevocations(client(), subscriber, 'keys', quiet);
    expect(subscriber.status).toBe('ready');
    const quit = vi.spyOn(subscriber, 'quit');
    const drop = vi.spyOn(subscriber, 'disconnect');
    await channel.close();
    expect(quit).toHaveBeenCalledTimes(1);
    expect(drop).not.toHaveBeenCalled();
  });

  it('close ends the subscription', async () => {
    const subscriber = client();
    const channel = await redisRevocations(client(), subscriber, 'keys', quiet);
    await channel.close();
    await vi.waitFor(() => expect(subscriber.status).toBe('end'), { timeout: 3_000, interval: 10 });
  });
});
