/**
 * A bare HTTP server standing in for the router's callback URL, and one
 * subscription's stream over it with events the test pushes
 * (test/unit/http/callback-stream*.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { callbackStream, type CallbackStreamOptions } from '../../../src/http/callback-stream.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  arrivedAt: number;
  answeredAt?: number;
}

/** How the stand-in answers one POST: a status (and headers), after a delay, or never. */
export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

/** What the stand-in received, and how it answers. */
export const standIn = {
  base: '',
  received: [] as Received[],
  reply: (() => ({ status: 200 })) as (body: Record<string, unknown>, path: string) => Reply,
};
let server: http.Server;
const hanging: http.ServerResponse[] = [];

/** Starts the stand-in for the suite; before each test, it forgets what it received and answers 200. */
export function useStandIn(): void {

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const entry: Received = { path: req.url ?? '', headers: req.headers, body, arrivedAt: Date.now() };
      standIn.received.push(entry);
      const r = standIn.reply(body, entry.path);
      if (r === 'hang') {
        hanging.push(res);
        return;
      }
      setTimeout(() => {
        entry.answeredAt = Date.now();
        res.writeHead(r.status, r.headers).end(r.status === 204 || r.status === 304 ? undefined : 'ignored body');
      }, r.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  standIn.received = [];
  standIn.reply = () => ({ status: 200 });
});
}

export const target = () => ({ url: `${standIn.base}/callback/sub-1`, id: 'sub-1', verifier: 'secret-verifier' });
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const actions = () => standIn.received.map((r) => r.body.action);

/** Events the test pushes one by one; `return()` (the stream stopping its events) ends them. */
export function events() {
  const queue: ExecutionResult[] = [];
  let wake: (() => void) | null = null;
  let done = false;
  let failure: unknown = null;
  const iterator: AsyncIterator<ExecutionResult> & { returned: number } = {
    returned: 0,
    async next() {
      for (;;) {
        if (failure !== null) throw failure;
        if (queue.length > 0) return { done: false, value: queue.shift()! };
        if (done) return { done: true, value: undefined };
        await new Promise<void>((r) => (wake = r));
      }
    },
    async return() {
      iterator.returned++;
      done = true;
      wake?.();
      return { done: true, value: undefined };
    },
  };
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    iterator,
    push: (data: Record<string, unknown>) => (queue.push({ data }), poke()),
    finish: () => ((done = true), poke()),
    fail: (error: unknown) => ((failure = error), poke()),
  };
}

export function stream(over: Partial<CallbackStreamOptions> = {}) {
  const source = events();
  const ends: string[] = [];
  const failures: [string, string][] = [];
  const s = callbackStream({
    target: target(),
    heartbeatMs: 0,
    timeoutMs: 5_000,
    events: source.iterator,
    present: (result) => ({ data: result.data ?? null, extensions: { presented: true } }),
    failure: (error) => [{ message: `failed: ${(error as Error).message}`, extensions: { code: 'STREAM_FAILED' } }],
    onEnd: (how) => ends.push(how),
    onDeliveryFailed: (action, detail) => failures.push([action, detail]),
    ...over,
  });
  return { s, source, ends, failures };
}

export async function until(condition: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
