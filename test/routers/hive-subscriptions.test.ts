/**
 * A subscription through Hive Gateway, run for real: clients subscribe to
 * Hive over Server-Sent Events with their own key; Hive opens graphql-ws
 * connections to the gateway's /graphql with the caller's key in
 * `connection_init` (the `transportEntries` of docs/routers.md, "Hive
 * Gateway"). Each caller gets the events of its own account only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { composeSupergraph } from '../federation/router.js';
import { eventually, liveSubscriptions, setUpstreamStatus, startRealtimeStack, type RealtimeStack } from '../realtime/support.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { PAYMENTS_SDL, PROPAGATE_AUTHORIZATION, startHiveServer, type HiveServer } from './hive.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Hive's subscriptions to payments: graphql-ws to its /graphql, the caller's key in connection_init. */
const HIVE_SUBSCRIPTIONS = {
  payments: {
    options: {
      subscriptions: {
        kind: 'ws',
        location: '/graphql',
        options: { connectionParams: { authorization: '{context.headers.authorization}' } },
      },
    },
  },
};

interface Payload {
  data?: { transactionUpdated?: { id: string; status: string } } | null;
  errors?: { message: string }[];
}

/** A GraphQL-over-SSE subscription to Hive: the payloads of its `next` events as they come. */
async function sseSubscribe(url: string, key: string, query: string) {
  const abort = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const payloads: Payload[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  const reading = (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.split('\n').find((line) => line.startsWith('data:'));
        if (data && data.length > 'data:'.length) payloads.push(JSON.parse(data.slice('data:'.length)) as Payload);
      }
    }
  })().catch(() => undefined);
  return {
    payloads,
    async close() {
      abort.abort();
      await reading;
    },
  };
}

describeWith('hive-gateway', 'Hive Gateway subscriptions to payments over graphql-ws', () => {
  let stack: RealtimeStack;
  let hive: HiveServer;

  beforeAll(async () => {
    stack = await startRealtimeStack();
    hive = await startHiveServer();
    await hive.serve({
      supergraph: composeSupergraph([{ name: 'payments', url: `http://127.0.0.1:${stack.gateway.port}/graphql`, sdl: PAYMENTS_SDL }]),
      propagateHeaders: PROPAGATE_AUTHORIZATION,
      transportEntries: HIVE_SUBSCRIPTIONS,
    });
  });
  afterAll(async () => {
    await hive?.stop();
    await stack?.stop();
  });

  it("streams each caller's transactions to that caller only", async () => {
    const [keyA, keyB] = [newKey('hivesubA'), newKey('hivesubB')];
    const txA = await factories(stack.emulator, keyA).transaction();
    const txB = await factories(stack.emulator, keyB).transaction();
    const before = await liveSubscriptions(stack.wsUrl);
    const connectionsBefore = (await stack.health()).subscriptions.connections;
    const subA = await sseSubscribe(hive.url, keyA, 'subscription { transactionUpdated { id status } }');
    const subB = await sseSubscribe(hive.url, keyB, 'subscription { transactionUpdated { id status } }');
    try {
      // Both reached the gateway over Hive's own WebSocket connections, authenticated with their keys.
      await eventually(() => liveSubscriptions(stack.wsUrl), (n) => n === before + 2, 5000);
      // One graphql-ws connection per caller's key: Hive shares a connection only between identical connectionParams.
      expect((await stack.health()).subscriptions.connections).toBe(connectionsBefore + 2);

      await setUpstreamStatus(stack.emulator.url, 'transactions', txA.id as number, 'approved');
      await eventually(async () => subA.payloads.length, (n) => n >= 1, 5000);
      // B's account changes after A's: an event of A's on B's stream would have come first.
      await setUpstreamStatus(stack.emulator.url, 'transactions', txB.id as number, 'declined');
      await eventually(async () => subB.payloads.length, (n) => n >= 1, 5000);
      await sleep(300); // room for a late leak to show up on either stream

      expect(subA.payloads).toEqual([{ data: { transactionUpdated: { id: String(txA.id), status: 'APPROVED' } } }]);
      expect(subB.payloads).toEqual([{ data: { transactionUpdated: { id: String(txB.id), status: 'DECLINED' } } }]);
    } finally {
      await subA.close();
      await subB.close();
    }
  });
});
