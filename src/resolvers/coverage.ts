/**
 * Compile-time proof that every field of a REST-backed GraphQL type has a
 * source: a model key of the same name (the default resolver reads it) or a
 * resolver in that type's map. A field added to schema/ with neither fails
 * `npm run typecheck`, naming the field (the Server Preset's guarantee,
 * obtained with the plain typescript-resolvers plugin).
 */
import type * as Gql from '../__generated__/resolvers-types.js';
import type * as M from '../upstream/index.js';
import type { currencyResolvers } from './currency.js';
import type { customerResolvers } from './customer.js';
import type { eventResolvers } from './event.js';
import type { logResolvers } from './log.js';
import type { payoutResolvers } from './payout.js';
import type { transactionResolvers } from './transaction.js';
import type { webhookResolvers } from './webhook.js';

/** The model's declared keys, without the index signature of a zod loose object. */
type DeclaredKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };
type Unsourced<GqlType, Model, TypeResolvers> = Exclude<keyof GqlType, '__typename' | DeclaredKeys<Model> | keyof TypeResolvers>;
/** Resolves only when `T` is `never`; otherwise the error message shows the unsourced field names. */
type NoUnsourcedFields<T extends never> = T;

export type Coverage = [
  NoUnsourcedFields<Unsourced<Gql.Transaction, M.TransactionModel, (typeof transactionResolvers)['Transaction']>>,
  NoUnsourcedFields<Unsourced<Gql.PaymentIntent, M.PaymentIntentModel, (typeof transactionResolvers)['PaymentIntent']>>,
  NoUnsourcedFields<Unsourced<Gql.Payout, M.PayoutModel, (typeof payoutResolvers)['Payout']>>,
  NoUnsourcedFields<Unsourced<Gql.Customer, M.CustomerModel, (typeof customerResolvers)['Customer']>>,
  NoUnsourcedFields<Unsourced<Gql.PaymentsPhoneNumber, M.PhoneNumberModel, (typeof customerResolvers)['PaymentsPhoneNumber']>>,
  NoUnsourcedFields<Unsourced<Gql.Currency, M.CurrencyModel, (typeof currencyResolvers)['Currency']>>,
  NoUnsourcedFields<Unsourced<Gql.Webhook, M.WebhookModel, (typeof webhookResolvers)['Webhook']>>,
  NoUnsourcedFields<Unsourced<Gql.Event, M.EventModel, (typeof eventResolvers)['Event']>>,
  NoUnsourcedFields<Unsourced<Gql.Log, M.LogModel, (typeof logResolvers)['Log']>>,
];
