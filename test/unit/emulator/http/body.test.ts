import { describe, expect, it } from 'vitest';
import { parseBody, parseQuery } from '../../../../emulator/http/body.js';

const form = (s: string) => parseBody(s, 'application/x-www-form-urlencoded');

describe('request bodies and query strings', () => {
  it.each([
    ['amount=100&currency[iso]=XOF', { amount: '100', currency: { iso: 'XOF' } }],
    ['payouts[][id]=1&payouts[][id]=2', { payouts: [{ id: '1' }, { id: '2' }] }],
    [
      'payouts[][id]=1&payouts[][scheduled_at]=2030-01-01&payouts[][id]=2',
      { payouts: [{ id: '1', scheduled_at: '2030-01-01' }, { id: '2' }] },
    ],
    ['payouts[0][id]=1&payouts[1][id]=2&payouts[1][phone_number][number]=64000001', { payouts: [{ id: '1' }, { id: '2', phone_number: { number: '64000001' } }] }],
    ['tags[]=a&tags[]=b', { tags: ['a', 'b'] }],
    // An index is a number however it is written, and the holes between indexes close up.
    ['payouts[01][id]=1&payouts[0003][id]=3&payouts[0003][mode]=mtn', { payouts: [{ id: '1' }, { id: '3', mode: 'mtn' }] }],
    ['__proto__[polluted]=yes&ok=1', { ok: '1' }],
  ])('parses the form body %s', (raw, expected) => {
    expect(form(raw)).toEqual(expected);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('parses JSON, and an empty body as an empty object', () => {
    expect(parseBody('{"a":[1]}', 'application/json')).toEqual({ a: [1] });
    expect(parseBody('', 'application/json')).toEqual({});
  });

  it('rejects a JSON body that does not parse with a 400', () => {
    expect(() => parseBody('{oops', 'application/json')).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('reads filters[...] query parameters as nested objects', () => {
    expect(parseQuery('filters[status]=approved&page=2')).toEqual({ filters: { status: 'approved' }, page: '2' });
  });
});
