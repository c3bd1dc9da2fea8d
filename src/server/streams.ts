/**
 * Webhooks in, subscriptions out: the realtime core (src/realtime) and the three stream transports
 * (WebSocket, SSE, the router's HTTP callbacks) over the same schema, context and door as HTTP.
 */
import type http from 'node:http';
import type { Config } from '../config.js';
import type { ContextDeps } from '../context.js';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { Logger } from '../logger.js';
import type { RedisLinks } from '../redis.js';
import type { KeyStatus } from '../access/key-status.js';
import type { Admission } from '../access/admission.js';
import { attachSubscriptions } from '../http/websocket.js';
import { createSseRoute } from '../http/sse.js';
import { createCallbackSubscriptions } from '../http/subscription-callback.js';
import { createReconciler, startRealtime, type DeliveryLedger } from '../realtime/index.js';
import { keyId, UpstreamNotFoundError } from '../upstream/index.js';

export interface StreamDeps {
  config: Readonly<Config>;
  logger: Logger;
  links: RedisLinks;
  keys: KeyStatus;
  httpServer: http.Server;
  schema: GraphQLSchema;
  context: ContextDeps;
  admission: Admission;
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** Without REDIS_URL: the webhook ledger, in memory when absent. */
  ledger?: DeliveryLedger | undefined;
}

export async function startStreams({ config, logger, links, keys, httpServer, schema, context, admission, formatError, ledger }: StreamDeps) {
  const { upstream, polls } = context;
  const realtime = await startRealtime({ redis: config.redis, logger, links, logMaxEvents: config.eventLogMaxEvents, ledger });
  const reconciler = createReconciler({
    settings: config.reconcile,
    bus: realtime.bus,
    log: realtime.log,
    lease: realtime.lease,
    logger,
    // With a subscriber's own key, and an operation's deadline: a re-read is the subscriber's read, made later.
    read: async (apiKey, kind, id) => {
      const api = upstream.forKey(apiKey, { deadlineAt: Date.now() + config.operationDeadlineMs, gate: null });
      // What the answer says of the subscriber's key is learned: a revoked key's streams end (admission), everywhere.
      const current = keys.heard(keyId(apiKey), kind === 'transaction' ? api.transactions.retrieve(id) : api.payouts.retrieve(id));
      const snapshot = await current.catch((error: unknown) => {
        if (error instanceof UpstreamNotFoundError) return null;
        throw error;
      });
      // A change found here leaves no cached copy behind, on any instance, before subscribers hear of it.
      await polls?.reread(kind, id, snapshot);
      return snapshot;
    },
  });
  polls?.start((target) => reconciler.watch(target));
  const queueLimit = config.subscriptionQueueLimit;
  const shared = { schema, bus: realtime.bus, reconciler, context, admission, formatError };
  const websocket = attachSubscriptions({
    ...shared,
    httpServer,
    path: '/graphql',
    limits: { queueLimit, maxBufferedBytes: config.subscriptionMaxBufferedBytes, maxSubscriptionsPerConnection: 100 },
  });
  const sse = createSseRoute({ ...shared, limits: { queueLimit, maxBufferedBytes: config.subscriptionMaxBufferedBytes } });
  const callbacks = createCallbackSubscriptions({ ...shared, queueLimit });
  return {
    realtime,
    reconciler,
    websocket,
    sse,
    callbacks,
    stats: () => ({ ...websocket.stats(), ...sse.stats(), ...callbacks.stats() }),
    /** WebSockets must close before the HTTP server can; the realtime core after, by `closeCore`. */
    async closeTransports() {
      await websocket.close();
      sse.close();
      await callbacks.close();
    },
    async closeCore() {
      polls?.close();
      await reconciler.close();
      await realtime.close();
    },
  };
}
