/**
 * The kinds of setting src/config.ts reads, each refusing a bad value in words for a person: what is
 * expected and what was given ("expected a port number 0-65535, got \"abc\""), never a secret's value.
 */
import { z } from 'zod';

/** Longer values, and any that look like a key or a secret pasted into the wrong variable, are described, not shown. */
const SECRET_LOOKING = /sk_(live|sandbox|test)_|whsec_|secret|token|passw/i;

export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = String(value);
  if (text.length > 40 || SECRET_LOOKING.test(text)) return `a value of ${text.length} characters (not shown)`;
  return JSON.stringify(text);
}

const expected = (what: string) => (issue: { input?: unknown }) => `expected ${what}, got ${shown(issue.input)}`;

/** An empty string counts as unset: `PAYMENTS_API_URL= npm start` means "use the emulator". */
export const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : typeof v === 'number' ? String(v) : v), schema.optional());

function numberField(what: string, { min, max, whole }: { min: number; max?: number; whole: boolean }) {
  const error = expected(what);
  let n = z.number().min(min, { error });
  if (max !== undefined) n = n.max(max, { error });
  if (whole) n = n.int({ error });
  return z
    .string({ error })
    .refine((v) => v.trim() !== '' && Number.isFinite(Number(v)), { error })
    .transform(Number)
    .pipe(n);
}

const range = (min: number, max?: number) => (max === undefined ? `${min} or more` : `from ${min} to ${max}`);

export const port = numberField('a port number 0-65535', { min: 0, max: 65_535, whole: true });
export const wholeNumber = (min: number, max?: number) => numberField(`a whole number ${range(min, max)}`, { min, max, whole: true });
export const decimal = (min: number, max?: number) => numberField(`a number ${range(min, max)}`, { min, max, whole: false });
export const milliseconds = numberField('a whole number of milliseconds, 1 or more', { min: 1, whole: true });

export const flag = z.enum(['true', 'false', '1', '0'], { error: expected('true, false, 1 or 0') }).transform((v) => v === 'true' || v === '1');

export function oneOf<const T extends readonly [string, ...string[]]>(values: T, note = '') {
  const quoted = values.map((v) => JSON.stringify(v));
  const list = quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)!}`;
  return z.enum(values, { error: expected(`${list}${note}`) });
}

/** "an http://", "a redis://", as the scheme is read aloud. */
const article = (scheme: string) => (/^(http|ftp|ssh|smtp)/.test(scheme) ? 'an' : 'a');

/** A URL's value may carry a password or a token: the answer names its scheme at most. */
export function url(schemes: readonly string[]) {
  const wanted = `${schemes.map((s) => `${s}://`).join(' or ')} URL`;
  const shape = (input: unknown) => {
    const text = String(input);
    if (!URL.canParse(text)) return 'a value that is not a URL';
    const scheme = new URL(text).protocol.slice(0, -1);
    return /^[a-z]{1,8}$/.test(scheme) ? `${article(scheme)} ${scheme}:// URL` : 'a URL of another scheme';
  };
  return z.url({ protocol: new RegExp(`^(${schemes.join('|')})$`), error: (issue) => `expected ${article(schemes[0]!)} ${wanted}, got ${shape(issue.input)}` });
}

/** Told by its length only. */
export const secret = (min: number) =>
  z.string().min(min, { error: (issue) => `expected ${min} characters or more, got ${String(issue.input).length}` });

/** A list of entries, each checked by `valid`: the first bad one is named by its place (and shown when `showEntries`). */
export function list(what: string, valid: (entry: string) => boolean, showEntries: boolean) {
  return z.string().superRefine((value, ctx) => {
    const entries = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
    const bad = entries.findIndex((e) => !valid(e));
    if (bad === -1) return;
    const given = showEntries ? shown(entries[bad]) : 'one that is not';
    ctx.addIssue({ code: 'custom', message: `expected ${what}, got ${given} (entry ${bad + 1} of ${entries.length})` });
  });
}
