/**
 * The Subscription root over the upstream's webhooks (docs/realtime.md). Each
 * event's snapshot is parsed like a REST read and primed into the loaders, so
 * the type's resolvers treat it like a query result.
 */
import type DataLoader from 'dataloader';
import type { z } from 'zod';
import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { Context } from '../context.js';
import { badUserInput, forbidden } from '../errors.js';
import { followObject } from '../realtime/follow.js';
import type { Snapshot, WatchedKind } from '../realtime/reconciler.js';
import { RESUME_MAX_EVENTS, resumeAfter } from '../realtime/resume.js';
import type { RealtimeSource } from '../realtime/source.js';
import { isFinalPayout, isFinalTransaction } from '../payments/rules.js';
import { eventModel, payoutModel, transactionModel, type EventModel } from '../upstream/index.js';
import { toOptionalUpstreamId } from './support.js';

function realtime(ctx: Context): RealtimeSource {
  if (!ctx.realtime) throw forbidden('Subscriptions are served over GraphQL over WebSocket (graphql-ws) at the same /graphql path, or as Server-Sent Events ("Accept: text/event-stream").');
  return ctx.realtime;
}

interface Followed<F extends string, T extends Snapshot> {
  field: F;
  kind: WatchedKind;
  typename: string;
  model: z.ZodType<T>;
  isFinal(status: string): boolean;
  loader(loaders: Context['loaders']): DataLoader<number, T | null>;
}

/** With an id: the current state, then each newer one until a final state. */
function objectUpdates<F extends string, T extends Snapshot>(spec: Followed<F, T>) {
  const wrap = (value: T) => ({ [spec.field]: value }) as Record<F, T>;
  return {
    subscribe: async (_: unknown, { id }: { id?: string | null }, ctx: Context) => {
      const source = realtime(ctx);
      const wanted = toOptionalUpstreamId(id, 'id');
      if (wanted !== undefined) {
        const followed = await followObject(source, {
          kind: spec.kind,
          id: wanted,
          read: () => spec.loader(ctx.loaders).load(wanted),
          parse: (entity) => spec.model.safeParse(entity).data ?? null,
          isFinal: spec.isFinal,
          wrap,
        });
        // Refuse up front what the caller cannot read: another account's id reads as unknown upstream.
        if (!followed) throw forbidden(`${spec.typename} ${wanted} does not exist or is not readable with this API key.`);
        return followed;
      }
      return source.events((event) => {
        if (!event.current || event.object !== spec.kind) return null;
        const parsed = spec.model.safeParse(event.entity);
        return parsed.success ? wrap(parsed.data) : null;
      });
    },
    resolve: (value: Record<F, T>, _args: unknown, { loaders }: Context) => {
      const object = value[spec.field];
      spec.loader(loaders).prime(object.id, object);
      return object;
    },
  };
}

export const subscriptionResolvers: Resolvers = {
  Subscription: {
    transactionUpdated: objectUpdates({
      field: 'transactionUpdated',
      kind: 'transaction',
      typename: 'Transaction',
      model: transactionModel,
      isFinal: isFinalTransaction,
      loader: (loaders) => loaders.transaction,
    }),
    payoutUpdated: objectUpdates({
      field: 'payoutUpdated',
      kind: 'payout',
      typename: 'Payout',
      model: payoutModel,
      isFinal: isFinalPayout,
      loader: (loaders) => loaders.payout,
    }),

    paymentEvent: {
      subscribe: async (_, { types, after }, ctx) => {
        const source = realtime(ctx);
        const wanted = types ? new Set(types) : null;
        const toValue = (event: EventModel) => (wanted && !wanted.has(event.type) ? null : { paymentEvent: event });
        // Checked before listening: a refused `after` must leave no listener on the bus.
        const afterId = toOptionalUpstreamId(after, 'after');
        const live = source.events((event) => {
          // A re-read snapshot is no upstream event: it has no id to report or resume from.
          if (event.origin === 'snapshot') return null;
          // Types not asked for are dropped before the parse, which every account event would cost.
          if (wanted && !wanted.has(event.type)) return null;
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
