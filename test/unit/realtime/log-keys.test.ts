/** The event log's Redis keys: one hash tag per partition, the same partition for an account everywhere. */
import { describe, expect, it } from 'vitest';
import { LOG_PARTITIONS, logKeys, partitionOf } from '../../../src/realtime/log-keys.js';

/** What Redis Cluster hashes: the text between the first `{` and the next `}`. */
const hashTag = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

describe('log keys', () => {
  it('maps an account to one of the partitions, negative ids included', () => {
    expect(LOG_PARTITIONS).toBe(16);
    expect([partitionOf(0), partitionOf(5), partitionOf(16), partitionOf(37), partitionOf(-1), partitionOf(-16)]).toEqual([0, 5, 0, 5, 15, 0]);
    expect(partitionOf(7, 4)).toBe(3);
  });

  it('gives every key a script touches for one account the same hash tag', () => {
    const keys = logKeys('gw:');
    const account = 37;
    const objectKey = `${account}:transaction:9`;
    const tags = [keys.stream(partitionOf(account)), keys.sequence(partitionOf(account)), keys.claim(account, 120), keys.last(objectKey)].map(hashTag);
    expect(new Set(tags)).toEqual(new Set(['events:5']));
  });

  it('names each key after its prefix, partition and object', () => {
    const keys = logKeys('gw:', 4);
    expect(keys.partitions).toBe(4);
    expect(keys.stream(2)).toBe('gw:{events:2}:log');
    expect(keys.sequence(2)).toBe('gw:{events:2}:seq');
    expect(keys.claim(6, 120)).toBe('gw:{events:2}:event:6:120');
    expect(keys.last('6:payout:3')).toBe('gw:{events:2}:last:6:payout:3');
  });

  it('puts an object key that does not start with an account in partition 0', () => {
    const keys = logKeys('gw:');
    expect(hashTag(keys.last('currency:XOF'))).toBe('events:0');
    expect(hashTag(keys.last('x9:transaction:1'))).toBe('events:0');
  });
});
