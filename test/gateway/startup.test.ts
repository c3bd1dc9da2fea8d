import { describe, expect, it } from 'vitest';
import { runMainToExit } from '../realtime/processes.js';

describe('start-up configuration', () => {
  it('exits non-zero naming every bad variable, without echoing values', async () => {
    const { code, output } = await runMainToExit({
      PORT: 'eighty',
      PAYMENTS_ENV: 'production',
      PAYMENTS_API_URL: 'not a url sk_live_secret',
      LOG_LEVEL: 'chatty',
    });
    expect(code).toBe(1);
    for (const name of ['PORT', 'PAYMENTS_ENV', 'PAYMENTS_API_URL', 'LOG_LEVEL']) expect(output).toContain(`${name}:`);
    expect(output).not.toContain('sk_live_secret');
  });
});
