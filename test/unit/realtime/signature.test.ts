/** The webhook signature header, read and checked: each way a header is refused, and the ones that pass. */
import { describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../../emulator/index.js';
import { verifySignature } from '../../../src/realtime/signature.js';

const SECRET = 'whsec_signature_table_0123456789';
const BODY = '{"id":1}';
const NOW = 1_750_000_000;
const signed = (at = NOW) => signWebhookBody(SECRET, BODY, at);
const sig = signed().split(',s=')[1]!;
const check = (header: string | undefined, secrets = [SECRET]) => verifySignature(header, Buffer.from(BODY), { secrets, nowSeconds: NOW });

describe('verifySignature', () => {
  it.each([
    ['the header as the upstream writes it', signed()],
    ['spaces around its parts', ` t = ${NOW} , s = ${sig} `],
    ['a key it does not know, even one that is not hex', `t=${NOW},v1=not-hex,s=${sig}`],
    ['a part with an empty key', `t=${NOW},s=${sig},=junk`],
    ['a timestamp exactly 300 s old', signed(NOW - 300)],
    ['a timestamp exactly 300 s ahead', signed(NOW + 300)],
  ])('takes %s', (_case, header) => {
    expect(check(header)).toEqual({ ok: true });
  });

  it.each([
    ['no secret configured', signed(), [], 'no-secret-configured'],
    ['no header', undefined, [SECRET], 'missing'],
    ['a part without =', `t=${NOW},s=${sig},garbage`, [SECRET], 'malformed'],
    ['two timestamps', `t=${NOW},t=${NOW},s=${sig}`, [SECRET], 'malformed'],
    ['a timestamp that is not digits', `t=x${NOW},s=${sig}`, [SECRET], 'malformed'],
    ['a timestamp with a tail', `t=${NOW}x,s=${sig}`, [SECRET], 'malformed'],
    ['a 13-digit timestamp', `t=1${NOW}000,s=${sig}`, [SECRET], 'malformed'],
    ['no signature', `t=${NOW}`, [SECRET], 'malformed'],
    ['no timestamp', `s=${sig}`, [SECRET], 'malformed'],
    ['a signature that is not hex', `t=${NOW},s=xyz`, [SECRET], 'malformed'],
    ['another secret\'s signature', signWebhookBody('whsec_someone_else', BODY, NOW), [SECRET], 'mismatch'],
    ['a timestamp 301 s old', signed(NOW - 301), [SECRET], 'stale'],
  ] as [string, string | undefined, string[], string][])('refuses %s as %s', (_case, header, secrets, reason) => {
    expect(check(header, secrets)).toEqual({ ok: false, reason });
  });
});
