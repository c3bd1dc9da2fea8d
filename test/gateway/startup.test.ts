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

  it('names a variable that looks like a setting with "did you mean", beside the refusal or as a warning once started, never with its value', async () => {
    const refused = await runMainToExit({ PORT: 'eighty', WEBHOOK_SECRET: 'whsec_never_shown', EMULATOR_SETLE_MS: '10' });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('PORT: expected a port number 0-65535, got "eighty"');
    expect(refused.output).toContain('WEBHOOK_SECRET is not a setting: did you mean WEBHOOK_SECRETS? (it is ignored)');
    expect(refused.output).toContain('EMULATOR_SETLE_MS is not a setting: did you mean EMULATOR_SETTLE_MS? (it is ignored)');
    expect(refused.output).not.toContain('whsec_never_shown');

    const env = { PAYMENTS_API_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info', WEBHOOK_SECRET: 'whsec_never_shown' };
    const started = await spawnMain(env, (out) => (/"msg":"gateway ready"/.test(out) ? {} : null));
    await started.stop();
    const warning = started.output().split('\n').find((line) => line.includes('did you mean'));
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, msg: 'WEBHOOK_SECRET is not a setting: did you mean WEBHOOK_SECRETS? (it is ignored)' });
    expect(started.output()).not.toContain('whsec_never_shown');
    // Two start-ups, one after the other: a wait, not a measure.
  }, 60_000);

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

  it('says in the ready line that /metrics is closed until OPS_TOKEN is set, in production without one, and gives its URL otherwise', async () => {
    const metricsOf = (out: string) => {
      const line = out.split('\n').find((l) => l.includes('"msg":"gateway ready"'));
      return line ? { metrics: String((JSON.parse(line) as { metrics: unknown }).metrics) } : null;
    };
    const env = { PAYMENTS_API_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info', NODE_ENV: 'production' };
    const closed = await spawnMain(env, metricsOf);
    await closed.stop();
    expect(closed.found.metrics).toMatch(/^closed until OPS_TOKEN is set: set OPS_TOKEN .* or set METRICS_PORT/);
    const open = await spawnMain({ ...env, OPS_TOKEN: 'ops-token-0123456789abcdef' }, metricsOf);
    await open.stop();
    expect(open.found.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(open.output()).not.toContain('ops-token-0123456789abcdef');
    // Two start-ups, one after the other: a wait, not a measure.
  }, 60_000);
});
