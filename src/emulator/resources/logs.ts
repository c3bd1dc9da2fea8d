/**
 * Request logs: every authenticated /v1 request becomes a Log of its account
 * (written by the server after the response). Bodies are stored with secrets
 * redacted; the Authorization header is never stored. The newest
 * `maxLogsPerAccount` are kept.
 */
import { ok, type ApiRouter } from '../http/types.js';
import { paginate, readListQuery } from '../query.js';
import { findOr404 } from './common.js';

export function registerLogs(router: ApiRouter): void {
  router
    .add('GET', '/v1/logs', (ctx) => {
      const q = readListQuery(ctx.query);
      q.errs.throwIfAny('Invalid list parameters');
      const { items, meta } = paginate(ctx.engine.logs.all(ctx.account.id), (l) => q.status === undefined || String(l.status) === q.status, q);
      return ok(ctx.engine.render.many('log', items, meta));
    })
    .add('GET', '/v1/logs/:id', (ctx) => ok(ctx.engine.render.arrayOfOne('log', findOr404(ctx.engine.logs, ctx.account.id, ctx.params.id, 'Log'))));
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
