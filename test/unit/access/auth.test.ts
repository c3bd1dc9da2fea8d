/**
 * The Authorization header, read the one way every transport reads it: no header is no caller, a header that
 * can never work is refused with its code and HTTP status, and a key is known everywhere by its hash only.
 */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { readCaller } from '../../../src/access/auth.js';
import { keyId } from '../../../src/upstream/key-id.js';

const KEY = 'sk_sandbox_Ab9_-z';

function refusal(read: ReturnType<typeof readCaller>): { code: unknown; status: unknown; message: string } {
  expect(read).toBeInstanceOf(GraphQLError);
  const error = read as GraphQLError;
  return { code: error.extensions.code, status: (error.extensions.http as { status?: number } | undefined)?.status, message: error.message };
}

describe('readCaller', () => {
  it.each([undefined, ''])('no header (%j) is no caller', (header) => {
    expect(readCaller(header, 'sandbox')).toBeNull();
  });

  it('a bearer key of this environment is the caller, named by its hash', () => {
    expect(readCaller(`Bearer ${KEY}`, 'sandbox')).toEqual({ apiKey: KEY, callerId: keyId(KEY) });
    expect(readCaller('Bearer sk_live_x1', 'live')).toEqual({ apiKey: 'sk_live_x1', callerId: keyId('sk_live_x1') });
  });

  it('takes any case of the scheme, several spaces after it and spaces after the key', () => {
    for (const header of [`bearer ${KEY}`, `BEARER ${KEY}`, `Bearer   ${KEY}`, `Bearer\t${KEY}`, `Bearer ${KEY}  `]) {
      expect(readCaller(header, 'sandbox'), header).toEqual({ apiKey: KEY, callerId: keyId(KEY) });
    }
  });

  it.each([
    'Basic dXNlcjpwYXNz',
    `Bearer`,
    `Bearer${KEY}`,
    `Bearer ${KEY} extra`,
    `xBearer ${KEY}`,
    `Token Bearer ${KEY}`,
  ])('%j is not a bearer header: UNAUTHENTICATED, 401, saying the expected form', (header) => {
    expect(refusal(readCaller(header, 'sandbox'))).toEqual({
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'The Authorization header must be "Bearer <secret API key>".',
    });
  });

  it.each([
    'not-a-key',
    'sk_test_abc',
    'sk_sandbox_',
    'sk_sandbox_a.b',
    'sk_sandbox_a/b',
    'xsk_sandbox_abc',
    'sk_sandboxabc',
    'pk_sandbox_abc',
  ])('%j is a malformed key: UNAUTHENTICATED, 401, saying the expected form', (key) => {
    expect(refusal(readCaller(`Bearer ${key}`, 'sandbox'))).toEqual({
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'The API key is malformed: expected sk_sandbox_… or sk_live_….',
    });
  });

  it('a key of the other environment is FORBIDDEN (403), and the message names both environments', () => {
    expect(refusal(readCaller('Bearer sk_live_abc', 'sandbox'))).toEqual({
      code: 'FORBIDDEN',
      status: 403,
      message: 'This gateway serves the sandbox environment; a live key (sk_live_…) cannot be used here. Use a sk_sandbox_ key.',
    });
    expect(refusal(readCaller(`Bearer ${KEY}`, 'live'))).toEqual({
      code: 'FORBIDDEN',
      status: 403,
      message: 'This gateway serves the live environment; a sandbox key (sk_sandbox_…) cannot be used here. Use a sk_live_ key.',
    });
  });

  it('the error never carries the key', () => {
    for (const header of [`Bearer ${KEY}x.y`, 'Bearer sk_live_secretvalue']) {
      const error = readCaller(header, 'sandbox') as GraphQLError;
      expect(JSON.stringify({ message: error.message, extensions: error.extensions })).not.toContain('secretvalue');
      expect(error.message).not.toContain(KEY);
    }
  });
});
