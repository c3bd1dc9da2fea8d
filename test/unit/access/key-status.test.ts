/**
 * What the gateway believes of a key: a 401 revokes it everywhere, an answer that shows the upstream took it
 * proves it, and nothing proves again a key revoked within the interval (a slow call accepted before the 401
 * may answer after it).
 */
import { describe, expect, it } from 'vitest';
import { KeyStatus, refusalProvesKey, type KeyNews, type RevocationChannel } from '../../../src/access/key-status.js';
import { UpstreamError } from '../../../src/upstream/errors.js';

const ID = 'a'.repeat(32);

function channel() {
  const sent: [KeyNews, string][] = [];
  let deliver: (news: KeyNews, id: string) => void = () => {};
  const c: RevocationChannel = {
    publish: async (news, id) => void sent.push([news, id]),
    listen: (fn) => void (deliver = fn),
    close: async () => {},
  };
  return { c, sent, deliver: (news: KeyNews, id: string) => deliver(news, id) };
}

describe('KeyStatus', () => {
  it('a revoked key is not proven again by a call that answers after the revocation', () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    keys.accept(ID);
    expect(keys.isProven(ID)).toBe(true);
    keys.revoke(ID);
    keys.accept(ID);
    expect(keys.isProven(ID)).toBe(false);
    expect(keys.isKnown(ID)).toBe(false);
  });

  it('holds that even when refused keys are not remembered (REJECTED_KEY_TTL_MS=0)', () => {
    const keys = new KeyStatus({ rejectedTtlMs: 0, revalidateMs: 60_000 });
    keys.revoke(ID);
    keys.accept(ID);
    expect(keys.isProven(ID)).toBe(false);
  });

  it('with REJECTED_KEY_TTL_MS=0 a revoked key is not refused up front, and each revocation is told (none is remembered)', () => {
    const { c, sent } = channel();
    const keys = new KeyStatus({ rejectedTtlMs: 0, revalidateMs: 60_000, channel: c });
    keys.revoke(ID);
    expect(keys.isRevoked(ID)).toBe(false);
    keys.revoke(ID);
    expect(sent).toEqual([['revoked', ID], ['revoked', ID]]);
  });

  it('the first revocation and the first proof are each told at once', () => {
    const { c, sent } = channel();
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: c });
    keys.accept(ID);
    expect(sent).toEqual([['proven', ID]]);
    keys.revoke(ID);
    expect(sent).toEqual([['proven', ID], ['revoked', ID]]);
  });

  it('a proof lapses after revalidateMs, but the key stays known for pacing for ten minutes', async () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 40 });
    keys.accept(ID);
    await new Promise((r) => setTimeout(r, 80));
    expect(keys.isProven(ID)).toBe(false);
    expect(keys.isKnown(ID)).toBe(true);
  });

  it('holds at most `max` keys of each kind: a flood of new keys evicts the oldest', () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, max: 2 });
    const ids = ['1', '2', '3'].map((d) => d.repeat(32));
    for (const id of ids) keys.accept(id);
    expect(ids.map((id) => keys.isProven(id))).toEqual([false, true, true]);
  });

  it('close closes the channel', async () => {
    let closed = 0;
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: { publish: async () => {}, listen: () => {}, close: async () => void (closed += 1) } });
    await keys.close();
    expect(closed).toBe(1);
  });

  it('tells every instance of a revocation once, and of a proof once per interval', () => {
    const { c, sent } = channel();
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: c });
    keys.accept(ID);
    keys.accept(ID);
    keys.revoke(ID);
    keys.revoke(ID);
    expect(sent).toEqual([['proven', ID], ['revoked', ID]]);
  });

  it('ends the listeners of a key revoked on another instance, and ignores a proof of a key it knows revoked', () => {
    const { c, deliver } = channel();
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, channel: c });
    const ended: string[] = [];
    keys.onRevoked((id) => ended.push(id));
    deliver('proven', ID);
    expect(keys.isProven(ID)).toBe(true);
    deliver('revoked', ID);
    expect(ended).toEqual([ID]);
    expect(keys.isRevoked(ID)).toBe(true);
    deliver('proven', ID);
    expect(keys.isProven(ID)).toBe(false);
  });
});

describe('refusalProvesKey', () => {
  const refusal = (status: number) => new UpstreamError(`status ${status}`, 'unexpected_status', { route: 'GET /v1/transactions', statusCode: status });
  it.each([400, 404, 409, 422])('a %i is about the request: the key was taken', (status) => {
    expect(refusalProvesKey(refusal(status))).toBe(true);
  });
  it.each([401, 403, 408, 429, 500, 502, 503])('a %i proves nothing of the key', (status) => {
    expect(refusalProvesKey(refusal(status))).toBe(false);
  });
  it('an error without an answer proves nothing', () => {
    expect(refusalProvesKey(new Error('socket hang up'))).toBe(false);
  });
  it('nor does an error of another kind that carries a status, nor a status below 400', () => {
    expect(refusalProvesKey(Object.assign(new Error('from elsewhere'), { statusCode: 404 }))).toBe(false);
    expect(refusalProvesKey(refusal(302))).toBe(false);
    expect(refusalProvesKey(refusal(399))).toBe(false);
  });
});
