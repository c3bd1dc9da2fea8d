/**
 * No container engine runs here, so deploy/compose.yaml is checked as data:
 * what an operator must set is shown in it, with the usage line saying how.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const text = readFileSync(new URL('../../deploy/compose.yaml', import.meta.url), 'utf8');
const compose = parse(text, { merge: true }) as { 'x-gateway': { environment: Record<string, string> }; services: Record<string, { environment?: Record<string, string> }> };

describe('deploy/compose.yaml', () => {
  it('passes OPS_TOKEN to every gateway replica, and its usage line sets it', () => {
    expect(compose['x-gateway'].environment.OPS_TOKEN).toBe('${OPS_TOKEN:-}');
    // The merge key puts the anchor's environment into the gateway service.
    expect(compose.services.gateway!.environment?.OPS_TOKEN).toBe('${OPS_TOKEN:-}');
    expect(text).toMatch(/^# .*OPS_TOKEN=\$\(openssl rand -hex 32\) .*docker compose -f deploy\/compose\.yaml up --build$/m);
  });
});
