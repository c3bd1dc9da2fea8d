/**
 * One upstream call, top to bottom, in the five numbered steps of docs/architecture.md
 * ("One upstream call"); the building blocks live beside it, the order and decisions here.
 */
import { ignoredParameter } from './applied.js';
import type { ByteBudget, ByteLease } from './byte-budget.js';
import type { DecodeMemo } from './decode-memo.js';
import { decodeList, decodeMany, decodeOne, decodePage, encodeJsonBody, everyItem, listIn, pageOf, parseJsonBody, type ResourceShape } from './decode.js';
import { checkItemsSliced, parseJsonBodySliced, SLICED_FROM_CHARS, slicerFor } from './decode-sliced.js';
import { DecodeTurns } from './decode-turns.js';
import type { ListItem } from './params.js';
import type { Endpoint, WireRequest } from './endpoints.js';
import {
  errorFromResponse,
  UpstreamConnectionError,
  UpstreamParameterIgnoredError,
  UpstreamRouteMissingError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type UpstreamErrorInit,
} from './errors.js';
import { buildUrl, checkApiKey, checkBodyIds, PRICED_FROM_CHARS, type OperationScope } from './operation-scope.js';
import { keyId } from './key-id.js';
import type { KeyBreaker } from './key-health.js';
import type { AttemptResult, UpstreamObserver } from './observer.js';
import type { CallOptions } from './params.js';
import { countsAgainstKey, countsAgainstRoute, delayBefore, isTransient, sleep, type RouteGuard, type RouteGuards } from './resilience.js';
import { routeIsMissing } from './spec.js';
import type { Transport, TransportRequest } from './transport.js';

/** The key a view of the client calls with, and the scope of its operation (not the gateway's caller: access/auth.ts). */
export interface CallingKey {
  readonly apiKey: string;
  readonly scope: OperationScope;
  /** Made on first use; per-caller fairness and per-key breakers go by it. */
  id?: string;
}

interface Received {
  text: string;
  ctx: UpstreamErrorInit;
  lease?: ByteLease | undefined;
}

interface Flight {
  caller: CallingKey;
  endpoint: Endpoint;
  request: WireRequest;
  url: URL;
  body: string | undefined;
  idempotencyKey: string | undefined;
  signal: AbortSignal | undefined;
  /** Safe to send twice: a read, or a write the upstream deduplicates by its key. */
  repeatable: boolean;
}

/** True: the upstream was unwell; false: it answered (a 4xx included); undefined: no verdict (aborted, never sent). */
interface Verdict {
  failed: boolean | undefined;
}

interface Guards {
  route: RouteGuard;
  key: KeyBreaker;
  keyId: string;
}

export interface CallDeps {
  transport: Transport;
  guards: RouteGuards;
  baseUrl: URL;
  callTimeoutMs: number;
  memo?: DecodeMemo | undefined;
  /** Absent: unbounded. */
  bytes?: ByteBudget | undefined;
  /** Large answers decode in turns (decode-turns.ts); absent: a scheduler of this instance's own. */
  turns?: DecodeTurns | undefined;
  random?: () => number;
  now?: () => number;
}

export class UpstreamCalls {
  observer: UpstreamObserver | undefined;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly memoShapes = new WeakMap<Endpoint, ResourceShape<unknown>>();
  private readonly turns: DecodeTurns;

  constructor(private readonly deps: CallDeps) {
    this.turns = deps.turns ?? new DecodeTurns();
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
  }

  async call(caller: CallingKey, endpoint: Endpoint, args: readonly unknown[]): Promise<unknown> {
    // 1. The operation's gate has admitted the call already, from outside the client (access/upstream-budget.ts).
    // 2. The request, every id checked before any I/O.
    const request = (endpoint.build as (...a: readonly unknown[]) => WireRequest)(...args.slice(0, endpoint.build.length));
    const opts = (args[endpoint.build.length] ?? {}) as CallOptions;
    const url = buildUrl(this.deps.baseUrl, endpoint.pattern, request, endpoint.route);
    checkBodyIds(request.bodyIds, endpoint.route);
    checkApiKey(caller.apiKey, endpoint.route);
    const signal = opts.signal === undefined ? caller.scope.signal : caller.scope.signal === undefined ? opts.signal : AbortSignal.any([opts.signal, caller.scope.signal]);
    signal?.throwIfAborted();
    // Amounts are `Decimal`s, written as JSON number tokens from their digits.
    const body = request.body === undefined ? undefined : encodeJsonBody(request.body);
    const repeatable = endpoint.method === 'GET' || opts.idempotencyKey !== undefined;
    const received = await this.exchange({ caller, endpoint, request, url, body, idempotencyKey: opts.idempotencyKey, signal, repeatable });
    // 5. The answer; its bytes count as in flight until it is decoded.
    try {
      const answer = await this.decode(endpoint, request, received, caller.id ?? keyId(caller.apiKey));
      if (received.text.length >= PRICED_FROM_CHARS) caller.scope.onLargeAnswer?.(received.text.length);
      return answer;
    } finally {
      received.lease?.release();
    }
  }

  /** 3. The retry loop, and 4. each attempt in it. A 4xx is a healthy answer to both breakers. */
  private async exchange(flight: Flight): Promise<Received> {
    const { route } = flight.endpoint;
    const { deadlineAt } = flight.caller.scope;
    const { retry } = this.deps.guards.options;
    const id = (flight.caller.id ??= flight.caller.scope.keyId ?? keyId(flight.caller.apiKey));
    const guards: Guards = { route: this.deps.guards.of(route), key: this.deps.guards.keys.of(route, id), keyId: id };
    const { route: guard, key: mine } = guards;
    mine.budget.deposit();
    guard.budget.deposit();
    for (let n = 1; ; n++) {
      const timeoutMs = this.attemptTimeout(route, deadlineAt);
      // The key's own breaker, open: not transient, so never retried.
      if (!mine.allow(this.now())) throw new UpstreamUnavailableError({ route, reason: 'circuit_open' });
      const verdict: Verdict = { failed: undefined };
      let error: unknown;
      try {
        // opossum only holds the route's state; `health` decides. Its action is Reflect.apply: no closure per attempt.
        return (await guard.breaker.fire(this.guarded, this, [flight, guards, n, timeoutMs, verdict])) as Received;
      } catch (e) {
        // opossum refuses with its own error while the route is open.
        error = (e as { code?: unknown } | null)?.code === 'EOPENBREAKER' ? new UpstreamUnavailableError({ route, reason: 'circuit_open' }) : e;
      } finally {
        if (verdict.failed === undefined) mine.abandonTrial();
        else mine.record(verdict.failed, this.now());
      }
      if (flight.signal?.aborted) throw error;
      if (!flight.repeatable || n >= retry.maxAttempts || !isTransient(error)) throw error;
      const delay = delayBefore(retry, n, error, this.random);
      if (delay === null) throw error;
      if (deadlineAt !== undefined && this.now() + delay >= deadlineAt) throw error;
      // Both, or neither: a key's own budget keeps it from spending others' retries; the route's keeps
      // many keys from multiplying the retries a rate-limited or failing upstream receives.
      if (mine.budget.available < 1 - 1e-9 || !guard.budget.tryWithdraw() || !mine.budget.tryWithdraw()) {
        this.observer?.retryBudgetExhausted(route);
        throw error;
      }
      this.observer?.retry(route);
      await sleep(delay, flight.signal);
    }
  }

  private async guarded(flight: Flight, { route: guard, keyId: key }: Guards, n: number, timeoutMs: number, verdict: Verdict): Promise<Received> {
    const { route } = flight.endpoint;
    const { signal } = flight;
    try {
      const queuedAt = this.now();
      const release = await guard.bulkhead.acquire(timeoutMs, signal, key);
      if (!release) throw new UpstreamUnavailableError({ route, reason: 'route_saturated' });
      let received: Received;
      try {
        received = await this.send(flight, n, Math.max(1, timeoutMs - (this.now() - queuedAt)));
      } finally {
        release();
      }
      verdict.failed = false;
      guard.health.record(key, false, this.now());
      return received;
    } catch (error) {
      verdict.failed = countsAgainstKey(error) ? true : signal?.aborted || error instanceof UpstreamUnavailableError ? undefined : false;
      // The route hears only what says the upstream is unwell; a size failure is the key's alone.
      const routeFailed = verdict.failed === undefined ? undefined : countsAgainstRoute(error);
      // A half-open trial that fails reopens the route: it was opened by many keys' failures.
      const reopen = routeFailed === true && guard.breaker.halfOpen;
      if (routeFailed !== undefined && (guard.health.record(key, routeFailed, this.now()) || reopen)) guard.breaker.open();
      throw error;
    }
  }

  private async send(flight: Flight, n: number, timeoutMs: number): Promise<Received> {
    const { caller, endpoint, idempotencyKey } = flight;
    const { route, method, pattern } = endpoint;
    const { scope } = caller;
    const watch = this.observer?.attempt({ method, pattern, attempt: n, operation: scope.observed });
    // Filled field by field rather than spread from optional parts: one object each, made once per attempt.
    const headers: Record<string, string> = { ...watch?.headers };
    headers['authorization'] = `Bearer ${caller.apiKey}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (scope.requestId !== undefined) headers['x-request-id'] = scope.requestId;
    const lease = this.deps.bytes?.lease(caller.id ?? keyId(caller.apiKey));
    const sent: TransportRequest = { route, method, headers, timeoutMs };
    if (flight.body !== undefined) sent.body = flight.body;
    if (flight.signal !== undefined) sent.signal = flight.signal;
    if (lease !== undefined) sent.bytes = lease;
    let response;
    try {
      // The transport's failures are already typed, and an abort rejects with the caller's reason (transport.ts).
      response = await this.deps.transport.send(flight.url, sent);
    } catch (error) {
      lease?.release();
      watch?.end(attemptFailure(error, flight.signal));
      throw error;
    }
    const status = response.statusCode;
    watch?.end({ status });
    const requestIdHeader = response.headers['x-request-id'];
    const ctx: UpstreamErrorInit = typeof requestIdHeader === 'string' ? { route, requestId: requestIdHeader } : { route };
    if (status >= 200 && status < 300) return { text: response.body, ctx, lease };
    // An error answer is read into its typed error below and then dropped.
    lease?.release();
    if (routeIsMissing(status, pattern, flight.request.bodyIds)) throw new UpstreamRouteMissingError({ ...ctx, statusCode: status, beyondSpec: !endpoint.spec });
    throw errorFromResponse(status, response.body, response.headers['retry-after'], { ...ctx, statusCode: status }, caller.apiKey);
  }

  /** 5. The answer; a large one in turns with other keys' large answers, so it stalls no one (docs/performance.md, "Large pages"). */
  private async decode(endpoint: Endpoint, request: WireRequest, { text, ctx }: Received, key: string): Promise<unknown> {
    const shape = this.shapeOf(endpoint);
    const what = endpoint.kind === 'one' || endpoint.kind === 'byId' ? shape.name : shape.plural;
    if (text.length < SLICED_FROM_CHARS) return this.decodeBody(endpoint, request, parseJsonBody(text, what, ctx), ctx, shape);
    const slicer = slicerFor(this.turns, key);
    await slicer.next();
    const body = await parseJsonBodySliced(text, what, ctx, slicer);
    const list = endpoint.kind === 'one' || endpoint.kind === 'byId' ? null : listIn(body, shape);
    const items = list === null ? undefined : await checkItemsSliced(body, list, shape, ctx, slicer);
    return this.decodeBody(endpoint, request, body, ctx, shape, items);
  }

  /** `items`: the body's list, checked already. */
  private decodeBody(endpoint: Endpoint, request: WireRequest, body: unknown, ctx: UpstreamErrorInit, shape: ResourceShape<unknown>, items?: ListItem<unknown>[]): unknown {
    switch (endpoint.kind) {
      case 'one':
        return decodeOne(body, shape, ctx);
      case 'byId':
        // The spec's reads of currencies, webhooks, events and logs answer arrays: take that object, or none.
        return decodeOne(body, shape, ctx, request.path?.['id']);
      case 'many':
        return items === undefined ? decodeMany(body, shape, ctx) : everyItem(items);
      case 'list':
        return items ?? decodeList(body, shape, ctx);
      case 'page': {
        const requested = request.requested ?? {};
        const page = items === undefined ? decodePage(body, shape, ctx, requested) : pageOf(body, items, ctx, requested);
        const ignored = ignoredParameter(page, requested);
        if (ignored !== null) throw new UpstreamParameterIgnoredError({ ...ctx, parameter: ignored });
        return page;
      }
    }
  }

  /** Made once per endpoint rather than once per call. */
  private shapeOf(endpoint: Endpoint): ResourceShape<unknown> {
    const { memo } = this.deps;
    if (!memo) return endpoint.shape;
    let shape = this.memoShapes.get(endpoint);
    if (shape === undefined) this.memoShapes.set(endpoint, (shape = { ...endpoint.shape, memo }));
    return shape;
  }

  private attemptTimeout(route: string, deadlineAt: number | undefined): number {
    if (deadlineAt === undefined) return this.deps.callTimeoutMs;
    const left = deadlineAt - this.now();
    if (left <= 0) throw new UpstreamTimeoutError({ route, timeoutMs: 0 });
    return Math.min(this.deps.callTimeoutMs, left);
  }
}

/** A refused answer (too large, compressed) keeps its status for the observer; anything else is named by its cause. */
function attemptFailure(error: unknown, signal: AbortSignal | undefined): AttemptResult {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number') return { status };
  if (signal?.aborted) return { failure: 'aborted' };
  if (error instanceof UpstreamTimeoutError) return { failure: 'timeout' };
  if (error instanceof UpstreamConnectionError) return { failure: 'connection', reason: error.connectionReason };
  return { failure: 'other' };
}
