/**
 * The Subscription root: live updates from the upstream's webhooks (see
 * src/realtime). Each event carries a snapshot of its object; it is parsed
 * with the same zod model as a REST read and primed into the loaders, so the
 * type's resolvers (relations included) treat it like a query result.
 *
 * With an id, `transactionUpdated` and `payoutUpdated` start with the
 * object's current state, are reconciled with the upstream while it is not
 * final (src/realtime/reconciler.ts), and complete after a final state.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { Context } from '../context.js';
import { badUserInput, forbidden } from '../errors.js';
import { followObject } from '../realtime/follow.js';
import { RESUME_MAX_EVENTS, resumeAfter } from '../realtime/resume.js';
import type { RealtimeSource } from '../realtime/source.js';
import { isFinalPayout, isFinalTransaction } from '../payments/rules.js';
import { eventModel, payoutModel, transactionModel, type EventModel, type PayoutModel, type TransactionModel } from '../upstream/models.js';
import { toOptionalUpstreamId } from './support.js';

function realtime(ctx: Context): RealtimeSource {
  if (!ctx.realtime) throw forbidden('Subscriptions are served over GraphQL over WebSocket (graphql-ws) at the same /graphql path.');
  return ctx.realtime;
}

export const subscriptionResolvers: Resolvers = {
  Subscription: {
    transactionUpdated: {
      subscribe: async (_, { id }, ctx) => {
        const source = realtime(ctx);
        const wanted = toOptionalUpstreamId(id, 'id');
        if (wanted !== undefined) {
          const followed = await followObject(source, {
            kind: 'transaction',
            id: wanted,
            read: () => ctx.loaders.transaction.load(wanted),
            parse: (entity) => transactionModel.safeParse(entity).data ?? null,
            isFinal: isFinalTransaction,
            wrap: (transaction) => ({ transactionUpdated: transaction }),
          });
          // Refuse up front what the caller cannot read: another account's id reads as unknown upstream.
          if (!followed) throw forbidden(`Transaction ${wanted} does not exist or is not readable with this API key.`);
          return followed;
        }
        return source.events((event) => {
          if (!event.current || event.object !== 'transaction') return null;
          const parsed = transactionModel.safeParse(event.entity);
          if (!parsed.success) return null;
          return { transactionUpdated: parsed.data };
        });
      },
      resolve: ({ transactionUpdated }: { transactionUpdated: TransactionModel }, _args: unknown, { loaders }: Context) => {
        loaders.transaction.prime(transactionUpdated.id, transactionUpdated);
        return transactionUpdated;
      },
    },

    payoutUpdated: {
      subscribe: async (_, { id }, ctx) => {
        const source = realtime(ctx);
        const wanted = toOptionalUpstreamId(id, 'id');
        if (wanted !== undefined) {
          const followed = await followObject(source, {
            kind: 'payout',
            id: wanted,
            read: () => ctx.loaders.payout.load(wanted),
            parse: (entity) => payoutModel.safeParse(entity).data ?? null,
            isFinal: isFinalPayout,
            wrap: (payout) => ({ payoutUpdated: payout }),
          });
          if (!followed) throw forbidden(`Payout ${wanted} does not exist or is not readable with this API key.`);
          return followed;
        }
        return source.events((event) => {
          if (!event.current || event.object !== 'payout') return null;
          const parsed = payoutModel.safeParse(event.entity);
          if (!parsed.success) return null;
          return { payoutUpdated: parsed.data };
        });
      },
      resolve: ({ payoutUpdated }: { payoutUpdated: PayoutModel }, _args: unknown, { loaders }: Context) => {
        loaders.payout.prime(payoutUpdated.id, payoutUpdated);
        return payoutUpdated;
      },
    },

    paymentEvent: {
      subscribe: async (_, { types, after }, ctx) => {
        const source = realtime(ctx);
        const wanted = types ? new Set(types) : null;
        const toValue = (event: EventModel) => (wanted && !wanted.has(event.type) ? null : { paymentEvent: event });
        const live = source.events((event) => {
          // A re-read snapshot is no upstream event: it has no id to report or resume from.
          if (event.origin === 'snapshot') return null;
          const parsed = eventModel.safeParse({
            id: event.id,
            type: event.type,
            entity: event.entity,
            object_id: event.objectId,
            account_id: event.accountId,
            created_at: event.createdAt,
          });
          return parsed.success ? toValue(parsed.data) : null;
        });
        const afterId = toOptionalUpstreamId(after, 'after');
        if (afterId === undefined) return live;
        return resumeAfter(live, {
          afterId,
          listPage: (page, perPage) => ctx.api.events.list({ page, perPage }),
          toValue,
          idOf: (value) => value.paymentEvent.id,
          tooFarBack: () =>
            badUserInput(`More than ${RESUME_MAX_EVENTS} events happened after event ${afterId}; read them with the events query, then resume after the newest.`, 'after'),
        });
      },
    },
  },
};
