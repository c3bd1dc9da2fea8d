/** A key's one name outside the Authorization header: stable, short, distinct per key and not the key. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyId } from '../../../src/upstream/key-id.js';

describe('keyId', () => {
  const key = 'sk_sandbox_Zq8TESTKEYdoNotLeak123';

  it('is the first 32 hex digits of the key\'s sha256, the same on every call', () => {
    expect(keyId(key)).toBe(createHash('sha256').update(key).digest('hex').slice(0, 32));
    expect(keyId(key)).toMatch(/^[0-9a-f]{32}$/);
    expect(keyId(key)).toBe(keyId(key));
  });

  it('tells keys apart, a one-character difference included, and holds no part of the key', () => {
    const other = `${key.slice(0, -1)}4`;
    expect(keyId(other)).not.toBe(keyId(key));
    expect(keyId(key)).not.toContain('Zq8TEST');
    expect(keyId('')).toHaveLength(32);
  });
});
