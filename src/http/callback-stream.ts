/**
 * The outbound half of the router's HTTP callback protocol for one subscription. A slow router holds
 * only its own POST; its events wait in the subscription's bounded queue, which ends it when full.
 */
import type { ExecutionResult, FormattedExecutionResult, GraphQLFormattedError } from 'graphql';

/** The protocol version sent on every message, and the one a router must answer `check` with. */
export const CALLBACK_PROTOCOL = 'callback/1.0';

export interface CallbackTarget {
  url: string;
  id: string;
  verifier: string;
}

export type CallbackAction = 'check' | 'next' | 'complete';

/** ok: 2xx; gone: 404 (the router dropped the subscription); failed: any other answer, or none in time. */
export type Delivery = { outcome: 'ok'; status: number; protocol: string | null } | { outcome: 'gone' | 'failed'; detail: string };

/** One POST to the router's callback URL. Never throws; the verifier is never logged or echoed. */
export async function deliver(target: CallbackTarget, action: CallbackAction, extra: Record<string, unknown>, timeoutMs: number): Promise<Delivery> {
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'subscription-protocol': CALLBACK_PROTOCOL },
      body: JSON.stringify({ kind: 'subscription', action, id: target.id, verifier: target.verifier, ...extra }),
      // A redirect would carry the message, verifier and events included, to a URL nobody allowed.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer's body means nothing to the protocol: discarded, never buffered.
    await res.body?.cancel();
    if (res.status === 404) return { outcome: 'gone', detail: 'answered 404' };
    if (res.status < 200 || res.status > 299) return { outcome: 'failed', detail: `answered ${res.status}` };
    return { outcome: 'ok', status: res.status, protocol: res.headers.get('subscription-protocol') };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return { outcome: 'failed', detail: timedOut ? `no answer within ${timeoutMs} ms` : 'could not be reached' };
  }
}

export interface CallbackStreamOptions {
  target: CallbackTarget;
  /** 0: no heartbeats. */
  heartbeatMs: number;
  timeoutMs: number;
  events: AsyncIterator<ExecutionResult>;
  /** A result as the router gets it (errors formatted, answer size capped). */
  present(result: ExecutionResult): FormattedExecutionResult;
  /** The errors of a stream whose events threw. */
  failure(error: unknown): GraphQLFormattedError[];
  onEnd(how: 'completed' | 'gone'): void;
  onDeliveryFailed(action: CallbackAction, detail: string): void;
}

export interface CallbackStream {
  /** Starts sending events and heartbeats (once the router has its answer). */
  start(): void;
  /** Ends the subscription: `complete` (with `errors`) after whatever is in flight. Resolves once sent or given up. */
  end(errors?: GraphQLFormattedError[]): Promise<void>;
}

const failed = (action: CallbackAction, detail: string): GraphQLFormattedError[] => [
  { message: `The gateway's ${action} message to the router's callback URL failed (${detail}): the subscription is closed.`, extensions: { code: 'CALLBACK_FAILED' } },
];

export function callbackStream(o: CallbackStreamOptions): CallbackStream {
  /** `next` and `complete`, one after another: events reach the router in order, and one subscription holds one of them at most. */
  let chain: Promise<unknown> = Promise.resolve();
  let state: 'live' | 'ending' | 'over' = 'live';
  let ended: Promise<void> | null = null;
  let heartbeat: NodeJS.Timeout | undefined;
  let checkInFlight = false;

  const stopEvents = () => {
    clearInterval(heartbeat);
    void o.events.return?.();
  };

  const over = (how: 'completed' | 'gone') => {
    if (state === 'over') return;
    state = 'over';
    stopEvents();
    o.onEnd(how);
  };

  const send = async (action: CallbackAction, extra: Record<string, unknown> = {}): Promise<Delivery['outcome']> => {
    // After a 404, nothing more goes to the router.
    if (state === 'over') return 'gone';
    const delivery = await deliver(o.target, action, extra, o.timeoutMs);
    if (delivery.outcome !== 'ok') o.onDeliveryFailed(action, delivery.detail);
    if (delivery.outcome === 'gone') over('gone');
    else if (delivery.outcome === 'failed' && action !== 'complete') void end(failed(action, delivery.detail));
    return delivery.outcome;
  };

  const post = (action: CallbackAction, extra: Record<string, unknown> = {}): Promise<Delivery['outcome']> => {
    const sent = chain.then(() => send(action, extra));
    chain = sent;
    return sent;
  };

  function end(errors?: GraphQLFormattedError[]): Promise<void> {
    if (ended) return ended;
    if (state === 'over') return (ended = Promise.resolve());
    state = 'ending';
    stopEvents();
    ended = post('complete', errors && errors.length > 0 ? { errors } : {}).then(() => over('completed'));
    return ended;
  }

  const pump = async () => {
    try {
      while (state === 'live') {
        const step = await o.events.next();
        if (step.done || state !== 'live') break;
        if ((await post('next', { payload: o.present(step.value) })) !== 'ok') return;
      }
      await end();
    } catch (error) {
      await end(o.failure(error));
    }
  };

  return {
    start() {
      if (state !== 'live') return;
      if (o.heartbeatMs > 0) {
        heartbeat = setInterval(() => {
          // Outside the chain (a check's order means nothing), so a slow `next` never holds a heartbeat back;
          // one check in flight at a time, so a slow router is not sent a pile of them.
          if (checkInFlight || state !== 'live') return;
          checkInFlight = true;
          void send('check').finally(() => (checkInFlight = false));
        }, o.heartbeatMs);
        heartbeat.unref();
      }
      void pump();
    },
    end,
  };
}
