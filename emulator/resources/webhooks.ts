/**
 * Webhooks: create (the secret is generated, or taken from the body, and
 * returned by the create call only), read, list, update, delete (hard).
 * Webhook management records no event, so a new webhook is not its own first
 * delivery.
 */
import { FieldErrors } from '../errors.js';
import { ok, created, type ApiRouter, type RequestContext } from '../http/types.js';
import { isObject, readBool, readString, readUrl } from '../validate.js';
import { findOr404, getRoute, listRoute } from './common.js';

/** The settable fields of a webhook, read from a create (url required) or update body. */
function readWebhookFields(b: Record<string, unknown>, errs: FieldErrors, urlRequired: boolean) {
  return {
    url: readUrl(b.url, errs, 'url', urlRequired),
    enabled: readBool(b.enabled, errs, 'enabled'),
    sslVerify: readBool(b.ssl_verify, errs, 'ssl_verify'),
    disableOnError: readBool(b.disable_on_error, errs, 'disable_on_error'),
    httpHeaders: readBool(b.http_headers, errs, 'http_headers'),
  };
}

function create(ctx: RequestContext) {
  const { engine, account } = ctx;
  const errs = new FieldErrors();
  const b = isObject(ctx.body) ? ctx.body : {};
  const { url, enabled, sslVerify, disableOnError, httpHeaders } = readWebhookFields(b, errs, true);
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
  const theSecret = secret || engine.randomKey(`wh_${account.environment}_`, 24);
  engine.webhookSecrets.set(row.id, theSecret);
  return created(engine.render.one('webhook', { ...row, secret: theSecret }));
}

function update(ctx: RequestContext) {
  const { engine, account } = ctx;
  const row = findOr404(engine.webhooks, account.id, ctx.params.id, 'Webhook');
  const errs = new FieldErrors();
  const { url, enabled, sslVerify, disableOnError, httpHeaders } = readWebhookFields(isObject(ctx.body) ? ctx.body : {}, errs, false);
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
    .add('GET', '/v1/webhooks', listRoute('webhook', 'webhooks'))
    .add('GET', '/v1/webhooks/:id', getRoute('webhook', 'webhooks', 'Webhook', 'arrayOfOne'))
    .add('PUT', '/v1/webhooks/:id', update)
    .add('DELETE', '/v1/webhooks/:id', remove);
}
