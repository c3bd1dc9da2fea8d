/**
 * A callback subscription's life in process (subscription-callback.ts): the
 * caps, the account lookup, the check handshake, events, revocation, the
 * failures along the way and shutdown, over the set-up of callback-world.ts.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamAuthenticationError, UpstreamPermissionError, UpstreamRouteMissingError, UpstreamServerError } from '../../../src/upstream/errors.js';
import { caller, router, sleep, starts, until, useCallbackRouter, world } from './callback-world.js';

useCallbackRouter();

describe('open: the caps, the account and the check', () => {
  it('holds each key to its live subscriptions, and the instance to its total', async () => {
    const w = world({ perKey: 2, max: 3 });
    expect((await w.open()).status).toBe(200);
    expect((await w.open()).status).toBe(200);
    expect(await w.open()).toEqual({ status: 429, message: 'At most 2 live callback subscriptions per API key.', code: 'RATE_LIMITED' });
    expect((await w.open({}, { who: caller(2) })).status).toBe(200);
    expect(await w.open({}, { who: caller(3) })).toEqual({ status: 503, message: 'This gateway holds as many callback subscriptions as it may; try again later.', code: 'SUBSCRIPTIONS_FULL' });
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 3 }); // live, waiting for started()
    await w.subs.close();
  });

  it.each([
    ['the key refused', new UpstreamAuthenticationError({ route: 'GET /v1/accounts' }), 401, 'UNAUTHENTICATED', 'The payments API rejected this API key.'],
    ['permission refused', new UpstreamPermissionError({ route: 'GET /v1/accounts' }), 403, 'FORBIDDEN', 'Forbidden.'],
    ['the route missing', new UpstreamRouteMissingError({ route: 'GET /v1/accounts', beyondSpec: false }), 502, 'UPSTREAM_UNSUPPORTED', 'The payments API does not offer GET /v1/accounts, which subscriptions need.'],
    ['the upstream failing', new UpstreamServerError({ route: 'GET /v1/accounts' }), 503, 'UPSTREAM_UNAVAILABLE', 'Upstream unavailable, try again later.'],
  ])('answers %s at the account lookup, and frees the slot', async (_label, error, status, code, message) => {
    const w = world({ perKey: 1, max: 1 });
    w.admission.account = () => Promise.reject(error);
    expect(await w.open()).toEqual({ status, code, message });
    expect(router.messages).toEqual([]);
    w.admission.account = async () => 42;
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it('refuses a key revoked before the door, in the revoked key\'s words, and calls nothing', async () => {
    const w = world();
    w.admission.revoked = true;
    expect(await w.open()).toEqual({ status: 401, message: 'The payments API rejected this API key moments ago; check the key before retrying.', code: 'UNAUTHENTICATED' });
    expect(router.messages).toEqual([]);
    expect(w.live.ends).toEqual([]);
  });

  it('logs an unexpected account failure by its message only', async () => {
    const w = world();
    w.admission.account = () => Promise.reject(new UpstreamServerError({ route: 'GET /v1/accounts' }));
    await w.open();
    expect(w.logs).toEqual([{ level: 'warn', fields: { err: { message: 'Upstream server error on GET /v1/accounts' } }, message: 'callback subscription refused: account lookup failed' }]);
  });

  it.each([
    ['a refusal', { status: 500 }, 'answered 500'],
    ['a 200 instead of 204', { status: 200 }, 'answered 200, not 204'],
    ['a 204 without the protocol', { status: 204, protocol: null }, 'answered without "subscription-protocol: callback/1.0"'],
    ['a 204 with another protocol', { status: 204, protocol: 'callback/2.0' }, 'answered without "subscription-protocol: callback/1.0"'],
  ])('starts nothing when the check gets %s, frees the slot and tells the operator why', async (_label, reply, detail) => {
    router.checkReply = reply;
    const w = world({ perKey: 1, max: 1 });
    const answer = await w.open();
    expect(answer).toEqual({ status: 400, message: 'The callback check failed: no subscription was started.', code: 'BAD_REQUEST', extra: { reason: 'CALLBACK_CHECK_FAILED' } });
    expect(router.messages.map((m) => m.action)).toEqual(['check']);
    const origin = new URL(router.base).origin;
    expect(w.logs).toEqual([{ level: 'info', fields: { callerId: 'caller-1', detail, origin }, message: 'callback subscription refused: the check failed' }]);
    router.checkReply = { status: 204 };
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });
});

describe('open: a subscription', () => {
  it('checks, answers {"data":null}, sends events once started, and completes when revoked', async () => {
    const w = world({ perKey: 1 });
    const answer = await w.open();
    expect(answer).toMatchObject({ status: 200, result: { data: null } });
    const [check] = router.messages;
    expect(check).toMatchObject({ action: 'check', path: `/callback/${check!.id}`, verifier: `v-${check!.id}` });
    await sleep(30);
    expect(router.messages).toHaveLength(1); // nothing before started()
    (answer as { started: () => void }).started();
    await until(() => router.messages.length === 3);
    expect(router.messages.slice(1).map((m) => [m.action, m.payload])).toEqual([
      ['next', { data: { ticks: 1 } }],
      ['next', { data: { ticks: 2 } }],
    ]);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 1 });
    expect(w.live.ends).toHaveLength(1);
    w.live.ends[0]!();
    await until(() => router.messages.some((m) => m.action === 'complete'));
    expect(router.messages.at(-1)!.errors).toEqual([{ message: 'The payments API revoked this API key: the subscription is closed.', extensions: { code: 'UNAUTHENTICATED' } }]);
    await until(() => w.subs.stats().callbackSubscriptions === 0);
    expect(w.live.released).toBe(1);
    // Its slot is free again.
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it("answers a resolver's refusal with its errors, and completes the id the router registered", async () => {
    const w = world({ perKey: 1 });
    const answer = await w.open({}, { query: 'subscription { refused }' });
    const errors = [{ message: 'Not yours.', locations: [{ line: 1, column: 16 }], path: ['refused'], extensions: { code: 'FORBIDDEN', formatted: true, requestId: 'req-1' } }];
    expect(answer).toEqual({ status: 200, result: { data: null, errors } });
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual(errors);
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it('ends every live subscription with SHUTTING_DOWN on close, and opens none after', async () => {
    const w = world();
    const answer = await w.open();
    (answer as { started: () => void }).started();
    await until(() => router.messages.length === 3);
    await w.subs.close();
    expect(router.messages.at(-1)).toMatchObject({ action: 'complete', errors: [{ message: 'The gateway is shutting down: subscribe again.', extensions: { code: 'SHUTTING_DOWN' } }] });
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
    const count = router.messages.length;
    expect(await w.open()).toEqual({ status: 503, message: 'The gateway is shutting down: subscribe again.', code: 'SHUTTING_DOWN' });
    expect(router.messages).toHaveLength(count);
  });

  it('ends a subscription whose key was revoked while its check was in flight, as soon as it exists', async () => {
    const w = world({ perKey: 1 });
    let answerCheck!: () => void;
    router.holdCheck = new Promise((resolve) => (answerCheck = resolve));
    const opening = w.open();
    await until(() => router.messages.length === 1 && w.live.ends.length === 1);
    w.live.ends[0]!();
    answerCheck();
    expect(await opening).toMatchObject({ status: 200, result: { data: null } });
    await until(() => router.messages.some((m) => m.action === 'complete'));
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual([{ message: 'The payments API revoked this API key: the subscription is closed.', extensions: { code: 'UNAUTHENTICATED' } }]);
    await until(() => w.live.released === 1);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
  });

  it('ends a subscription graphql-js was still starting when close() began, and answers SHUTTING_DOWN', async () => {
    const w = world({ perKey: 1 });
    let letStart!: () => void;
    starts.gate = new Promise((resolve) => (letStart = resolve));
    const opening = w.open({}, { query: 'subscription { late }' });
    // The check answered and the operation begun: graphql-js waits in the field's subscribe.
    await until(() => w.telemetry.started.length === 1);
    await w.subs.close();
    letStart();
    expect(await opening).toEqual({ status: 503, message: 'The gateway is shutting down: subscribe again.', code: 'SHUTTING_DOWN' });
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual([{ message: 'The gateway is shutting down: subscribe again.', extensions: { code: 'SHUTTING_DOWN' } }]);
    expect(w.live.released).toBe(1);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
  });

  it('completes at once a subscription whose check was answered after close() began', async () => {
    const w = world();
    const opening = w.open();
    // close() while the check is in flight.
    const closing = w.subs.close();
    const answer = await opening;
    await closing;
    expect(answer).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' });
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual([{ message: 'The gateway is shutting down: subscribe again.', extensions: { code: 'SHUTTING_DOWN' } }]);
    // Ended before anything ran for it.
    expect(w.telemetry.started).toEqual([]);
  });
});

describe('open: what a subscription runs with, and its failures', () => {
  it('runs the named operation with its variables, and tells the telemetry who and what', async () => {
    const w = world();
    const query = 'subscription Other { ticks(n: 1) } subscription Named($n: Int!) { ticks(n: $n) }';
    const answer = await w.open({}, { query, body: { operationName: 'Named', variables: { n: 3 } } });
    (answer as { started: () => void }).started();
    await until(() => router.messages.length === 4);
    expect(router.messages.slice(1).map((m) => m.payload?.data)).toEqual([{ ticks: 1 }, { ticks: 2 }, { ticks: 3 }]);
    expect(w.telemetry.started).toEqual([{ transport: 'callback', headers: {} }]);
    expect(w.telemetry.calls.filter(([name]) => name === 'by' || name === 'named')).toEqual([
      ['by', ['caller-1']],
      ['named', ['Named', 'subscription']],
    ]);
    await w.subs.close();
  });

  it("names the telemetry's operation from the document when the body names none", async () => {
    const w = world();
    await w.open({}, { query: 'subscription Mine { ticks(n: 1) }', body: { operationName: 7, variables: 'n' } });
    expect(w.telemetry.calls.find(([name]) => name === 'named')).toEqual(['named', ['Mine', 'subscription']]);
    await w.subs.close();
  });

  it('answers 500, completes the registered id and frees the slot when the subscription cannot start', async () => {
    const w = world({ perKey: 1 });
    w.breakContext();
    const answer = await w.open();
    expect(answer).toEqual({ status: 500, message: 'Internal server error.', code: 'INTERNAL_SERVER_ERROR' });
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual([{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
    expect(w.logs.map((l) => [l.level, l.message])).toEqual([['error', 'callback subscription failed to start']]);
    expect((w.logs[0]!.fields.err as Error).message).toBe('context broken');
    expect(w.telemetry.calls.some(([name]) => name === 'end')).toBe(true);
  });

  it('completes with a formatted internal error when its events fail, not with what failed', async () => {
    const w = world();
    const answer = await w.open({}, { query: 'subscription { fails }' });
    (answer as { started: () => void }).started();
    await until(() => router.messages.some((m) => m.action === 'complete'));
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'next', 'complete']);
    expect(router.messages[2]!.errors).toEqual([{ message: 'Internal server error.', extensions: { formatted: true } }]);
    // The formatter still gets what failed, to log it.
    expect((w.formatted.at(-1) as { originalError?: Error }).originalError?.message).toBe('kaput');
    await until(() => w.subs.stats().callbackSubscriptions === 0);
    expect(w.logs.find((l) => l.level === 'debug')).toEqual({ level: 'debug', fields: { callerId: 'caller-1', how: 'completed' }, message: 'callback subscription ended' });
  });

  it('logs a message the router did not take, by action, detail and origin', async () => {
    router.nextStatus = 500;
    const w = world();
    const answer = await w.open();
    (answer as { started: () => void }).started();
    await until(() => router.messages.some((m) => m.action === 'complete'));
    const origin = new URL(router.base).origin;
    expect(w.logs.filter((l) => l.level === 'info')).toEqual([{ level: 'info', fields: { callerId: 'caller-1', action: 'next', detail: 'answered 500', origin }, message: 'callback message not delivered' }]);
  });

  it("logs a complete the router did not take for a resolver's refusal", async () => {
    router.completeStatus = 500;
    const w = world();
    await w.open({}, { query: 'subscription { refused }' });
    const origin = new URL(router.base).origin;
    expect(w.logs).toEqual([{ level: 'info', fields: { action: 'complete', detail: 'answered 500', origin }, message: 'callback message not delivered' }]);
  });
});

describe('open: a subscription over the bus', () => {
  it('sends events that arrive together while the router keeps up: only the queue is pressure', async () => {
    const w = world();
    const answer = await w.open({}, { query: 'subscription { events }' });
    (answer as { started: () => void }).started();
    await sleep(30);
    [1, 2, 3].forEach((n) => w.emit({ n }));
    await until(() => router.messages.length === 4);
    expect(router.messages.slice(1).map((m) => [m.action, m.payload])).toEqual([
      ['next', { data: { events: 1 } }],
      ['next', { data: { events: 2 } }],
      ['next', { data: { events: 3 } }],
    ]);
    expect(w.logs.filter((l) => l.level === 'warn')).toEqual([]);
    await w.subs.close();
  });

  it('completes with SUBSCRIBER_TOO_SLOW when more events wait than the queue holds, and warns', async () => {
    const w = world({ perKey: 1 });
    const answer = await w.open({}, { query: 'subscription { events }' });
    (answer as { started: () => void }).started();
    await sleep(30);
    for (let n = 1; n <= 20; n++) w.emit({ n });
    await until(() => router.messages.some((m) => m.action === 'complete'));
    expect(router.messages.at(-1)!.errors).toEqual([{ message: 'The router did not keep up: more than 8 events waited for it. Subscribe again.', extensions: { code: 'SUBSCRIBER_TOO_SLOW' } }]);
    expect(w.logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', fields: { callerId: 'caller-1', queueLimit: 8 }, message: 'callback subscription too slow: router not keeping up, subscription completed' },
    ]);
    await until(() => w.live.released === 1);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
  });
});

describe('open: a queue that overflows before the subscription exists', () => {
  it('ends the subscription with SUBSCRIBER_TOO_SLOW as soon as it exists, not with a plain complete', async () => {
    const w = world({ perKey: 1 });
    let letStart!: () => void;
    starts.gate = new Promise((resolve) => (letStart = resolve));
    const opening = w.open({}, { query: 'subscription { lateEvents }' });
    await until(() => w.listening() === 1);
    for (let n = 1; n <= 20; n++) w.emit({ n });
    letStart();
    expect(await opening).toMatchObject({ status: 200, result: { data: null } });
    await until(() => router.messages.some((m) => m.action === 'complete'));
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(router.messages[1]!.errors).toEqual([{ message: 'The router did not keep up: more than 8 events waited for it. Subscribe again.', extensions: { code: 'SUBSCRIBER_TOO_SLOW' } }]);
    expect(w.logs.filter((l) => l.level === 'warn')).toHaveLength(1);
    await until(() => w.live.released === 1);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
  });
});

describe('open: the context a subscription runs in', () => {
  it("holds the key's account and the caller", async () => {
    const w = world();
    w.admission.account = async () => 77;
    const answer = await w.open({}, { query: 'subscription { whoami }' });
    (answer as { started: () => void }).started();
    await until(() => router.messages.length === 2);
    expect(router.messages[1]!.payload).toEqual({ data: { whoami: '77:caller-1:77' } });
    expect(w.admission.streams).toEqual([['callback', { apiKey: 'sk_sandbox_key1', callerId: 'caller-1' }, '127.0.0.1']]);
    await w.subs.close();
  });

  it('takes subscriptions only, when the operation name matches none', async () => {
    const answer = await world().open({}, { body: { operationName: 'Nope' } });
    expect(answer).toMatchObject({ status: 400, extra: { reason: 'NOT_A_SUBSCRIPTION' } });
    expect(router.messages).toEqual([]);
  });
});
