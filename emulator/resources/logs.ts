/**
 * Request logs: every authenticated /v1 request becomes a Log of its account
 * (written by the server after the response). Bodies are stored with secrets
 * redacted; the Authorization header is never stored. The newest
 * `maxLogsPerAccount` are kept.
 */
import type { ApiRouter } from '../http/types.js';
import { getRoute, listRoute } from './common.js';

export function registerLogs(router: ApiRouter): void {
  router
    .add('GET', '/v1/logs', listRoute('log', 'logs', (q) => (l) => q.status === undefined || String(l.status) === q.status))
    .add('GET', '/v1/logs/:id', getRoute('log', 'logs', 'Log', 'arrayOfOne'));
}

const SECRET_KEYS = new Set(['secret', 'token', 'password', 'authorization', 'api_key', 'apikey', 'access_token', 'private_key', 'forward_secret']);

/** Deep copy with every secret-looking key's value replaced. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.has(k.toLowerCase()) ? '[REDACTED]' : redact(v);
    return out;
  }
  return value;
}
