/** Decoded objects through Redis strings: Decimals come back as Decimals, data that looks like a tag as it was. */
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../../src/upstream/codec.js';
import { Decimal } from '../../../src/upstream/decimal.js';

const amount = (text: string) => Decimal.parse(text)!;

describe('codec', () => {
  it('tags a Decimal and brings it back exactly, nested in objects and arrays', () => {
    const value = { id: 7, amount: amount('12345678901234567890.125'), lines: [{ fee: amount('0.1') }, null, 'x'] };
    const text = encode(value);
    expect(text).toContain('{"$decimal":"12345678901234567890.125"}');
    const back = decode(text) as typeof value;
    expect(back.amount).toBeInstanceOf(Decimal);
    expect(back.amount.toString()).toBe('12345678901234567890.125');
    expect((back.lines[0] as { fee: Decimal }).fee.equals(amount('0.1'))).toBe(true);
    expect(back.lines.slice(1)).toEqual([null, 'x']);
    expect(back.id).toBe(7);
  });

  it('gives back custom data shaped like a tag as the data it was, however many dollars it has', () => {
    for (const data of [{ $decimal: '5' }, { $$decimal: '5' }, { $$$decimal: { deep: true } }, { $decimal: 'not a number' }]) {
      const back = decode(encode({ custom_metadata: data })) as { custom_metadata: unknown };
      expect(back.custom_metadata).toEqual(data);
      expect(back.custom_metadata).not.toBeInstanceOf(Decimal);
    }
  });

  it('leaves objects with other keys, or with a tag-like key among others, as they are', () => {
    const value = { a: { decimal: '1' }, b: { $decimal: '1', other: 2 }, c: { 'x$decimal': '1' } };
    expect(decode(encode(value))).toEqual(value);
  });

  it('keeps a written tag that holds no Decimal\'s text as the object it is', () => {
    expect(decode('{"$decimal":"1e5"}')).toEqual({ $decimal: '1e5' });
    expect(decode('{"$decimal":12}')).toEqual({ $decimal: 12 });
    expect(decode('{"$decimal":"-3.50"}')).toBeInstanceOf(Decimal);
  });
});
