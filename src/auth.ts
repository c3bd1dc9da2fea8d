/**
 * Caller credentials. The gateway holds no key of its own: the caller's
 * `Authorization: Bearer <secret key>` is what it sends upstream. The key is
 * kept only inside the caller's upstream client; everything else (caches,
 * logs, idempotency records) sees `callerId`, a hash of it.
 */
import type { GraphQLError } from 'graphql';
import { forbidden, unauthenticated } from './errors.js';
import { keyId } from './upstream/index.js';

export type PaymentsEnv = 'sandbox' | 'live';

export interface Caller {
  apiKey: string;
  /** Stable, non-reversible id of the key (upstream/key-id.ts), the same one every part of the gateway uses. */
  callerId: string;
}

const KEY_PATTERN = /^sk_(sandbox|live)_[A-Za-z0-9_-]+$/;

/**
 * Reads the caller from the Authorization header. Returns `null` when there is
 * none (some operations, like introspection, need no caller) and an error
 * when there is one that can never work against this gateway.
 */
export function readCaller(header: string | undefined, env: PaymentsEnv): Caller | null | GraphQLError {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return unauthenticated('The Authorization header must be "Bearer <secret API key>".');
  const apiKey = match[1]!;
  const keyMatch = KEY_PATTERN.exec(apiKey);
  if (!keyMatch) {
    return unauthenticated('The API key is malformed: expected sk_sandbox_… or sk_live_….');
  }
  const keyEnv = keyMatch[1] as PaymentsEnv;
  if (keyEnv !== env) {
    return forbidden(
      `This gateway serves the ${env} environment; a ${keyEnv} key (sk_${keyEnv}_…) cannot be used here. Use a sk_${env}_ key.`,
    );
  }
  return { apiKey, callerId: keyId(apiKey) };
}
