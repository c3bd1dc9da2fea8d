/**
 * An upstream the gateway cannot reach: the caller's error says why (here, a
 * refused connection) without naming the address, and the operator gets one
 * warn line per route however many calls fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { newKey, startGatewayOver, type GatewayOnly } from '../support/harness.js';
import { freePort } from '../support/ports.js';

describe('an unreachable payments API', () => {
  let gateway: GatewayOnly;
  const lines: Record<string, unknown>[] = [];
  const key = newKey('unreachable');

  beforeAll(async () => {
    // A port nobody listens on: every connection is refused.
    const closed = await freePort();
    const logger = createLogger('info', { destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    gateway = await startGatewayOver(`http://127.0.0.1:${closed}`, {}, logger);
  });
  afterAll(() => gateway.stop());

  it('answers UPSTREAM_UNAVAILABLE with the reason, and logs it once per route at warn', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await gateway.gql('{ currencies { iso } }', {}, key);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', reason: 'connection_refused' });
      expect(JSON.stringify(res.errors)).not.toContain('127.0.0.1');
    }
    const unreachable = lines.filter((l) => l.msg === 'payments API unreachable');
    expect(unreachable).toEqual([expect.objectContaining({ level: 40, route: 'GET /v1/currencies', reason: 'connection_refused' })]);
    expect(JSON.stringify(lines)).not.toContain(key);
  });
});
