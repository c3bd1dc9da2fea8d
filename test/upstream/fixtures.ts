/** Factories for upstream wire objects (snake_case, with `klass` as the API sends it). */

export function aTransaction(overrides: Record<string, unknown> = {}) {
  return {
    klass: 'v1/transaction',
    id: 101,
    reference: 'trx_ref_101',
    amount: 2500,
    description: 'Order 42',
    callback_url: 'https://shop.example/callback',
    status: 'pending',
    customer_id: 7,
    currency_id: 1,
    mode: 'mtn',
    metadata: {},
    custom_metadata: { order: 42 },
    created_at: '2024-05-01T10:00:00.000Z',
    updated_at: '2024-05-01T10:00:00.000Z',
    deleted_at: null,
    customer: { klass: 'v1/customer', id: 7, firstname: 'Ada', lastname: 'Lovelace' },
    ...overrides,
  };
}

export function aPayout(overrides: Record<string, unknown> = {}) {
  return {
    klass: 'v1/payout',
    id: 201,
    reference: 'po_ref_201',
    amount: 1000,
    status: 'pending',
    customer_id: 7,
    currency_id: 1,
    mode: 'mtn',
    scheduled_at: null,
    created_at: '2024-05-01T10:00:00.000Z',
    ...overrides,
  };
}

export function aCustomer(overrides: Record<string, unknown> = {}) {
  return {
    klass: 'v1/customer',
    id: 7,
    firstname: 'Ada',
    lastname: 'Lovelace',
    full_name: 'Ada Lovelace',
    email: 'ada@example.com',
    phone_number_id: 3,
    created_at: '2024-05-01T10:00:00.000Z',
    ...overrides,
  };
}

export function aCurrency(overrides: Record<string, unknown> = {}) {
  return {
    klass: 'v1/currency',
    id: 1,
    name: 'FCFA',
    iso: 'XOF',
    code: 952,
    prefix: null,
    suffix: 'CFA',
    div: 1,
    modes: ['mtn', 'moov'],
    default: true,
    ...overrides,
  };
}

export function aWebhook(overrides: Record<string, unknown> = {}) {
  return { klass: 'v1/webhook', id: 11, url: 'https://shop.example/hooks', enabled: true, ssl_verify: true, ...overrides };
}

export function anEvent(overrides: Record<string, unknown> = {}) {
  return { klass: 'v1/event', id: 31, type: 'transaction.approved', entity: aTransaction(), object_id: 101, ...overrides };
}

export function aLog(overrides: Record<string, unknown> = {}) {
  return { klass: 'v1/log', id: 41, method: 'GET', url: '/v1/transactions/101', status: 200, ...overrides };
}

export function anAccount(overrides: Record<string, unknown> = {}) {
  return { klass: 'v1/account', id: 1, name: 'Demo shop', ...overrides };
}

export function aPaymentIntent(overrides: Record<string, unknown> = {}) {
  return { klass: 'v1/payment_intent', reference: 'pi_1', amount: 2500, status: 'pending', mode: 'mtn', ...overrides };
}

export function aPageMeta(overrides: Record<string, unknown> = {}) {
  return { current_page: 2, next_page: 3, prev_page: 1, per_page: 25, total_pages: 4, total_count: 90, ...overrides };
}

/** `{"v1/<name>": value}`, the enveloped shape (docs/upstream.md, Response shapes). */
export function enveloped(name: string, value: unknown, extra: Record<string, unknown> = {}) {
  return { [`v1/${name}`]: value, ...extra };
}
