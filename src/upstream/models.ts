/**
 * The REST API's resources on the wire (snake_case), validated with zod: tolerant where the API
 * family varies (absent fields, `null`, extra fields), strict where a wrong type is a wrong answer.
 */
import { z } from 'zod';
import { Decimal } from './decimal.js';
import { normaliseTimestamp } from './timestamps.js';

const id = z.number().int();
const timestamp = z.union([z.string(), z.number()]).transform(normaliseTimestamp).nullish();
/** A plain number is accepted only from a body whose every number read back as its own text, so it holds every digit sent. */
const money = z.union([
  z.custom<Decimal>((v) => v instanceof Decimal),
  z.number().refine(Number.isFinite).transform((n) => Decimal.fromParsedNumber(n)),
]);
const amount = money.nullish();
const str = z.string().nullish();
const jsonObject = z.record(z.string(), z.unknown()).nullish();

const owned = { account_id: id.nullish(), created_at: timestamp, updated_at: timestamp };
/** ...and those the API deletes softly (`deleted_at` set, the object still readable). */
const softDeleted = { ...owned, deleted_at: timestamp };

function ownedModel<S extends z.ZodRawShape>(fields: S) {
  return z.looseObject({ id, ...fields, ...owned });
}
function softDeletedModel<S extends z.ZodRawShape>(fields: S) {
  return z.looseObject({ id, ...fields, ...softDeleted });
}

const charges = { commission: amount, fees: amount, fixed_commission: amount, amount_transferred: amount, amount_debited: amount };
const payment = {
  ...softDeleted,
  ...charges,
  reference: str,
  customer_id: id.nullish(),
  currency_id: id.nullish(),
  mode: str,
  last_error_code: str,
  metadata: jsonObject,
  custom_metadata: jsonObject,
  payment_method_id: id.nullish(),
  transaction_key: str,
  merchant_reference: str,
  balance_id: id.nullish(),
};

/** `mode` is absent from the update response (spec, Transaction table): it is optional like every field of `payment`. */
export const transactionModel = z.looseObject({
  ...payment,
  id,
  amount: money,
  status: z.string(),
  description: str,
  callback_url: str,
  approved_at: timestamp,
  canceled_at: timestamp,
  declined_at: timestamp,
  refunded_at: timestamp,
  transferred_at: timestamp,
  receipt_url: str,
  sub_accounts_commissions: z.array(z.unknown()).nullish(),
});
export type TransactionModel = z.infer<typeof transactionModel>;

export const payoutModel = z.looseObject({
  ...payment,
  id,
  amount: money,
  status: z.string(),
  scheduled_at: timestamp,
  sent_at: timestamp,
  failed_at: timestamp,
});
export type PayoutModel = z.infer<typeof payoutModel>;

export const paymentIntentModel = z.looseObject({
  reference: str,
  amount: amount,
  status: z.string(),
  currency_id: id.nullish(),
  mode: str,
  last_error_code: str,
  ...softDeleted,
  approved_at: timestamp,
  canceled_at: timestamp,
  payment_method_id: id.nullish(),
  transaction_key: str,
});
export type PaymentIntentModel = z.infer<typeof paymentIntentModel>;

export const phoneNumberModel = z.looseObject({
  id: id.nullish(),
  number: z.union([z.string(), z.number()]).transform(String),
  country: str,
});
export type PhoneNumberModel = z.infer<typeof phoneNumberModel>;

export const customerModel = softDeletedModel({
  firstname: str,
  lastname: str,
  full_name: str,
  email: str,
  phone_number_id: id.nullish(),
  /** Present when the upstream embeds the phone number; `Customer.phoneNumber` is null otherwise (no read by id). */
  phone_number: phoneNumberModel.nullish(),
});
export type CustomerModel = z.infer<typeof customerModel>;

export const currencyModel = ownedModel({
  name: str,
  iso: z.string(),
  code: z.union([z.number(), z.string()]).nullish(),
  prefix: str,
  suffix: str,
  div: z.number().nullish(),
  modes: z.array(z.string()).nullish(),
  default: z.boolean().nullish(),
});
export type CurrencyModel = z.infer<typeof currencyModel>;

export const webhookModel = ownedModel({
  url: z.string(),
  enabled: z.boolean().nullish(),
  ssl_verify: z.boolean().nullish(),
  disable_on_error: z.boolean().nullish(),
  http_headers: z.union([z.boolean(), z.record(z.string(), z.unknown())]).nullish(),
  /** Only returned by the create call. */
  secret: str,
});
export type WebhookModel = z.infer<typeof webhookModel>;

export const eventModel = softDeletedModel({
  type: z.string(),
  entity: z.record(z.string(), z.unknown()).nullish(),
  object_id: id.nullish(),
});
export type EventModel = z.infer<typeof eventModel>;

export const logModel = ownedModel({
  method: str,
  url: str,
  status: z.number().int().nullish(),
  ip_address: str,
  version: str,
  source: str,
  query: str,
  body: str,
  response: str,
});
export type LogModel = z.infer<typeof logModel>;

export const accountModel = z.looseObject({
  id,
  name: str,
  created_at: timestamp,
  updated_at: timestamp,
});
export type AccountModel = z.infer<typeof accountModel>;

export const transactionTokenModel = z.looseObject({
  token: z.string(),
  url: z.string(),
});
export type TransactionTokenModel = z.infer<typeof transactionTokenModel>;

export const pageMetaModel = z.looseObject({
  current_page: z.number().int().nullish(),
  next_page: z.number().int().nullish(),
  prev_page: z.number().int().nullish(),
  per_page: z.number().int().nullish(),
  total_pages: z.number().int().nullish(),
  total_count: z.number().int().nullish(),
});
export type PageMetaModel = z.infer<typeof pageMetaModel>;

export const MONEY_KEYS = ['amount', 'commission', 'fees', 'fixed_commission', 'amount_transferred', 'amount_debited'] as const;

/** decode.ts makes these keys' numbers `Decimal`s from their source text. */
export const moneyKeysOf: ReadonlyMap<z.ZodType, ReadonlySet<string>> = new Map<z.ZodType, ReadonlySet<string>>([
  [transactionModel, new Set(MONEY_KEYS)],
  [payoutModel, new Set(MONEY_KEYS)],
  [paymentIntentModel, new Set(['amount'])],
]);

/** By `object` or by the type's prefix: webhooks type an entity by the first, the events API by the second. */
export function entityMoneyKeys(event: { object?: unknown; type?: unknown; name?: unknown }): ReadonlySet<string> | undefined {
  const type = typeof event.type === 'string' ? event.type : typeof event.name === 'string' ? event.name : '';
  const kinds = [event.object, type.split('.')[0]];
  return kinds.some((kind) => kind === 'transaction' || kind === 'payout') ? moneyKeysOf.get(transactionModel) : undefined;
}

/** An event's `entity` is a transaction or payout as it was, with that object's amounts. */
export const nestedMoneyKeysOf: ReadonlyMap<z.ZodType, (item: Record<string, unknown>) => Readonly<Record<string, ReadonlySet<string> | undefined>>> = new Map([
  [eventModel, (item: Record<string, unknown>) => ({ entity: entityMoneyKeys(item) })],
]);
