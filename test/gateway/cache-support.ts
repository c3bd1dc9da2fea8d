/** Shared by the entity cache suites: webhook bodies and the account behind a key. */
import type { factories, RestObject } from '../support/factories.js';

/** A signed webhook event about one object, as the upstream sends it. */
export function objectEvent(object: string, accountId: number, entity: RestObject, type = `${object}.updated`): string {
  return JSON.stringify({
    id: Math.floor(Math.random() * 1e9),
    name: type,
    type,
    object,
    entity,
    object_id: entity.id,
    account_id: accountId,
    created_at: new Date().toISOString(),
  });
}

export async function accountIdOf(make: ReturnType<typeof factories>): Promise<number> {
  const body = (await make.rest('GET', '/v1/accounts')) as Record<string, unknown>;
  const accounts = (body['v1/accounts'] ?? body['v1/account'] ?? body) as { id: number } | { id: number }[];
  return Array.isArray(accounts) ? accounts[0]!.id : accounts.id;
}
