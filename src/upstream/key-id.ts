/**
 * An API key's one name everywhere but the Authorization header: a truncated sha256, stable and not
 * reversible, so caches, records, limits, breakers and logs never see the key.
 */
import { createHash } from 'node:crypto';

export function keyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 32);
}
