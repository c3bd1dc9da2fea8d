import { describe, expect, it } from 'vitest';
import { normaliseTimestamp } from '../../../src/upstream/timestamps.js';

describe('normaliseTimestamp: every form the API family sends becomes RFC 3339, digits kept', () => {
  it.each([
    ['2024-01-02T10:00:00Z', '2024-01-02T10:00:00Z'],
    ['2024-01-02T10:00:00.123456+01:00', '2024-01-02T10:00:00.123456+01:00'],
    ['2024-01-02 10:00:00', '2024-01-02T10:00:00Z'],
    ['2024-01-02 10:00', '2024-01-02T10:00:00Z'],
    ['2024-01-02T10:00:00.5', '2024-01-02T10:00:00.5Z'],
    ['2024-01-02', '2024-01-02T00:00:00Z'],
    ['2024-01-02t10:00:00z', '2024-01-02T10:00:00Z'],
    ['2024-01-02 10:00:00+0100', '2024-01-02T10:00:00+01:00'],
    [1700000000, '2023-11-14T22:13:20.000Z'],
    [1700000000123, '2023-11-14T22:13:20.123Z'],
    ['1700000000', '2023-11-14T22:13:20.000Z'],
    ['', null],
    [Number.NaN, null],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseTimestamp(input)).toBe(expected);
  });

  it('returns an unknown form as sent, for the field that shows it to fail alone', () => {
    expect(normaliseTimestamp('yesterday')).toBe('yesterday');
  });
});
