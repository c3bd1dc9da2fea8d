/**
 * `userErrors` paths and codes, one row per input rule and per upstream 4xx,
 * over every mutation of the schema. Input rules must refuse before any
 * upstream write; upstream refusals are scripted with the emulator's faults
 * (the write route answers the status once) or come from the emulator itself.
 * Each row runs under its own key: an upstream 401 makes the gateway refuse
 * that key for a while, and fixtures stay apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

/** Every mutation, with a document that answers its payload's `userErrors` as `r`. */
const DOCUMENTS = {
  createCustomer: 'mutation ($input: CreateCustomerInput!) { r: createCustomer(input: $input) { userErrors { field code } } }',
  createTransaction: 'mutation ($input: CreateTransactionInput!) { r: createTransaction(input: $input) { userErrors { field code } } }',
  updateTransaction: 'mutation ($id: ID!, $input: UpdateTransactionInput!) { r: updateTransaction(id: $id, input: $input) { userErrors { field code } } }',
  cancelTransaction: 'mutation ($id: ID!) { r: cancelTransaction(id: $id) { userErrors { field code } } }',
  createTransactionToken: 'mutation ($id: ID!) { r: createTransactionToken(id: $id) { userErrors { field code } } }',
  sendTransaction: `mutation ($id: ID!, $mode: String!, $phone: PhoneNumberInput, $token: String) {
      r: sendTransaction(id: $id, mode: $mode, phoneNumber: $phone, token: $token) { userErrors { field code } } }`,
  createPayout: 'mutation ($input: PayoutInput!) { r: createPayout(input: $input) { userErrors { field code } } }',
  updatePayout: `mutation ($id: ID!, $changes: UpdatePayoutInput, $input: PayoutInput) {
      r: updatePayout(id: $id, changes: $changes, input: $input) { userErrors { field code } } }`,
  startPayouts: 'mutation ($payouts: [StartPayoutInput!]!) { r: startPayouts(payouts: $payouts) { userErrors { field code } } }',
} as const;
type Mutation = keyof typeof DOCUMENTS;

/** The objects each row starts from, made under the row's key. */
interface Ids {
  tx: string;
  payout: string;
  /** A second payout, already scheduled (so `startPayouts` leaves it out of the upstream body). */
  scheduled: string;
  customer: string;
  /** The transaction's token, as the upstream gives it: the one `sendTransaction` accepts from a caller. */
  token: string;
}

/** The route each mutation writes to, where a fault answers in the upstream's place. */
const WRITE_ROUTE: Record<Mutation, string> = {
  createCustomer: 'POST /v1/customers',
  createTransaction: 'POST /v1/transactions',
  updateTransaction: 'PUT /v1/transactions/:id',
  cancelTransaction: 'PUT /v1/transactions/:id',
  createTransactionToken: 'POST /v1/transactions/:id/token',
  sendTransaction: 'POST /v1/transactions/:mode',
  createPayout: 'POST /v1/payouts',
  updatePayout: 'PUT /v1/payouts/:id',
  startPayouts: 'PUT /v1/payouts/start',
};

const phone = { number: '64000001', country: 'BJ' };
/** Variables that pass every gateway rule, per mutation. */
const VALID: Record<Mutation, (ids: Ids) => Record<string, unknown>> = {
  createCustomer: () => ({ input: { firstname: 'Ama', lastname: 'Mensah', email: 'ama@example.com', phoneNumber: phone } }),
  createTransaction: () => ({ input: { amountDecimal: '2500', description: 'Order', currency: { iso: 'XOF' }, callbackUrl: 'https://shop.example.com/cb' } }),
  updateTransaction: (ids) => ({ id: ids.tx, input: { description: 'New', callbackUrl: 'https://shop.example.com/cb' } }),
  cancelTransaction: (ids) => ({ id: ids.tx }),
  createTransactionToken: (ids) => ({ id: ids.tx }),
  sendTransaction: (ids) => ({ id: ids.tx, mode: 'mtn', phone, token: ids.token }),
  createPayout: () => ({ input: { amountDecimal: '500', currency: { iso: 'XOF' }, mode: 'mtn' } }),
  updatePayout: (ids) => ({ id: ids.payout, changes: { amountDecimal: '700', mode: 'mtn' } }),
  startPayouts: (ids) => ({ payouts: [{ id: ids.scheduled, phoneNumber: phone }, { id: ids.payout, phoneNumber: phone }] }),
};

type Expected = { field: string[] | null; code: string }[] | { error: string };

interface Row {
  mutation: Mutation;
  /** The rule or upstream answer this row shows. */
  what: string;
  vars: (ids: Ids) => Record<string, unknown>;
  /** The write route answers this once, in the upstream's place. */
  fault?: { status: number; body?: unknown };
  expected: Expected;
  /** Input rules refuse before any upstream write. */
  noWrite?: boolean;
}

/** Variables of `mutation` with `patch` applied to its `input` (or top level when `at` is null). */
const valid = (mutation: Mutation, patch: Record<string, unknown>, at: string | null = 'input') => (ids: Ids) => {
  const base = VALID[mutation](ids);
  return at === null ? { ...base, ...patch } : { ...base, [at]: { ...(base[at] as object), ...patch } };
};

/** `objects` objects nested one in the next, a number at the bottom. */
const nestedObjects = (objects: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < objects; i++) value = { a: value };
  return value;
};

const inputRules: Row[] = ([
  { mutation: 'createCustomer', what: 'a malformed e-mail', vars: valid('createCustomer', { email: 'ama-at-example' }), expected: [{ field: ['input', 'email'], code: 'INVALID' }] },
  { mutation: 'createCustomer', what: 'an unknown country', vars: valid('createCustomer', { phoneNumber: { number: '64000001', country: 'ZZ' } }), expected: [{ field: ['input', 'phoneNumber', 'country'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'a relative callback URL', vars: valid('createTransaction', { callbackUrl: '/checkout/done' }), expected: [{ field: ['input', 'callbackUrl'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'a zero amount', vars: valid('createTransaction', { amountDecimal: '0' }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'decimals XOF does not have', vars: valid('createTransaction', { amountDecimal: '12.5' }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'no amount', vars: valid('createTransaction', { amountDecimal: null }), expected: [{ field: ['input', 'amountDecimal'], code: 'REQUIRED' }] },
  { mutation: 'createTransaction', what: 'both amounts', vars: valid('createTransaction', { amount: 10 }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'a malformed currency code', vars: valid('createTransaction', { currency: { iso: 'X0F' } }), expected: [{ field: ['input', 'currency', 'iso'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'a malformed mode', vars: valid('createTransaction', { mode: 'MTN' }), expected: [{ field: ['input', 'mode'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'a customer id together with details', vars: (ids) => valid('createTransaction', { customer: { id: ids.customer, email: 'ama@example.com' } })(ids), expected: [{ field: ['input', 'customer'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: "a new customer's malformed e-mail", vars: valid('createTransaction', { customer: { firstname: 'A', lastname: 'B', email: 'nope' } }), expected: [{ field: ['input', 'customer', 'email'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: "a new customer's unknown country", vars: valid('createTransaction', { customer: { firstname: 'A', lastname: 'B', email: 'a@example.com', phoneNumber: { number: '1', country: 'ZZ' } } }), expected: [{ field: ['input', 'customer', 'phoneNumber', 'country'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'custom metadata nested deeper than the gateway reads back', vars: valid('createTransaction', { customMetadata: nestedObjects(999) }), expected: [{ field: ['input', 'customMetadata'], code: 'INVALID' }] },
  { mutation: 'createTransaction', what: 'every problem at once', vars: valid('createTransaction', { amountDecimal: '-1', callbackUrl: 'cb', mode: 'MTN' }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }, { field: ['input', 'mode'], code: 'INVALID' }, { field: ['input', 'callbackUrl'], code: 'INVALID' }] },
  { mutation: 'updateTransaction', what: 'a relative callback URL', vars: valid('updateTransaction', { callbackUrl: 'cb' }), expected: [{ field: ['input', 'callbackUrl'], code: 'INVALID' }] },
  { mutation: 'updateTransaction', what: 'a negative amount', vars: valid('updateTransaction', { amountDecimal: '-5' }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'updateTransaction', what: 'an unknown id, read for the amount', vars: (ids) => ({ ...valid('updateTransaction', { amountDecimal: '5' })(ids), id: '999999' }), expected: [{ field: ['id'], code: 'NOT_FOUND' }] },
  { mutation: 'cancelTransaction', what: 'an unknown id', vars: () => ({ id: '999999' }), expected: [{ field: ['id'], code: 'NOT_FOUND' }] },
  { mutation: 'sendTransaction', what: 'a malformed mode', vars: valid('sendTransaction', { mode: 'MTN' }, null), expected: [{ field: ['mode'], code: 'INVALID' }] },
  { mutation: 'sendTransaction', what: 'a blank token', vars: valid('sendTransaction', { token: ' ' }, null), expected: [{ field: ['token'], code: 'INVALID' }] },
  { mutation: 'sendTransaction', what: 'an unknown country', vars: valid('sendTransaction', { phone: { number: '64000001', country: 'ZZ' } }, null), expected: [{ field: ['phoneNumber', 'country'], code: 'INVALID' }] },
  { mutation: 'createPayout', what: 'a customer id together with details', vars: (ids) => valid('createPayout', { customer: { id: ids.customer, firstname: 'A', lastname: 'B' } })(ids), expected: [{ field: ['input', 'customer'], code: 'INVALID' }] },
  { mutation: 'createPayout', what: 'custom metadata nested deeper than the gateway reads back', vars: valid('createPayout', { customMetadata: nestedObjects(999) }), expected: [{ field: ['input', 'customMetadata'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'custom metadata nested deeper than the gateway reads back', vars: valid('updatePayout', { customMetadata: nestedObjects(999) }, 'changes'), expected: [{ field: ['changes', 'customMetadata'], code: 'INVALID' }] },
  { mutation: 'createPayout', what: 'a zero amount', vars: valid('createPayout', { amountDecimal: '0' }), expected: [{ field: ['input', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'decimals XOF does not have (currency read from the payout)', vars: valid('updatePayout', { amountDecimal: '1.5', mode: null }, 'changes'), expected: [{ field: ['changes', 'amountDecimal'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'a customer id together with details', vars: (ids) => valid('updatePayout', { customer: { id: ids.customer, email: 'a@example.com' } }, 'changes')(ids), expected: [{ field: ['changes', 'customer'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'both `changes` and `input`', vars: (ids) => ({ ...VALID.updatePayout(ids), input: VALID.createPayout(ids).input }), expected: [{ field: ['changes'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'neither `changes` nor `input`', vars: (ids) => ({ id: ids.payout }), expected: [{ field: ['changes'], code: 'REQUIRED' }] },
  { mutation: 'updatePayout', what: 'an unknown id, read for the amount', vars: () => ({ id: '999999', changes: { amountDecimal: '5' } }), expected: [{ field: ['id'], code: 'NOT_FOUND' }] },
  { mutation: 'startPayouts', what: 'an unknown id', vars: (ids) => ({ payouts: [{ id: ids.payout, phoneNumber: phone }, { id: '999999', phoneNumber: phone }] }), expected: [{ field: ['payouts', '1', 'id'], code: 'NOT_FOUND' }] },
  { mutation: 'startPayouts', what: 'the same payout twice', vars: (ids) => ({ payouts: [{ id: ids.payout }, { id: ids.payout }] }), expected: [{ field: ['payouts', '1', 'id'], code: 'INVALID' }] },
  { mutation: 'startPayouts', what: 'no payout', vars: () => ({ payouts: [] }), expected: [{ field: ['payouts'], code: 'INVALID' }] },
  { mutation: 'startPayouts', what: 'an unknown country', vars: (ids) => ({ payouts: [{ id: ids.payout, phoneNumber: { number: '1', country: 'ZZ' } }] }), expected: [{ field: ['payouts', '0', 'phoneNumber', 'country'], code: 'INVALID' }] },
] satisfies Row[]).map((row) => ({ ...row, noWrite: true }));

/** The upstream's own refusals, from the emulator as it is (no fault), and a refusal the gateway makes on its answer. */
const emulatorRefusals: Row[] = [
  { mutation: 'createTransaction', what: 'an unknown customer id (422 "no customer with id")', vars: valid('createTransaction', { customer: { id: '999999' } }), expected: [{ field: ['input', 'customer', 'id'], code: 'NOT_FOUND' }] },
  { mutation: 'createTransactionToken', what: 'an unknown id (404)', vars: () => ({ id: '999999' }), expected: [{ field: ['id'], code: 'NOT_FOUND' }] },
  { mutation: 'sendTransaction', what: "a token that is not the transaction's (the gateway refuses it before the send)", vars: valid('sendTransaction', { token: 'tok_from_the_caller' }, null), expected: [{ field: ['token'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: 'an unknown id (404)', vars: () => ({ id: '999999', changes: { mode: 'mtn' } }), expected: [{ field: ['id'], code: 'NOT_FOUND' }] },
];

/** An upstream field error per mutation, with where it must land and as what. */
const FIELD_ERRORS: Record<Mutation, { invalid: [Record<string, string[]>, string[] | null]; required: [Record<string, string[]>, string[] | null] }> = {
  createCustomer: { invalid: [{ 'phone_number.country': ['is not a country'] }, ['input', 'phoneNumber', 'country']], required: [{ lastname: ['lastname is required'] }, ['input', 'lastname']] },
  createTransaction: { invalid: [{ 'customer.email': ['is not valid'] }, ['input', 'customer', 'email']], required: [{ amount: ['amount is required'] }, ['input', 'amountDecimal']] },
  updateTransaction: { invalid: [{ callback_url: ['is not valid'] }, ['input', 'callbackUrl']], required: [{ description: ["can't be blank"] }, ['input', 'description']] },
  // The gateway writes the body itself: the upstream's field names no input of the caller's.
  cancelTransaction: { invalid: [{ status: ['is not valid'] }, null], required: [{ status: ['status is required'] }, null] },
  createTransactionToken: { invalid: [{ id: ['is not valid'] }, null], required: [{ id: ['is missing'] }, null] },
  sendTransaction: { invalid: [{ 'phone_number.country': ['is not valid'] }, ['phoneNumber', 'country']], required: [{ phone_number: ['phone_number is required: the customer has none'] }, ['phoneNumber']] },
  createPayout: { invalid: [{ 'currency.iso': ['unknown currency iso "XOF"'] }, ['input', 'currency', 'iso']], required: [{ mode: ['mode is required'] }, ['input', 'mode']] },
  updatePayout: { invalid: [{ amount: ['amount must be a positive number'] }, ['changes', 'amountDecimal']], required: [{ mode: ['mode is required'] }, ['changes', 'mode']] },
  // Only the pending payout (the caller's item 1) is sent, as the upstream's item 0.
  startPayouts: { invalid: [{ 'payouts[0].phone_number': ['is not valid'] }, ['payouts', '1', 'phoneNumber']], required: [{ 'payouts[0].phone_number': ['phone_number is required'] }, ['payouts', '1', 'phoneNumber']] },
};

/**
 * Where a 404 lands: on the id the mutation names, nowhere when only its body
 * names objects (startPayouts), and when neither its path nor its body names
 * an object the route itself is missing, a GraphQL error
 * (docs/upstream.md, Calls beyond the spec).
 */
const NOT_FOUND_FIELD: Record<Mutation, string[] | null | 'route missing'> = {
  createCustomer: 'route missing',
  createTransaction: 'route missing',
  updateTransaction: ['id'],
  cancelTransaction: ['id'],
  createTransactionToken: ['id'],
  sendTransaction: ['id'],
  createPayout: 'route missing',
  updatePayout: ['id'],
  startPayouts: null,
};

const notFound = (field: string[] | null | 'route missing'): Row['expected'] => (field === 'route missing' ? { error: 'UPSTREAM_UNSUPPORTED' } : [{ field, code: 'NOT_FOUND' }]);

const upstreamStatuses: Row[] = (Object.keys(DOCUMENTS) as Mutation[]).flatMap((mutation): Row[] => {
  const vars = VALID[mutation];
  const body = (errors: Record<string, string[]>) => ({ message: 'Refused', errors });
  const { invalid, required } = FIELD_ERRORS[mutation];
  return [
    { mutation, what: '400 with a field error', vars, fault: { status: 400, body: body(invalid[0]) }, expected: [{ field: invalid[1], code: 'INVALID' }] },
    { mutation, what: '422 with a "required" field error', vars, fault: { status: 422, body: body(required[0]) }, expected: [{ field: required[1], code: 'REQUIRED' }] },
    { mutation, what: '422 without a field map', vars, fault: { status: 422, body: { message: 'Refused' } }, expected: [{ field: null, code: 'UNKNOWN' }] },
    { mutation, what: '404', vars, fault: { status: 404, body: body({ id: ['not found'] }) }, expected: notFound(NOT_FOUND_FIELD[mutation]) },
    { mutation, what: '409', vars, fault: { status: 409, body: body({ status: ['a sent payout cannot be changed'] }) }, expected: [{ field: null, code: 'INVALID_STATE' }] },
    { mutation, what: '401: a GraphQL error, not a user error', vars, fault: { status: 401, body: { message: 'Unauthenticated' } }, expected: { error: 'UNAUTHENTICATED' } },
    { mutation, what: '403: a GraphQL error, not a user error', vars, fault: { status: 403, body: { message: 'Forbidden' } }, expected: { error: 'FORBIDDEN' } },
    // A write without an idempotency key is never retried, so the one 429 is the answer.
    { mutation, what: '429: a GraphQL error, not a user error', vars, fault: { status: 429, body: { message: 'Slow down' } }, expected: { error: 'RATE_LIMITED' } },
  ];
});

/** Upstream field errors that need a particular caller input to land right. */
const upstreamMappings: Row[] = [
  { mutation: 'createTransaction', what: '422 on `amount` when the caller sent the deprecated `amount`', vars: valid('createTransaction', { amountDecimal: null, amount: 2500 }), fault: { status: 422, body: { message: 'x', errors: { amount: ['amount is too large'] } } }, expected: [{ field: ['input', 'amount'], code: 'INVALID' }] },
  { mutation: 'updatePayout', what: '422 under `input`', vars: (ids) => ({ id: ids.payout, input: VALID.createPayout(ids).input }), fault: { status: 422, body: { message: 'x', errors: { 'customer.email': ['is not valid'] } } }, expected: [{ field: ['input', 'customer', 'email'], code: 'INVALID' }] },
  { mutation: 'startPayouts', what: '422 "payout not found" on an item: NOT_FOUND on the caller\'s index', vars: VALID.startPayouts, fault: { status: 422, body: { message: 'x', errors: { 'payouts[0].id': ['payout 12 not found'] } } }, expected: [{ field: ['payouts', '1', 'id'], code: 'NOT_FOUND' }] },
  { mutation: 'startPayouts', what: '422 on the whole list', vars: VALID.startPayouts, fault: { status: 422, body: { message: 'x', errors: { payouts: ['at most 100 payouts per start'] } } }, expected: [{ field: ['payouts'], code: 'INVALID' }] },
  { mutation: 'sendTransaction', what: "422 on a token the gateway got itself: not the caller's field", vars: valid('sendTransaction', { token: null }, null), fault: { status: 422, body: { message: 'x', errors: { token: ['unknown or expired token'] } } }, expected: [{ field: null, code: 'INVALID' }] },
];

describe('userErrors paths and codes of every mutation', () => {
  let stack: Stack;

  beforeAll(async () => {
    // A long settle keeps started payouts and sent transactions where the rows put them.
    stack = await startStack({ emulator: { settleMs: 60_000 }, env: { ENTITY_CACHE: 'false' } });
  });
  afterAll(() => stack.stop());

  it('the table covers every mutation of the schema', async () => {
    const res = await stack.gql<{ __type: { fields: { name: string }[] } }>('{ __type(name: "Mutation") { fields { name } } }');
    const names = res.data!.__type.fields.map((f) => f.name).sort();
    expect(Object.keys(DOCUMENTS).sort()).toEqual(names);
    const rows = [...inputRules, ...emulatorRefusals, ...upstreamStatuses];
    expect([...new Set(rows.map((r) => r.mutation))].sort()).toEqual(names);
  });

  async function fixtures(key: string): Promise<Ids> {
    const f = factories(stack.emulator, key);
    const customer = await f.customer();
    const tx = await f.transaction({ customer: { id: customer.id } });
    const payout = await f.payout({ customer: { id: customer.id } });
    const scheduled = await f.payout({ customer: { id: customer.id } });
    await stack.admin('POST', `/_emulator/payouts/${scheduled.id}/status`, { status: 'scheduled' });
    const { token } = (await f.rest('POST', `/v1/transactions/${tx.id}/token`)) as { token: string };
    return { tx: String(tx.id), payout: String(payout.id), scheduled: String(scheduled.id), customer: String(customer.id), token };
  }

  const writes = async () => {
    const stats = (await stack.admin('GET', '/_emulator/stats')) as { routes: Record<string, number> };
    return Object.entries(stats.routes).filter(([route]) => /^(POST|PUT|DELETE) /.test(route)).reduce((n, [, c]) => n + c, 0);
  };

  it.each([...inputRules, ...emulatorRefusals, ...upstreamStatuses, ...upstreamMappings].map((row) => [row.mutation, row.what, row] as const))(
    '%s: %s',
    async (mutation, _what, row) => {
      const key = newKey('usererr');
      const ids = await fixtures(key);
      await stack.admin('DELETE', '/_emulator/faults');
      if (row.fault) await stack.admin('POST', '/_emulator/faults', { route: WRITE_ROUTE[mutation], times: 1, ...row.fault });
      await stack.resetCounts();
      const res = await stack.gql<{ r: { userErrors: { field: string[] | null; code: string }[] } }>(DOCUMENTS[mutation], row.vars(ids), key);
      // A refused key is 401 however it is learned (refused-key-status.test.ts); everything else is a 200 answer.
      expect(res.status).toBe('error' in row.expected && row.expected.error === 'UNAUTHENTICATED' ? 401 : 200);
      if ('error' in row.expected) {
        expect(res.errors?.map((e) => e.extensions?.code)).toEqual([row.expected.error]);
      } else {
        expect(res.errors).toBeUndefined();
        expect(res.data!.r.userErrors).toEqual(row.expected);
      }
      if (row.noWrite) expect(await writes()).toBe(0);
      if (row.fault) expect(await stack.upstreamCalls(WRITE_ROUTE[mutation])).toBe(1);
    },
  );
});
