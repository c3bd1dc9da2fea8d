/**
 * Builds upstream objects through the emulator's REST API (the other side of
 * the wire), so gateway tests start from real state, not pasted JSON.
 */
import type { RunningEmulator } from '../../emulator/index.js';

export interface RestObject {
  id: number;
  [key: string]: unknown;
}

async function rest(emulator: Pick<RunningEmulator, 'url'>, key: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Unwraps `{"v1/<name>": ...}` or returns the bare value. */
function unwrap<T>(body: unknown, name: string): T {
  const record = body as Record<string, unknown>;
  return (record && `v1/${name}` in record ? record[`v1/${name}`] : body) as T;
}

let seq = 0;

export function factories(emulator: Pick<RunningEmulator, 'url'>, key: string) {
  return {
    async customer(overrides: Record<string, unknown> = {}): Promise<RestObject> {
      seq += 1;
      const body = {
        firstname: 'Ama',
        lastname: `Mensah${seq}`,
        email: `ama.mensah${seq}@example.com`,
        phone_number: { number: '64000001', country: 'bj' },
        ...overrides,
      };
      return unwrap(await rest(emulator, key, 'POST', '/v1/customers', body), 'customer');
    },
    async transaction(overrides: Record<string, unknown> = {}): Promise<RestObject> {
      const body = { amount: 1000, description: 'Order', currency: { iso: 'XOF' }, ...overrides };
      return unwrap(await rest(emulator, key, 'POST', '/v1/transactions', body), 'transaction');
    },
    async payout(overrides: Record<string, unknown> = {}): Promise<RestObject> {
      const body = { amount: 500, currency: { iso: 'XOF' }, mode: 'mtn', ...overrides };
      return unwrap(await rest(emulator, key, 'POST', '/v1/payouts', body), 'payout');
    },
    async currencies(): Promise<RestObject[]> {
      return unwrap(await rest(emulator, key, 'GET', '/v1/currencies'), 'currencies');
    },
    rest: (method: string, path: string, body?: unknown) => rest(emulator, key, method, path, body),
  };
}
