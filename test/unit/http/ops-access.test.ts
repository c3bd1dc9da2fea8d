/** Who reads operational detail: OPS_TOKEN's bearer, or anyone outside production when none is set. */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { opsAccess } from '../../../src/http/ops-access.js';

const TOKEN = 'ops-token-0123456789abcdef';
const asking = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as http.IncomingMessage;

describe('opsAccess', () => {
  it('without a token: open to all outside production, closed to all in production', () => {
    const dev = opsAccess(false, null);
    expect([dev.allows(asking()), dev.tokenSet, dev.closed]).toEqual([true, false, false]);
    const prod = opsAccess(true, null);
    expect([prod.allows(asking()), prod.allows(asking(`Bearer ${TOKEN}`)), prod.tokenSet, prod.closed]).toEqual([false, false, false, true]);
  });

  it('with a token: only its bearer, in production or not', () => {
    for (const production of [true, false]) {
      const access = opsAccess(production, TOKEN);
      expect([access.tokenSet, access.closed]).toEqual([true, false]);
      expect(access.allows(asking(`Bearer ${TOKEN}`))).toBe(true);
      expect(access.allows(asking(`bearer   ${TOKEN}`))).toBe(true);
      expect(access.allows(asking())).toBe(false);
    }
  });

  it('refuses a near miss: another token, a prefix, a longer one, another scheme, trailing words', () => {
    const access = opsAccess(false, TOKEN);
    for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN, `Bearer ${TOKEN} more`, 'Bearer ', ''])
      expect(access.allows(asking(authorization))).toBe(false);
  });
});
