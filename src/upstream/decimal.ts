/**
 * An exact decimal amount, kept as its digits from the wire to the caller (docs/upstream.md, Money).
 * It refuses to become a JS number: a type error at compile time, a throw at run time
 * (`Symbol.toPrimitive`), so a cast that silences the compiler still fails.
 */

/** What a caller may write: optional minus, digits, optional fraction (`2500`, `12.50`, `0.125`). */
const INPUT = /^(-?)(\d+)(?:\.(\d+))?$/;
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Longest exponent shift accepted from the wire; beyond, the digits would fill memory. */
const MAX_EXPONENT = 1000;

export class Decimal {
  readonly #text: string;
  readonly #scale: number;
  readonly #sign: -1 | 0 | 1;

  private constructor(negative: boolean, integer: string, fraction: string) {
    const int = integer.replace(/^0+(?=\d)/, '') || '0';
    const frac = fraction.replace(/0+$/, '');
    const zero = /^0$/.test(int) && frac === '';
    this.#sign = zero ? 0 : negative ? -1 : 1;
    this.#scale = frac.length;
    this.#text = `${this.#sign < 0 ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`;
  }

  /** A caller's decimal string, or `null` when it does not follow the input grammar. */
  static parse(text: string): Decimal | null {
    const m = INPUT.exec(text);
    if (!m) return null;
    return new Decimal(m[1] === '-', m[2] ?? '0', m[3] ?? '');
  }

  /** A JSON number token's source text, exactly (exponents are shifted into the digits). */
  static fromJsonNumber(token: string): Decimal {
    const m = JSON_NUMBER.exec(token);
    if (!m) throw new TypeError('not a JSON number token');
    const exponent = m[4] === undefined ? 0 : Number.parseInt(m[4], 10);
    if (Math.abs(exponent) > MAX_EXPONENT) throw new RangeError('JSON number exponent out of range');
    const digits = `${m[2] ?? ''}${m[3] ?? ''}`;
    // Position of the decimal point within `digits`, after the exponent shift.
    const point = (m[2] ?? '').length + exponent;
    const padded = point < 0 ? '0'.repeat(-point) + digits : point > digits.length ? digits + '0'.repeat(point - digits.length) : digits;
    const at = Math.max(point, 0);
    return new Decimal(m[1] === '-', padded.slice(0, at) || '0', padded.slice(at));
  }

  /** Its shortest round-trip text, which is all that number holds. */
  static fromParsedNumber(value: number): Decimal {
    if (!Number.isFinite(value)) throw new RangeError('not a finite number');
    return Decimal.fromJsonNumber(String(value));
  }

  /** Digits after the decimal point, trailing zeros not counted (`12.50` has 1). */
  get scale(): number {
    return this.#scale;
  }

  get sign(): -1 | 0 | 1 {
    return this.#sign;
  }

  equals(other: Decimal): boolean {
    return this.#text === other.#text;
  }

  toString(): string {
    return this.#text;
  }

  /** JSON (logs, the idempotency record) carries the string, never a number. */
  toJSON(): string {
    return this.#text;
  }

  [Symbol.toPrimitive](hint: string): string {
    if (hint === 'number') throw new TypeError('A Decimal never becomes a JS number: use its string form.');
    return this.#text;
  }
}

/** A Decimal, or the canonical string a Decimal was serialised to (a replayed idempotent result). */
export function asDecimal(value: Decimal | string): Decimal {
  if (value instanceof Decimal) return value;
  const parsed = Decimal.parse(value);
  if (!parsed) throw new TypeError('not a decimal string');
  return parsed;
}
