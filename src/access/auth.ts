/** Caller credentials: the caller's own key goes upstream; everything else sees `callerId`, a hash of it. */
import type { GraphQLError } from 'graphql';
import { forbidden, unauthenticated } from '../errors.js';
import { keyId } from '../upstream/index.js';

export type PaymentsEnv = 'sandbox' | 'live';

export interface Caller {
  apiKey: string;
  callerId: string;
}

const KEY_PATTERN = /^sk_(sandbox|live)_[A-Za-z0-9_-]+$/;

/** `null` with no header (introspection needs no caller); an error for a key that can never work here. */
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
