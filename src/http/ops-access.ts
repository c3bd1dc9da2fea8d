/** Who may read operational detail on the public port: OPS_TOKEN's bearer; without one, anyone outside production only. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

export interface OpsAccess {
  allows(req: http.IncomingMessage): boolean;
  /** Whether a token can be presented at all. */
  readonly tokenSet: boolean;
  /** No request is allowed: production without OPS_TOKEN. */
  readonly closed: boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function opsAccess(production: boolean, token: string | null): OpsAccess {
  if (token === null) return { allows: () => !production, tokenSet: false, closed: production };
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first differing byte.
  const expected = digest(token);
  return {
    tokenSet: true,
    closed: false,
    allows(req) {
      const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      return match !== null && timingSafeEqual(digest(match[1]!), expected);
    },
  };
}
