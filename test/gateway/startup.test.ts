import { describe, expect, it } from 'vitest';
import { runMainToExit, spawnMain } from '../realtime/processes.js';

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

  it('refuses an unknown UPSTREAM_HTTP_CLIENT, naming it', async () => {
    const { code, output } = await runMainToExit({ UPSTREAM_HTTP_CLIENT: 'undici' });
    expect(code).toBe(1);
    expect(output).toContain('UPSTREAM_HTTP_CLIENT:');
  });

  it('builds the upstream client with the transport UPSTREAM_HTTP_CLIENT names, and says which when ready', async () => {
    // Nothing is called upstream before the ready line, so the URL need not answer.
    const env = { PAYMENTS_API_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info', UPSTREAM_HTTP_CLIENT: 'node' };
    const httpClientOf = (out: string) => {
      const found = /"msg":"gateway ready"/.test(out) ? /"httpClient":"(\w+)"/.exec(out)?.[1] : undefined;
      return found ? { httpClient: found } : null;
    };
    const gateway = await spawnMain(env, httpClientOf);
    await gateway.stop();
    expect(gateway.found.httpClient).toBe('node');
  });
});
