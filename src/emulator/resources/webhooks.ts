/**
 * Webhooks: create (the secret is generated, or taken from the body, and
 * returned by the create call only), read, list, update, delete (hard).
 * Webhook management records no event, so a new webhook is not its own first
 * delivery.
 */
import { FieldErrors } from '../errors.js';
import { ok, created, type ApiRouter, type RequestContext } from '../http/types.js';
import { paginate, readListQuery } from '../query.js';
import { isObject, readBool, readString, readUrl } from '../validate.js';
import { findOr404 } from './common.js';

function create(ctx: RequestContext) {
  const { engine, account } = ctx;
  const errs = new FieldErrors();
  const b = isObject(ctx.body) ? ctx.body : {};
  const url = readUrl(b.url, errs, 'url', true);
  const enabled = readBool(b.enabled, errs, 'enabled');
  const sslVerify = readBool(b.ssl_verify, errs, 'ssl_verify');
  const disableOnError = readBool(b.disable_on_error, errs, 'disable_on_error');
  const httpHeaders = readBool(b.http_headers, errs, 'http_headers');
  const secret = readString(b.secret, errs, 'secret', { max: 500 });
  if (secret === '') errs.add('secret', 'secret cannot be empty');
  errs.throwIfAny('Webhook creation failed');
  const now = engine.now();
  const row = engine.webhooks.insert({
    id: engine.nextId('webhook'),
    account_id: account.id,
    url: url as string,
    enabled: enabled ?? true,
    ssl_verify: sslVerify ?? false,
    disable_on_error: disableOnError ?? false,
    http_headers: httpHeaders ?? false,
    created_at: now,
    updated_at: now,
  });
  const theSecret = secret || engine.randomKey('wh_sandbox_', 24);
  engine.webhookSecrets.set(row.id, theSecret);
  return created(engine.render.one('webhook', { ...row, secret: theSecret }));
}

function update(ctx: RequestContext) {
  const { engine, account } = ctx;
  const row = findOr404(engine.webhooks, account.id, ctx.params.id, 'Webhook');
  const errs = new FieldErrors();
  const b = isObject(ctx.body) ? ctx.body : {};
  const url = readUrl(b.url, errs, 'url', false);
  const enabled = readBool(b.enabled, errs, 'enabled');
  const sslVerify = readBool(b.ssl_verify, errs, 'ssl_verify');
  const disableOnError = readBool(b.disable_on_error, errs, 'disable_on_error');
  const httpHeaders = readBool(b.http_headers, errs, 'http_headers');
  errs.throwIfAny('Webhook update failed');
  if (url !== undefined) row.url = url;
  if (enabled !== undefined) row.enabled = enabled;
  if (sslVerify !== undefined) row.ssl_verify = sslVerify;
  if (disableOnError !== undefined) row.disable_on_error = disableOnError;
  if (httpHeaders !== undefined) row.http_headers = httpHeaders;
  row.updated_at = engine.now();
  return ok(engine.render.one('webhook', row));
}

function remove(ctx: RequestContext) {
  const { engine, account } = ctx;
  const row = findOr404(engine.webhooks, account.id, ctx.params.id, 'Webhook');
  engine.webhooks.remove(row);
  engine.webhookSecrets.delete(row.id);
  return ok(engine.render.one('webhook', row));
}

export function registerWebhooks(router: ApiRouter): void {
  router
    .add('POST', '/v1/webhooks', create)
    .add('GET', '/v1/webhooks', (ctx) => {
      const q = readListQuery(ctx.query);
      q.errs.throwIfAny('Invalid list parameters');
      const { items, meta } = paginate(ctx.engine.webhooks.all(ctx.account.id), () => true, q);
      return ok(ctx.engine.render.many('webhook', items, meta));
    })
    .add('GET', '/v1/webhooks/:id', (ctx) =>
      ok(ctx.engine.render.arrayOfOne('webhook', findOr404(ctx.engine.webhooks, ctx.account.id, ctx.params.id, 'Webhook'))),
    )
    .add('PUT', '/v1/webhooks/:id', update)
    .add('DELETE', '/v1/webhooks/:id', remove);
}
