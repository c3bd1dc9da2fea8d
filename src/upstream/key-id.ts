/**
 * The one name of an API key everywhere but the Authorization header: a
 * truncated sha256, stable and not reversible. Caches, records, rate limits,
 * bulkhead slots, breakers and logs see this, never the key.
 */
import { createHash } from 'node:crypto';

export function keyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 32);
}
