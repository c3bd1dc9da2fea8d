/**
 * The Decimal type on its own: its canonical text, its sign, and each way it
 * refuses a value, with the message that says why. (How amounts travel through
 * the gateway is test/unit/payments/rules.money.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { asDecimal, Decimal } from '../../../src/upstream/decimal.js';

describe('Decimal.parse', () => {
  it.each([
    ['2500', '2500', 1, 0],
    ['007.50', '7.5', 1, 1],
    ['-12.50', '-12.5', -1, 1],
    ['0.05', '0.05', 1, 2],
    ['0', '0', 0, 0],
    ['-0.00', '0', 0, 0],
  ])('%s reads as %s, sign %d, scale %d', (input, text, sign, scale) => {
    const d = Decimal.parse(input)!;
    expect([d.toString(), d.sign, d.scale]).toEqual([text, sign, scale]);
  });

  it.each(['', '1e3', '+1', '1.', '.5', '1,5', ' 1'])('refuses %j', (input) => {
    expect(Decimal.parse(input)).toBeNull();
  });
});

describe('Decimal.fromJsonNumber', () => {
  it.each([
    ['15e2', '1500'],
    ['1.5e1', '15'],
    ['5e-1', '0.5'],
    ['12e-2', '0.12'],
    ['1.5e-3', '0.0015'],
    ['-2.50E+1', '-25'],
    ['9007199254740993', '9007199254740993'],
  ])('%s is exactly %s', (token, text) => {
    expect(Decimal.fromJsonNumber(token).toString()).toBe(text);
  });

  it('takes an exponent of 1000 and refuses 1001, whose digits would fill memory', () => {
    expect(Decimal.fromJsonNumber('1e1000').toString()).toBe(`1${'0'.repeat(1000)}`);
    expect(Decimal.fromJsonNumber('1e-1000').toString()).toBe(`0.${'0'.repeat(999)}1`);
    expect(() => Decimal.fromJsonNumber('1e1001')).toThrow(new RangeError('JSON number exponent out of range'));
    expect(() => Decimal.fromJsonNumber('1e-1001')).toThrow(new RangeError('JSON number exponent out of range'));
  });

  it.each(['abc', '01', '1.', '--1', ''])('refuses %j as no JSON number token', (token) => {
    expect(() => Decimal.fromJsonNumber(token)).toThrow(new TypeError('not a JSON number token'));
  });
});

describe('Decimal.fromParsedNumber', () => {
  it('keeps what the number holds', () => {
    expect(Decimal.fromParsedNumber(12.5).toString()).toBe('12.5');
    expect(Decimal.fromParsedNumber(1e21).toString()).toBe(`1${'0'.repeat(21)}`);
  });

  it.each([Number.POSITIVE_INFINITY, Number.NaN])('refuses %s', (value) => {
    expect(() => Decimal.fromParsedNumber(value)).toThrow(new RangeError('not a finite number'));
  });
});

describe('a Decimal as a value', () => {
  it('equals another of the same amount, whatever its trailing zeros, and no other', () => {
    expect(Decimal.parse('12.50')!.equals(Decimal.parse('12.5')!)).toBe(true);
    expect(Decimal.parse('12.50')!.equals(Decimal.parse('12.51')!)).toBe(false);
  });

  it('never becomes a JS number, and says what to use instead', () => {
    const d = Decimal.parse('12.5')!;
    expect(() => Number(d)).toThrow(new TypeError('A Decimal never becomes a JS number: use its string form.'));
    expect(`${d}`).toBe('12.5');
    expect(JSON.stringify({ d })).toBe('{"d":"12.5"}');
  });
});

describe('asDecimal', () => {
  it('answers a Decimal as it is, and reads a decimal string', () => {
    const d = Decimal.parse('3')!;
    expect(asDecimal(d)).toBe(d);
    expect(asDecimal('12.50').toString()).toBe('12.5');
  });

  it('refuses a string that is no decimal', () => {
    expect(() => asDecimal('twelve')).toThrow(new TypeError('not a decimal string'));
  });
});
