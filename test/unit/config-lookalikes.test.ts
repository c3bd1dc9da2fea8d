/** The edit distance behind "did you mean" (config-lookalikes.ts), and how near a name must be. */
import { describe, expect, it } from 'vitest';
import { editDistance, lookalikeMessage, lookalikes } from '../../src/config-lookalikes.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours as one edit each', () => {
    expect(editDistance('PORT', 'PORT')).toBe(0);
    expect(editDistance('WEBHOOK_SECRET', 'WEBHOOK_SECRETS')).toBe(1);
    expect(editDistance('REDIS_URL', 'REDS_URL')).toBe(1);
    expect(editDistance('REDIS_URI', 'REDIS_URL')).toBe(1);
    expect(editDistance('PAYMENTS_EVN', 'PAYMENTS_ENV')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
    expect(editDistance('', 'ABC')).toBe(3);
    expect(editDistance('ABC', '')).toBe(3);
  });

  it('stops past its limit with limit + 1, and agrees with the full count within it', () => {
    expect(editDistance('PAYMENTS_API_PORT', 'PAYMENTS_API_URL', 2)).toBe(3);
    expect(editDistance('PAYMENTS_API_PORT', 'PAYMENTS_API_URL')).toBe(3);
    expect(editDistance('A', 'ABCDEF', 2)).toBe(3);
    expect(editDistance('LOGLEVEL', 'LOG_LEVEL', 2)).toBe(1);
  });
});

describe('lookalikes', () => {
  it('allows one edit for names of 5 letters or fewer and two for longer ones', () => {
    const known = ['PORT', 'LOG_LEVEL'];
    expect(lookalikes({ POTR: '1', PROT: '1', HOME: '1', LOGLEVL: '1', LGLEVL: '1', LOGLVL: '1' }, known).map((l) => l.name)).toEqual(['POTR', 'PROT', 'LOGLEVL']);
  });

  it('takes a unit left off the end for the setting, only its last word and only for a name of 8 letters or more', () => {
    const known = ['SHUTDOWN_GRACE_MS', 'UPSTREAM_MAX_RESPONSE_BYTES', 'MAX_PAGE_SIZE'];
    expect(lookalikes({ SHUTDOWN_GRACE: '1', UPSTREAM_MAX: '1', MAX_PAGE: '1', MAX: '1' }, known)).toEqual([
      { name: 'SHUTDOWN_GRACE', suggestions: ['SHUTDOWN_GRACE_MS'] },
      { name: 'MAX_PAGE', suggestions: ['MAX_PAGE_SIZE'] },
    ]);
  });

  it('suggests the nearest, every one on a tie, and skips unset variables', () => {
    expect(lookalikes({ WS_MAX_CONNECTION: '1' }, ['WS_MAX_CONNECTIONS', 'WS_MAX_CONNECTIONS_PER_KEY'])).toEqual([{ name: 'WS_MAX_CONNECTION', suggestions: ['WS_MAX_CONNECTIONS'] }]);
    expect(lookalikes({ ABCDEX: '1' }, ['ABCDEY', 'ABCDEZ'])).toEqual([{ name: 'ABCDEX', suggestions: ['ABCDEY', 'ABCDEZ'] }]);
    expect(lookalikes({ WEBHOOK_SECRET: undefined }, ['WEBHOOK_SECRETS'])).toEqual([]);
  });

  it('words a warning with the suggestions', () => {
    expect(lookalikeMessage({ name: 'ABCDEX', suggestions: ['ABCDEY', 'ABCDEZ', 'ABCDEW'] })).toBe('ABCDEX is not a setting: did you mean ABCDEY, ABCDEZ or ABCDEW? (it is ignored)');
  });
});
