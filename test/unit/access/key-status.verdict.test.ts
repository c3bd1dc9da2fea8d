/**
 * What an upstream answer says of the key it was made with is decided once (access/key-status.ts `keyVerdict`)
 * and learned once (`KeyStatus.learn`). The table below is the rule; each learner (the operation's gate, the
 * door's own proof, and `KeyStatus.heard`, which the door's account look-up and the reconciler's re-reads go
 * through) is driven with every row and must leave the key status as the row says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createAdmission, type Admission } from '../../../src/access/admission.js';
import { admitCaller } from '../../../src/access/caller.js';
import { ANSWERED, KeyStatus, keyVerdict, type CallOutcome, type KeyVerdict } from '../../../src/access/key-status.js';
import { UpstreamGate } from '../../../src/access/upstream-budget.js';
import { validatedDocuments } from '../../../src/limits/document-store.js';
import { documentCheck } from '../../../src/limits/document-check.js';
import { documentRules, operationCheck } from '../../../src/limits/graphql-limits.js';
import { createLogger } from '../../../src/logger.js';
import { buildSchema } from '../../../src/schema.js';
import type { PaymentsApi } from '../../../src/upstream/api.js';
import {
  UpstreamAuthenticationError,
  UpstreamConflictError,
  UpstreamConnectionError,
  UpstreamError,
  UpstreamNotFoundError,
  UpstreamPermissionError,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamValidationError,
} from '../../../src/upstream/errors.js';
import { keyId } from '../../../src/upstream/key-id.js';

const route = 'GET /v1/currencies';
const failed = (error: unknown): CallOutcome => ({ ok: false, error });
const status = (code: number) => new UpstreamError(`status ${code}`, 'unexpected_status', { route, statusCode: code });

const RULE: [string, CallOutcome, KeyVerdict][] = [
  ['an answer', ANSWERED, 'proven'],
  ['a 401', failed(new UpstreamAuthenticationError({ route, statusCode: 401 })), 'revoked'],
  ['a key that cannot travel in a header (refused before any I/O)', failed(new UpstreamAuthenticationError({ route })), 'revoked'],
  ['a 403', failed(new UpstreamPermissionError({ route, statusCode: 403 })), 'refused'],
  ['a 404', failed(new UpstreamNotFoundError({ route, statusCode: 404 })), 'proven'],
  ['a 422', failed(new UpstreamValidationError({ route, statusCode: 422, fieldErrors: {} })), 'proven'],
  ['a 409', failed(new UpstreamConflictError({ route, statusCode: 409 })), 'proven'],
  ['a 400 of no named kind', failed(status(400)), 'proven'],
  ['a 429', failed(new UpstreamRateLimitError({ route, statusCode: 429 })), 'unsaid'],
  ['a 408', failed(status(408)), 'unsaid'],
  ['a 500', failed(new UpstreamServerError({ route, statusCode: 500 })), 'unsaid'],
  ['a time-out', failed(new UpstreamTimeoutError({ route, timeoutMs: 1_000 })), 'unsaid'],
  ['a refused connection', failed(new UpstreamConnectionError({ route })), 'unsaid'],
  ['an error of another kind', failed(new Error('socket hang up')), 'unsaid'],
];

describe('keyVerdict', () => {
  it.each(RULE)('%s: %j says %s', (_name, outcome, verdict) => {
    expect(keyVerdict(outcome)).toBe(verdict);
  });
});

const schema = buildSchema();
const opened: Admission[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

/** A door over a fake upstream whose proof call ends as `outcome` says. */
function door(keys: KeyStatus, outcome: CallOutcome): Admission {
  const config = loadConfig({ KEY_REVALIDATE_MS: '60000' });
  const documents = documentCheck(schema, { maxTokens: config.limits.maxTokens, rules: documentRules(config.limits), check: operationCheck(schema, config.limits, config.pagination), maxResponseBytes: 1_000_000, trusted: null });
  const answer = () => (outcome.ok ? Promise.resolve([]) : Promise.reject(outcome.error));
  const admission = createAdmission({
    config,
    keys,
    upstream: { forKey: () => ({ currencies: { list: answer } }) as unknown as PaymentsApi },
    logger: createLogger('silent'),
    documents,
    streams: { rules: documents.rules, refusedRootFields: [], validated: validatedDocuments({ maxBytes: 1024 * 1024, callerShare: 0.25 }) },
    redis: null,
    onRateLimited: () => undefined,
  });
  opened.push(admission);
  return admission;
}

const who = { apiKey: 'sk_sandbox_verdict', callerId: keyId('sk_sandbox_verdict') };
const learners: [string, (keys: KeyStatus, outcome: CallOutcome) => Promise<void>][] = [
  [
    "the operation's gate",
    async (keys, outcome) => {
      const report = await new UpstreamGate(admitCaller(keys, who, { maxUpstreamCalls: 5 }), keys).admit();
      report(outcome);
    },
  ],
  ['the door proving a key', async (keys, outcome) => void (await door(keys, outcome).prove(who))],
  [
    'a read of the gateway’s own (KeyStatus.heard: the account, the reconciler)',
    (keys, outcome) => keys.heard(who.callerId, outcome.ok ? Promise.resolve(1) : Promise.reject(outcome.error)).then(() => undefined, () => undefined),
  ],
];

describe('every learner follows the one rule', () => {
  const cases = learners.flatMap(([learner, learn]) => RULE.map(([name, outcome, verdict]) => [learner, name, outcome, verdict, learn] as const));
  it.each(cases)('%s, told of %s', async (_learner, _name, outcome, verdict, learn) => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    await learn(keys, outcome);
    expect({ proven: keys.isProven(who.callerId), revoked: keys.isRevoked(who.callerId) }).toEqual({ proven: verdict === 'proven', revoked: verdict === 'revoked' });
  });

  it.each(RULE)('the gate fails the operation’s next call after %s only when it revoked or refused the key', async (_name, outcome, verdict) => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
    const gate = new UpstreamGate(admitCaller(keys, who, { maxUpstreamCalls: 5 }), keys);
    (await gate.admit())(outcome);
    const next = await gate.admit().then(() => 'admitted', (e: unknown) => e);
    expect(next).toBe(verdict === 'revoked' || verdict === 'refused' ? (outcome as { error: unknown }).error : 'admitted');
  });
});
