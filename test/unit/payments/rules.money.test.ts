/**
 * Money at the upstream boundary: JSON number tokens -> Decimal -> JSON number
 * tokens, exactly, for every currency precision; input amounts checked
 * against the currency's decimals; and a Decimal never becoming a JS number.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountProblem, currencyDecimals } from '../../../src/payments/rules.js';
import { Decimal } from '../../../src/upstream/decimal.js';
import { decodeOne, encodeJsonBody, parseJsonBody, resourceShape } from '../../../src/upstream/decode.js';
import { transactionModel } from '../../../src/upstream/models.js';
import { aTransaction } from '../../upstream/fixtures.js';

const shape = resourceShape('transaction', 'transactions', transactionModel);
const ctx = { route: 'GET /v1/transactions/:id' };

/** A transaction body whose amount and fees are the given raw JSON number tokens. */
function body(amount: string, fees = '0'): string {
  return JSON.stringify({ 'v1/transaction': aTransaction({ amount: '@A@', fees: '@F@' }) })
    .replace('"@A@"', amount)
    .replace('"@F@"', fees);
}

function decode(text: string) {
  return decodeOne(parseJsonBody(text, 'transaction', ctx), shape, ctx);
}

/** The value of a canonical decimal string scaled by 10^scale, as a BigInt (independent of Decimal). */
function scaled(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const [int = '0', frac = ''] = text.replace('-', '').split('.');
  expect(frac.length).toBeLessThanOrEqual(scale);
  const value = BigInt(int + frac.padEnd(scale, '0'));
  return negative ? -value : value;
}

/** Currencies of each precision ISO 4217 has, and a scale no currency has, for the decoder. */
const PRECISIONS = [
  { iso: 'XOF', decimals: 0 },
  { iso: 'JPY', decimals: 0 },
  { iso: 'USD', decimals: 2 },
  { iso: 'KWD', decimals: 3 },
];

const digits = (max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: max });
const integerPart = fc.bigInt({ min: 0n, max: 10n ** 24n });

describe('decoding amounts from the JSON number token', () => {
  it('keeps integers beyond 2^53 and fractions beyond a double exactly', () => {
    const t = decode(body('9007199254740993', '0.12345678901234567890123'));
    expect(String(t.amount)).toBe('9007199254740993');
    expect(String(t.fees)).toBe('0.12345678901234567890123');
    // What JSON.parse would have made of them:
    expect(String(JSON.parse('9007199254740993'))).toBe('9007199254740992');
  });

  it('reads a body with a repeated key as JSON.parse would (the last value), amounts exact', () => {
    const text = body('9007199254740993').replace('"description":', '"description":"first","description":');
    expect(text).toContain('"description":"first","description":');
    const t = decode(text);
    expect(String(t.amount)).toBe('9007199254740993');
    expect(t.description).toBe((JSON.parse(text) as { 'v1/transaction': { description: string } })['v1/transaction'].description);
  });

  it('writes exponents out and drops insignificant zeros', () => {
    expect(String(decode(body('2.5e3')).amount)).toBe('2500');
    expect(String(decode(body('12.50')).amount)).toBe('12.5');
    expect(String(decode(body('1E-7')).amount)).toBe('0.0000001');
    expect(String(decode(body('-0.0')).amount)).toBe('0');
  });

  it('leaves every other number as JSON.parse makes it (ids, metadata)', () => {
    const text = JSON.stringify({ 'v1/transaction': aTransaction({ custom_metadata: { amount: 12.5, n: 3 } }) });
    const t = decode(text);
    expect(t.id).toBe(101);
    expect(t.custom_metadata).toEqual({ amount: 12.5, n: 3 });
  });

  it.each([...PRECISIONS, { iso: 'no currency', decimals: 18 }].map((p) => [p.iso, p.decimals] as const))(
    'round-trips any %s amount (up to %i decimals) exactly: token -> Decimal -> token',
    (_iso, decimals) => {
      fc.assert(
        fc.property(integerPart, digits(decimals), fc.boolean(), (int, frac, exponentForm) => {
          const plain = frac === '' ? `${int}` : `${int}.${frac}`;
          // The same value written with an exponent, as some JSON encoders do.
          const token = exponentForm && frac !== '' ? `${int}${frac}e-${frac.length}`.replace(/^0+(?=\d)/, '') : plain;
          const amount = decode(body(token)).amount;
          expect(scaled(String(amount), decimals)).toBe(BigInt(`${int}${frac.padEnd(decimals, '0')}`));
          // Sent upstream as a number token with the same digits, no quotes, no rounding.
          const sent = encodeJsonBody({ amount });
          expect(sent).toBe(`{"amount":${String(amount)}}`);
          expect(String(decode(body(String(amount))).amount)).toBe(String(amount));
        }),
        { numRuns: 300 },
      );
    },
  );
});

describe('input amounts against the currency decimals', () => {
  it('knows the ISO 4217 minor units', () => {
    expect(PRECISIONS.map((p) => currencyDecimals(p.iso))).toEqual(PRECISIONS.map((p) => p.decimals));
  });

  it.each(PRECISIONS.map((p) => [p.iso, p.decimals] as const))('accepts positive %s amounts with at most %i decimals, refuses the rest', (iso, decimals) => {
    fc.assert(
      fc.property(integerPart, digits(decimals + 3), fc.boolean(), (int, frac, negative) => {
        const text = `${negative ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`;
        const amount = Decimal.parse(text)!;
        const significant = frac.replace(/0+$/, '').length;
        const positive = !negative && (int > 0n || /[1-9]/.test(frac));
        expect(amountProblem(amount, iso) === null).toBe(positive && significant <= decimals);
      }),
      { numRuns: 300 },
    );
  });

  it('names the problem: XOF has no minor unit, zero and negative amounts are refused', () => {
    expect(amountProblem(Decimal.parse('2500.5')!, 'XOF')).toMatch(/XOF has no minor unit/);
    expect(amountProblem(Decimal.parse('2500.50')!, 'USD')).toBeNull();
    expect(amountProblem(Decimal.parse('12.345')!, 'USD')).toMatch(/at most 2 decimals/);
    expect(amountProblem(Decimal.parse('0')!, 'XOF')).toMatch(/greater than 0/);
    expect(amountProblem(Decimal.parse('-3')!, 'XOF')).toMatch(/greater than 0/);
  });

  it('parses only the documented input grammar', () => {
    for (const bad of ['', '1e3', '1.', '.5', '+1', ' 1', '1,5', 'NaN', 'Infinity', '0x10']) expect(Decimal.parse(bad)).toBeNull();
    expect(String(Decimal.parse('007.100'))).toBe('7.1');
  });
});

describe('a Decimal never becomes a JS number', () => {
  const d = Decimal.parse('9007199254740993')!;

  it('throws on every numeric coercion at run time', () => {
    expect(() => Number(d)).toThrow(TypeError);
    expect(() => +(d as unknown as number)).toThrow(TypeError);
    expect(() => (d as unknown as number) * 1).toThrow(TypeError);
    expect(() => Math.round(d as unknown as number)).toThrow(TypeError);
    // Text stays available, and JSON carries the string.
    expect(`${d}`).toBe('9007199254740993');
    expect(JSON.stringify({ d })).toBe('{"d":"9007199254740993"}');
  });

  it('does not type-check where a number is expected (npm run typecheck fails if these compile)', () => {
    // Never called: the lines below exist for the compiler, each must be a type error.
    const compileTimeOnly = (value: Decimal): unknown[] => [
      // @ts-expect-error arithmetic on a Decimal
      value * 2,
      // @ts-expect-error a Decimal is not a number
      Math.round(value),
      // @ts-expect-error parseFloat takes a string
      Number.parseFloat(value),
      // @ts-expect-error a Decimal cannot be assigned to a number
      ((n: number) => n)(value),
    ];
    expect(typeof compileTimeOnly).toBe('function');
  });
});
