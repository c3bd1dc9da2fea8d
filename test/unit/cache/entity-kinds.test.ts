/**
 * Each kind is declared once (cache/entity-kinds.ts) and its readers agree with the declaration: the kinds
 * a webhook evicts, the kinds a router may tag, the root fields whose answers carry a tag, and the TTL
 * setting of each GraphQL type.
 */
import { describe, expect, it } from 'vitest';
import { ENTITY_KINDS, kindsWhere, TAGGED_ROOT_FIELDS, typeTtls } from '../../../src/cache/entity-kinds.js';
import { isTagged } from '../../../src/cache/router-invalidation.js';

describe('the entity kinds', () => {
  it('evict and tag the objects a webhook or a mutation can name; currencies only expire', () => {
    expect([...kindsWhere((d) => d.evictable)]).toEqual(['transaction', 'payout', 'customer']);
    expect(['transaction', 'payout', 'customer', 'currency', 'currencies', 'webhook'].filter(isTagged)).toEqual(['transaction', 'payout', 'customer']);
  });

  it('name the root fields whose answers carry the tag, and no member of Object', () => {
    expect({ ...TAGGED_ROOT_FIELDS }).toEqual({ transaction: 'transaction', payout: 'payout', customer: 'customer' });
    expect(TAGGED_ROOT_FIELDS['constructor']).toBeUndefined();
    expect(TAGGED_ROOT_FIELDS['currency']).toBeUndefined();
  });

  it('bound each type by its setting: final objects by the final TTL, the others by their own', () => {
    expect(typeTtls()).toEqual([
      ['Transaction', 'final', 'transaction'],
      ['Payout', 'final', 'payout'],
      ['Customer', 'customer', 'customer'],
      ['Currency', 'currency', 'currency'],
    ]);
    expect(Object.isFrozen(TAGGED_ROOT_FIELDS)).toBe(true);
    expect(Object.keys(ENTITY_KINDS)).toEqual(['transaction', 'payout', 'customer', 'currency', 'currencies']);
  });
});
