/**
 * A key the payments API refuses: HTTP 401 the first time, when the upstream's 401 teaches the gateway,
 * and every time after, when the door refuses it before any call. One cause, one status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('a key the payments API refuses', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('answers 401 with UNAUTHENTICATED the first time and the times after', async () => {
    const key = newKey('refused');
    const revoked = await fetch(`${stack.emulator.url}/_emulator/keys/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: key }) });
    expect(revoked.ok).toBe(true);
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ currencies { iso } }' }),
      });
      const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
      answers.push({ status: res.status, code: body.errors?.[0]?.extensions?.code });
    }
    expect(answers).toEqual(Array.from({ length: 3 }, () => ({ status: 401, code: 'UNAUTHENTICATED' })));
  });
});
