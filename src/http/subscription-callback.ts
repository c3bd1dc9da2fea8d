/**
 * Subscriptions over Apollo Router's HTTP callback protocol, admitted like any stream; POSTs go only to
 * URLs under SUBSCRIPTION_CALLBACK_URLS. Why not Apollo's own plugin: docs/routers.md.
 */
import type http from 'node:http';
import { GraphQLError, subscribe, type ExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { ContextDeps } from '../context.js';
import { ErrorCode } from '../errors.js';
import { REVOKED_KEY_MESSAGE, type Admission, type Caller, type StreamRefusal } from '../access/admission.js';
import type { OperationTelemetry } from '../observability/index.js';
import type { EventBus } from '../realtime/bus.js';
import type { Reconciler } from '../realtime/reconciler.js';
import { UpstreamAuthenticationError, UpstreamPermissionError, UpstreamRouteMissingError } from '../upstream/index.js';
import { CALLBACK_PROTOCOL, callbackStream, deliver, type CallbackStream, type CallbackTarget } from './callback-stream.js';
import { clientAddress } from './client-address.js';
import { streamContext, streamedResult } from './realtime-session.js';

/** Heartbeats more often than this would make one subscription a steady stream of POSTs. */
export const MIN_HEARTBEAT_MS = 500;
/** An hour; setInterval turns anything from 2^31 ms up into 1 ms, a POST per millisecond. */
export const MAX_HEARTBEAT_MS = 3_600_000;
const MAX_URL_CHARS = 2048;
const MAX_TOKEN_CHARS = 512;

export interface CallbackDeps {
  schema: GraphQLSchema;
  bus: EventBus;
  reconciler: Reconciler;
  context: ContextDeps;
  queueLimit: number;
  admission: Admission;
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

/** The answer to the router's POST: the result once the subscription runs (`started` then begins it), or a coded refusal. */
export type CallbackAnswer =
  | { status: 200; result: Record<string, unknown>; started?: () => void }
  | { status: number; message: string; code: string; extra?: Record<string, unknown>; retryAfterSeconds?: number };

export interface CallbackSubscriptions {
  /** `fromRouter`: the request carries ROUTER_SHARED_SECRET (graphql-route.ts); when that is set, only such requests open callbacks. */
  open(req: http.IncomingMessage, body: Record<string, unknown>, caller: Caller | null, fromRouter: boolean): Promise<CallbackAnswer>;
  stats(): { callbackSubscriptions: number };
  /** Ends every subscription with `complete` (shutdown), waiting for those POSTs within their time-out. */
  close(): Promise<void>;
}

/** The router's request: a POST whose extensions carry `subscription` (the protocol's only marker). */
export function asksForCallback(body: unknown): body is Record<string, unknown> & { extensions: { subscription: unknown } } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { extensions } = body as Record<string, unknown>;
  return typeof extensions === 'object' && extensions !== null && 'subscription' in extensions;
}

/** A path segment with nothing to decode: no "/", no "%" (so no encoded slash or dot), no query. */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** The normalised callback URL when it is an allowed prefix followed by plain path segments only, else null. */
export function callbackAllowed(raw: string, allowed: readonly string[]): string | null {
  if (raw.length > MAX_URL_CHARS || !URL.canParse(raw)) return null;
  const url = new URL(raw);
  // Credentials always change the host the prefix is compared with, so this cannot change the outcome; it says the intent.
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash || raw.includes('?') || raw.includes('#')) return null;
  const prefix = allowed.find((p) => url.href.startsWith(p));
  if (prefix === undefined) return null;
  return url.href.slice(prefix.length).split('/').every((segment) => PLAIN_SEGMENT.test(segment)) ? url.href : null;
}

const bad = (message: string, reason: string): CallbackAnswer => ({ status: 400, message, code: 'BAD_REQUEST', extra: { reason } });

type Extension = CallbackTarget & { heartbeatMs: number };

function readExtension(value: unknown): Extension | CallbackAnswer {
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const text = (name: string, max: number) => (typeof v[name] === 'string' && v[name].length > 0 && v[name].length <= max ? v[name] : null);
  const url = text('callbackUrl', MAX_URL_CHARS);
  const id = text('subscriptionId', MAX_TOKEN_CHARS);
  const verifier = text('verifier', MAX_TOKEN_CHARS);
  const heartbeatMs = v.heartbeatIntervalMs ?? 0;
  if (url === null || id === null || verifier === null) {
    return bad(`extensions.subscription needs callbackUrl (at most ${MAX_URL_CHARS} characters), subscriptionId and verifier (at most ${MAX_TOKEN_CHARS} each).`, 'CALLBACK_EXTENSION_INVALID');
  }
  if (typeof heartbeatMs !== 'number' || !Number.isInteger(heartbeatMs) || (heartbeatMs !== 0 && (heartbeatMs < MIN_HEARTBEAT_MS || heartbeatMs > MAX_HEARTBEAT_MS))) {
    return bad(`extensions.subscription.heartbeatIntervalMs must be 0 (no heartbeats) or from ${MIN_HEARTBEAT_MS} to ${MAX_HEARTBEAT_MS}.`, 'CALLBACK_EXTENSION_INVALID');
  }
  return { url, id, verifier, heartbeatMs };
}

export function createCallbackSubscriptions(deps: CallbackDeps): CallbackSubscriptions {
  const { config, logger, observability } = deps.context;
  const { allowed, timeoutMs, max } = config.graphql.subscriptionCallbacks;
  const { admission } = deps;
  const addressOf = clientAddress(config.limits.trustedProxies);
  /** Reserved or live subscriptions, all keys together (SUBSCRIPTION_CALLBACK_MAX). */
  let total = 0;
  const live = new Set<CallbackStream>();
  /** Set first thing in close(): no subscription starts after it, and one that was mid-check is ended at once. */
  let closing = false;
  const shuttingDown = (): CallbackAnswer => ({ status: 503, message: 'The gateway is shutting down: subscribe again.', code: 'SHUTTING_DOWN' });
  const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));
  const formatOne = (error: GraphQLError) => format([error]);
  /** The transport's own reasons for ending a subscription: written as they are, not through the resolvers' formatter. */
  const reason = (message: string, code: string): GraphQLFormattedError[] => [{ message, extensions: { code } }];
  const shutdownReason = () => reason('The gateway is shutting down: subscribe again.', 'SHUTTING_DOWN');
  /** `complete` for an id the router registered at its check but that never became a live subscription. */
  const completeNow = async (target: CallbackTarget, errors: readonly GraphQLFormattedError[]): Promise<void> => {
    const sent = await deliver(target, 'complete', { errors }, timeoutMs);
    if (sent.outcome !== 'ok') logger.info({ action: 'complete', detail: sent.detail, origin: new URL(target.url).origin }, 'callback message not delivered');
  };

  const refusal = (refused: StreamRefusal): CallbackAnswer => {
    switch (refused.kind) {
      case 'revoked':
        return { status: 401, message: REVOKED_KEY_MESSAGE, code: ErrorCode.UNAUTHENTICATED };
      case 'cap':
        return { status: 429, message: `At most ${refused.limit} live callback subscriptions per API key.`, code: ErrorCode.RATE_LIMITED };
      case 'slot':
        return { status: 503, message: 'This gateway holds as many callback subscriptions as it may; try again later.', code: 'SUBSCRIPTIONS_FULL' };
      case 'rate': {
        const { by, retryAfterSeconds } = refused.refusal;
        const whose = by === 'key' ? 'with this API key' : 'from this address';
        return { status: 429, message: `Too many subscriptions opened ${whose}; retry later.`, code: ErrorCode.RATE_LIMITED, retryAfterSeconds, extra: { retryAfterSeconds } };
      }
      case 'document': {
        const first = format(refused.errors)[0]!;
        return { status: 400, message: first.message, code: String(first.extensions?.code ?? ErrorCode.BAD_USER_INPUT) };
      }
      case 'not-subscription':
        return bad('extensions.subscription is for subscriptions; send queries and mutations as plain GraphQL over HTTP.', 'NOT_A_SUBSCRIPTION');
      case 'account': {
        const { error } = refused;
        if (error instanceof UpstreamAuthenticationError) return { status: 401, message: 'The payments API rejected this API key.', code: ErrorCode.UNAUTHENTICATED };
        if (error instanceof UpstreamPermissionError) return { status: 403, message: 'Forbidden.', code: ErrorCode.FORBIDDEN };
        if (error instanceof UpstreamRouteMissingError) {
          return { status: 502, message: 'The payments API does not offer GET /v1/accounts, which subscriptions need.', code: ErrorCode.UPSTREAM_UNSUPPORTED };
        }
        logger.warn({ err: error instanceof Error ? { message: error.message } : error }, 'callback subscription refused: account lookup failed');
        return { status: 503, message: 'Upstream unavailable, try again later.', code: ErrorCode.UPSTREAM_UNAVAILABLE };
      }
      case 'gone':
        // No signal is given for a router's request: not reached.
        return shuttingDown();
    }
  };

  async function open(req: http.IncomingMessage, body: Record<string, unknown>, caller: Caller | null, fromRouter: boolean): Promise<CallbackAnswer> {
    if (allowed.length === 0) {
      return bad('Subscriptions over HTTP callbacks are off on this gateway (SUBSCRIPTION_CALLBACK_URLS is unset); use GraphQL over WebSocket.', 'CALLBACKS_OFF');
    }
    // Each subscription makes the gateway POST somewhere: with the router known, no other key holder may ask for that.
    if (config.graphql.routerSharedSecret !== null && !fromRouter) {
      return { status: 403, message: 'Subscriptions over HTTP callbacks are opened by the router only.', code: ErrorCode.FORBIDDEN, extra: { reason: 'NOT_FROM_ROUTER' } };
    }
    if (closing) return shuttingDown();
    const extension = readExtension((body.extensions as Record<string, unknown>).subscription);
    if ('status' in extension) return extension;
    // Checked before anything else is done for the request: a URL outside the list is never called.
    const href = callbackAllowed(extension.url, allowed);
    if (href === null) {
      return bad('extensions.subscription.callbackUrl is not under a callback URL this gateway allows (SUBSCRIPTION_CALLBACK_URLS).', 'CALLBACK_URL_NOT_ALLOWED');
    }
    // The URL the allowlist checked is the one called, not the raw string.
    extension.url = href;
    if (caller === null) {
      return { status: 401, message: 'Authentication required: the router must forward the caller\'s "Authorization: Bearer <secret API key>".', code: ErrorCode.UNAUTHENTICATED };
    }
    const operationName = typeof body.operationName === 'string' ? body.operationName : undefined;
    const variables = typeof body.variables === 'object' && body.variables !== null ? (body.variables as Record<string, unknown>) : {};
    const { callerId } = caller;
    // Set once the subscription exists; a revocation before then (during the check) ends it as soon as it does.
    let revoked = false;
    let endRevoked = () => void (revoked = true);
    // The sequence every streaming transport shares: revoked, per-key cap (then this instance's total), stream rate,
    // document (subscriptions only), account, live.
    const opened = await admission.openStream({
      transport: 'callback',
      caller,
      address: addressOf(req),
      payload: body,
      operationName,
      variables,
      subscriptionsOnly: true,
      slot: {
        take: () => {
          if (total >= max) return false;
          total += 1;
          return true;
        },
        give: () => void (total -= 1),
      },
      onRevoked: () => endRevoked(),
    });
    if ('refused' in opened) return refusal(opened.refused);
    const { stream: admitted } = opened;
    const { accountId, operation } = admitted;
    const release = admitted.release;
    const refused = (answer: CallbackAnswer) => {
      release();
      return answer;
    };

    // The protocol's handshake, before the router gets its answer: the router confirms the id and verifier.
    const check = await deliver(extension, 'check', {}, timeoutMs);
    if (check.outcome !== 'ok' || check.status !== 204 || check.protocol !== CALLBACK_PROTOCOL) {
      const detail = check.outcome !== 'ok' ? check.detail : check.status !== 204 ? `answered ${check.status}, not 204` : `answered without "subscription-protocol: ${CALLBACK_PROTOCOL}"`;
      // The detail is for the operator: told to the caller it would map what answers at the allowed URLs.
      logger.info({ callerId, detail, origin: new URL(extension.url).origin }, 'callback subscription refused: the check failed');
      return refused(bad('The callback check failed: no subscription was started.', 'CALLBACK_CHECK_FAILED'));
    }
    // The router holds the id since its check: tell it, as at any other end.
    if (closing) {
      await completeNow(extension, shutdownReason());
      return refused(shuttingDown());
    }

    const telemetry: OperationTelemetry = observability.startOperation({ transport: 'callback', headers: req.headers });
    telemetry.by(callerId);
    telemetry.named(operationName ?? operation?.name?.value, 'subscription');
    let stream: CallbackStream | null = null;
    // Events may overflow while graphql-js still starts the subscription (a resolver that reads first): ended once it exists.
    let overflowed = false;
    const tooSlowReason = () => reason(`The router did not keep up: more than ${deps.queueLimit} events waited for it. Subscribe again.`, 'SUBSCRIBER_TOO_SLOW');
    const tooSlow = () => {
      logger.warn({ callerId, queueLimit: deps.queueLimit }, 'callback subscription too slow: router not keeping up, subscription completed');
      if (stream) void stream.end(tooSlowReason());
      else overflowed = true;
    };
    const present = (result: ExecutionResult) => streamedResult(result, telemetry, format, admission.documents) ?? result;

    let results: Awaited<ReturnType<typeof subscribe>>;
    try {
      const contextValue = streamContext({
        context: deps.context,
        bus: deps.bus,
        reconciler: deps.reconciler,
        caller,
        accountId,
        telemetry,
        queueLimit: deps.queueLimit,
        // The only pressure is the queue: events wait there while the router takes one POST at a time.
        isCongested: () => false,
        onOverflow: tooSlow,
      });
      results = await subscribe({ schema: deps.schema, document: admitted.document, operationName: operationName ?? null, variableValues: variables, contextValue });
    } catch (error) {
      // graphql-js reports a subscription's own failures as errors; a throw (or a failed context) is a bug: the slot is freed all the same.
      logger.error({ err: error }, 'callback subscription failed to start');
      telemetry.end();
      await completeNow(extension, reason('Internal server error.', ErrorCode.INTERNAL_SERVER_ERROR));
      return refused({ status: 500, message: 'Internal server error.', code: ErrorCode.INTERNAL_SERVER_ERROR });
    }
    if (!(Symbol.asyncIterator in results)) {
      // Refused by its resolver before any event (an unknown or foreign id): the router gets the errors now, and,
      // as it registered the id at the check, a `complete` with them (as Apollo's plugin sends).
      telemetry.end();
      const answer = { data: null, ...present(results) };
      await completeNow(extension, answer.errors ?? []);
      return refused({ status: 200, result: answer });
    }
    observability.subscriptionStarted();
    const subscription = callbackStream({
      target: extension,
      heartbeatMs: extension.heartbeatMs,
      timeoutMs,
      events: results,
      present,
      failure: (error) => formatOne(error instanceof GraphQLError ? error : new GraphQLError('Internal server error.', { originalError: error instanceof Error ? error : undefined })),
      onEnd: (how) => {
        live.delete(subscription);
        release();
        telemetry.end();
        logger.debug({ callerId, how }, 'callback subscription ended');
      },
      onDeliveryFailed: (action, detail) => logger.info({ callerId, action, detail, origin: new URL(extension.url).origin }, 'callback message not delivered'),
    });
    stream = subscription;
    // Shutdown began during the awaits above: close() has already ended what was live, so this one ends here.
    if (closing) {
      await subscription.end(shutdownReason());
      return shuttingDown();
    }
    live.add(subscription);
    // The key revoked on any instance: the subscription ends, and the router is told why.
    endRevoked = () => void subscription.end(reason('The payments API revoked this API key: the subscription is closed.', ErrorCode.UNAUTHENTICATED));
    if (revoked) endRevoked();
    if (overflowed) void subscription.end(tooSlowReason());
    return { status: 200, result: { data: null }, started: () => subscription.start() };
  }

  return {
    open,
    stats: () => ({ callbackSubscriptions: live.size }),
    async close() {
      closing = true;
      await Promise.all([...live].map((s) => s.end(shutdownReason())));
    },
  };
}
