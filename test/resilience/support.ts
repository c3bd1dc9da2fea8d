/**
 * Helpers for the resilience suites: GraphQL over HTTP with extra headers,
 * the payout mutations under test, and fault bookkeeping on the emulator.
 */
import type { Stack } from '../support/harness.js';

export interface Answer<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; [k: string]: unknown } }[];
}

export async function post<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  key: string,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

export const CREATE_PAYOUT = `mutation ($input: PayoutInput!, $key: String) {
  createPayout(input: $input, idempotencyKey: $key) { payout { id amount status merchantReference } userErrors { field message code } }
}`;

export const START_PAYOUTS = `mutation ($payouts: [StartPayoutInput!]!, $key: String) {
  startPayouts(payouts: $payouts, idempotencyKey: $key) { payouts { id status scheduledAt } userErrors { field message code } }
}`;

export function payoutInput(amount: number, merchantReference: string) {
  return { amount, currency: { iso: 'XOF' }, mode: 'mtn', merchantReference, customer: { firstname: 'Kofi', lastname: 'Annan', email: 'kofi@example.com', phoneNumber: { number: '64000001', country: 'BJ' } } };
}

export function codes(answer: Answer): string[] {
  return (answer.errors ?? []).map((e) => String(e.extensions?.code));
}

/** Payouts of the account carrying this merchant reference: the upstream side effects of one key. */
export async function payoutsWithReference(stack: Pick<Stack, 'emulator'>, apiKey: string, reference: string): Promise<number> {
  const res = await fetch(`${stack.emulator.url}/v1/payouts?per_page=100`, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = (await res.json()) as { 'v1/payouts': { merchant_reference?: string | null }[] };
  return body['v1/payouts'].filter((p) => p.merchant_reference === reference).length;
}
