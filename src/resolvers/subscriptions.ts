/**
 * The Subscription root: live updates from the upstream's webhooks (see
 * src/realtime). Each event carries a snapshot of its object; it is parsed
 * with the same zod model as a REST read and primed into the loaders, so the
 * type's resolvers (relations included) treat it like a query result.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { Context } from '../context.js';
import { forbidden } from '../errors.js';
import type { RealtimeSource } from '../realtime/source.js';
import { eventModel, payoutModel, transactionModel, type PayoutModel, type TransactionModel } from '../upstream/models.js';
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
        // Refuse up front what the caller cannot read: another account's id reads as unknown upstream.
        if (wanted !== undefined && !(await ctx.loaders.transaction.load(wanted))) {
          throw forbidden(`Transaction ${wanted} does not exist or is not readable with this API key.`);
        }
        return source.events((event) => {
          if (!event.current || event.object !== 'transaction' || (wanted !== undefined && event.objectId !== wanted)) return null;
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
        if (wanted !== undefined && !(await ctx.loaders.payout.load(wanted))) {
          throw forbidden(`Payout ${wanted} does not exist or is not readable with this API key.`);
        }
        return source.events((event) => {
          if (!event.current || event.object !== 'payout' || (wanted !== undefined && event.objectId !== wanted)) return null;
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
      subscribe: (_, { types }, ctx) => {
        const wanted = types ? new Set(types) : null;
        return realtime(ctx).events((event) => {
          if (wanted && !wanted.has(event.type)) return null;
          const parsed = eventModel.safeParse({
            id: event.id,
            type: event.type,
            entity: event.entity,
            object_id: event.objectId,
            account_id: event.accountId,
            created_at: event.createdAt,
          });
          return parsed.success ? { paymentEvent: parsed.data } : null;
        });
      },
    },
  },
};
