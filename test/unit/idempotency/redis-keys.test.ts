/** Where the Redis idempotency store keeps a caller's records: one server's layout unchanged, a cluster's by partition. */
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_PARTITIONS, idempotencyKeys } from '../../../src/idempotency/redis-keys.js';

const tagOf = (key: string) => /\{([^}]*)\}/.exec(key)?.[1] ?? null;

describe('the idempotency store\'s keys', () => {
  it('on one server: the names every version wrote, one marker', () => {
    const keys = idempotencyKeys('p:', null);
    expect(keys.markers).toEqual(['p:continuity']);
    expect(keys.record('caller-a', 'abc')).toBe('p:abc');
    expect(keys.callerIndex('caller-a')).toBe('p:caller:caller-a');
    expect(keys.partitionOf('caller-a')).toBe(0);
  });

  it('on a cluster: a record, its caller\'s index and its partition\'s marker share one hash tag', () => {
    const keys = idempotencyKeys('p:', IDEMPOTENCY_PARTITIONS);
    expect(keys.markers).toHaveLength(IDEMPOTENCY_PARTITIONS);
    for (const caller of ['caller-a', 'caller-b', 'k_1', 'k_2']) {
      const partition = keys.partitionOf(caller);
      const tag = tagOf(keys.record(caller, 'abc'));
      expect(tag).toBe(`idem:${partition}`);
      expect(tagOf(keys.callerIndex(caller))).toBe(tag);
      expect(tagOf(keys.markers[partition]!)).toBe(tag);
    }
  });

  it('spreads callers whose ids differ only at the end over the partitions', () => {
    const keys = idempotencyKeys('p:', IDEMPOTENCY_PARTITIONS);
    const used = new Set(Array.from({ length: 200 }, (_, i) => keys.partitionOf(`key_${i}`)));
    expect(used.size).toBe(IDEMPOTENCY_PARTITIONS);
  });
});
