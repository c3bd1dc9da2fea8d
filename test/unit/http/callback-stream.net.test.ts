/**
 * The outbound half of the callback protocol (callback-stream.ts) against a
 * bare HTTP server standing in for the router's callback URL: what one POST
 * carries and how each answer is read, then one subscription's messages —
 * in order, `complete` only after the `next` in flight, heartbeats beside
 * them, and each way it ends.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { CALLBACK_PROTOCOL, deliver } from '../../../src/http/callback-stream.js';
import { actions, sleep, standIn, stream, target, until, useStandIn } from './callback-stand-in.js';

useStandIn();

describe('deliver', () => {
  it('POSTs the message as JSON with the protocol header, the id, the verifier and the extra members', async () => {
    standIn.reply = () => ({ status: 204, headers: { 'subscription-protocol': CALLBACK_PROTOCOL } });
    const sent = await deliver(target(), 'check', { extra: 1 }, 5_000);
    expect(sent).toEqual({ outcome: 'ok', status: 204, protocol: CALLBACK_PROTOCOL });
    expect(standIn.received).toHaveLength(1);
    const [message] = standIn.received;
    expect(message!.path).toBe('/callback/sub-1');
    expect(message!.headers['content-type']).toBe('application/json');
    expect(message!.headers['subscription-protocol']).toBe('callback/1.0');
    expect(message!.body).toEqual({ kind: 'subscription', action: 'check', id: 'sub-1', verifier: 'secret-verifier', extra: 1 });
  });

  it('reads a 2xx without the protocol header as ok, with no protocol', async () => {
    expect(await deliver(target(), 'next', {}, 5_000)).toEqual({ outcome: 'ok', status: 200, protocol: null });
    standIn.reply = () => ({ status: 299 });
    expect(await deliver(target(), 'next', {}, 5_000)).toMatchObject({ outcome: 'ok', status: 299 });
  });

  it('reads 404 as gone, and any other answer as failed', async () => {
    standIn.reply = () => ({ status: 404 });
    expect(await deliver(target(), 'next', {}, 5_000)).toEqual({ outcome: 'gone', detail: 'answered 404' });
    standIn.reply = () => ({ status: 500 });
    expect(await deliver(target(), 'next', {}, 5_000)).toEqual({ outcome: 'failed', detail: 'answered 500' });
    standIn.reply = () => ({ status: 300 });
    expect(await deliver(target(), 'next', {}, 5_000)).toEqual({ outcome: 'failed', detail: 'answered 300' });
  });

  it('does not follow a redirect: the message stays with the allowed URL', async () => {
    standIn.reply = (_body, path) => (path === '/elsewhere' ? { status: 200 } : { status: 307, headers: { location: `${standIn.base}/elsewhere` } });
    expect(await deliver(target(), 'next', {}, 5_000)).toEqual({ outcome: 'failed', detail: 'answered 307' });
    expect(standIn.received.map((r) => r.path)).toEqual(['/callback/sub-1']);
  });

  it('gives up after its time-out, and says so', async () => {
    standIn.reply = () => 'hang';
    const started = Date.now();
    expect(await deliver(target(), 'check', {}, 100)).toEqual({ outcome: 'failed', detail: 'no answer within 100 ms' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('never throws for a URL nobody answers', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    expect(await deliver({ ...target(), url: `http://127.0.0.1:${port}/x` }, 'next', {}, 5_000)).toEqual({ outcome: 'failed', detail: 'could not be reached' });
  });
});

describe('callbackStream', () => {
  it('sends nothing before start(), then each event presented, in order, and complete when the events end', async () => {
    const { s, source, ends } = stream();
    source.push({ n: 1 });
    await sleep(30);
    expect(standIn.received).toHaveLength(0);
    s.start();
    source.push({ n: 2 });
    await until(() => standIn.received.length === 2);
    source.finish();
    await until(() => ends.length === 1);
    expect(actions()).toEqual(['next', 'next', 'complete']);
    expect(standIn.received.map((r) => r.body.payload)).toEqual([{ data: { n: 1 }, extensions: { presented: true } }, { data: { n: 2 }, extensions: { presented: true } }, undefined]);
    expect(standIn.received[2]!.body).not.toHaveProperty('errors');
    expect(ends).toEqual(['completed']);
  });

  it('sends one next at a time: the second waits for the answer to the first', async () => {
    standIn.reply = (body) => (body.action === 'next' ? { status: 200, delayMs: 150 } : { status: 200 });
    const { s, source, ends } = stream();
    s.start();
    source.push({ n: 1 });
    source.push({ n: 2 });
    await until(() => standIn.received.length === 2);
    expect(standIn.received[1]!.arrivedAt).toBeGreaterThanOrEqual(standIn.received[0]!.answeredAt!);
    await s.end();
    expect(ends).toEqual(['completed']);
  });

  it('sends complete only after the next in flight is answered when ended from outside', async () => {
    standIn.reply = (body) => (body.action === 'next' ? { status: 200, delayMs: 200 } : { status: 200 });
    const { s, source, ends } = stream();
    s.start();
    source.push({ n: 1 });
    await until(() => standIn.received.length === 1);
    const errors = [{ message: 'revoked', extensions: { code: 'UNAUTHENTICATED' } }];
    await s.end(errors);
    expect(actions()).toEqual(['next', 'complete']);
    const [next, complete] = standIn.received;
    expect(complete!.arrivedAt).toBeGreaterThanOrEqual(next!.answeredAt!);
    expect(complete!.body.errors).toEqual(errors);
    expect(ends).toEqual(['completed']);
    expect(source.iterator.returned).toBeGreaterThan(0);
  });

  it('ends once, however often it is ended; ending after the end sends nothing', async () => {
    const { s, ends } = stream();
    s.start();
    const first = s.end([]);
    expect(s.end([{ message: 'again' }])).toBe(first);
    await first;
    expect(actions()).toEqual(['complete']);
    expect(standIn.received[0]!.body).not.toHaveProperty('errors');
    await s.end();
    s.start();
    await sleep(30);
    expect(standIn.received).toHaveLength(1);
    expect(ends).toEqual(['completed']);
  });

  it('stops at a 404: nothing more goes to the router, not even complete', async () => {
    standIn.reply = () => ({ status: 404 });
    const { s, source, ends, failures } = stream();
    s.start();
    source.push({ n: 1 });
    await until(() => ends.length === 1);
    expect(ends).toEqual(['gone']);
    expect(failures).toEqual([['next', 'answered 404']]);
    source.push({ n: 2 });
    await s.end();
    await sleep(30);
    expect(actions()).toEqual(['next']);
    expect(source.iterator.returned).toBeGreaterThan(0);
  });

  it('completes with CALLBACK_FAILED when a next fails, and sends no more events', async () => {
    standIn.reply = (body) => (body.action === 'next' ? { status: 500 } : { status: 200 });
    const { s, source, ends, failures } = stream();
    s.start();
    source.push({ n: 1 });
    await until(() => ends.length === 1);
    source.push({ n: 2 });
    await sleep(30);
    expect(actions()).toEqual(['next', 'complete']);
    expect(standIn.received[1]!.body.errors).toEqual([
      { message: "The gateway's next message to the router's callback URL failed (answered 500): the subscription is closed.", extensions: { code: 'CALLBACK_FAILED' } },
    ]);
    expect(failures).toEqual([['next', 'answered 500']]);
    expect(ends).toEqual(['completed']);
    await s.end();
  });

  it('does not try again when complete itself fails', async () => {
    standIn.reply = () => ({ status: 503 });
    const { s, ends, failures } = stream();
    s.start();
    await s.end();
    await sleep(30);
    expect(actions()).toEqual(['complete']);
    expect(failures).toEqual([['complete', 'answered 503']]);
    expect(ends).toEqual(['completed']);
  });

  it('completes with the errors of events that threw', async () => {
    const { s, source, ends } = stream();
    s.start();
    source.fail(new Error('boom'));
    await until(() => ends.length === 1);
    expect(actions()).toEqual(['complete']);
    expect(standIn.received[0]!.body.errors).toEqual([{ message: 'failed: boom', extensions: { code: 'STREAM_FAILED' } }]);
  });

  it('sends a check every heartbeat beside a slow next, one in flight at most, and none after the end', async () => {
    standIn.reply = (body) => (body.action === 'next' ? { status: 200, delayMs: 400 } : body.action === 'check' ? { status: 204, delayMs: 150 } : { status: 200 });
    const { s, source } = stream({ heartbeatMs: 50 });
    s.start();
    source.push({ n: 1 });
    await sleep(420);
    const checks = standIn.received.filter((r) => r.body.action === 'check');
    // Every 50 ms, but each waits 150 ms for its answer: about one per 200 ms, never two at once.
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < checks.length; i++) expect(checks[i]!.arrivedAt).toBeGreaterThanOrEqual(checks[i - 1]!.answeredAt!);
    expect(checks[0]!.arrivedAt).toBeLessThan(standIn.received.find((r) => r.body.action === 'next')!.arrivedAt + 400);
    await s.end();
    const count = standIn.received.length;
    await sleep(200);
    expect(standIn.received).toHaveLength(count);
  });

  it('ends the subscription when a heartbeat fails', async () => {
    standIn.reply = (body) => (body.action === 'check' ? { status: 500 } : { status: 200 });
    const { s, ends, failures } = stream({ heartbeatMs: 30 });
    s.start();
    await until(() => ends.length === 1);
    expect(actions()).toEqual(['check', 'complete']);
    expect(failures).toEqual([['check', 'answered 500']]);
    expect((standIn.received[1]!.body.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('CALLBACK_FAILED');
    await s.end();
  });

  it('sends no heartbeat when its interval is 0', async () => {
    const { s } = stream({ heartbeatMs: 0 });
    s.start();
    await sleep(100);
    expect(standIn.received).toHaveLength(0);
    await s.end();
  });

  it('ends without a POST when the next ahead of complete was answered 404, and ends once', async () => {
    standIn.reply = (body) => (body.action === 'next' ? { status: 404, delayMs: 100 } : { status: 200 });
    const { s, source, ends } = stream();
    s.start();
    source.push({ n: 1 });
    await until(() => standIn.received.length === 1);
    await s.end([{ message: 'revoked' }]);
    await sleep(30);
    expect(actions()).toEqual(['next']);
    expect(ends).toEqual(['gone']);
  });

  it('tells of its end once when complete itself is answered 404', async () => {
    standIn.reply = () => ({ status: 404 });
    const { s, ends } = stream();
    s.start();
    await s.end();
    expect(actions()).toEqual(['complete']);
    expect(ends).toEqual(['gone']);
  });

  it('does not send an event that arrives once it is ending', async () => {
    let release: (step: IteratorResult<ExecutionResult>) => void = () => {};
    const late: AsyncIterator<ExecutionResult> = {
      next: () => new Promise((r) => (release = r)),
      return: async () => ({ done: true, value: undefined }), // ignored: the event still comes
    };
    const { s, ends } = stream({ events: late });
    s.start();
    await sleep(10);
    const ending = s.end();
    release({ done: false, value: { data: { n: 1 } } });
    await ending;
    await sleep(30);
    expect(actions()).toEqual(['complete']);
    expect(ends).toEqual(['completed']);
  });

  it('ends events that have no return()', async () => {
    const bare: AsyncIterator<ExecutionResult> = { next: () => new Promise(() => {}) };
    const { s, ends } = stream({ events: bare });
    s.start();
    await s.end();
    expect(ends).toEqual(['completed']);
  });

  it('sends a check every heartbeat while the router answers them', async () => {
    standIn.reply = () => ({ status: 204 });
    const { s } = stream({ heartbeatMs: 40 });
    s.start();
    await until(() => standIn.received.length >= 3);
    await s.end();
    expect(actions().slice(0, 3)).toEqual(['check', 'check', 'check']);
  });

  it('sends no heartbeat when started after its end', async () => {
    const { s } = stream({ heartbeatMs: 20 });
    await s.end();
    s.start();
    await sleep(100);
    expect(actions()).toEqual(['complete']);
  });
});
