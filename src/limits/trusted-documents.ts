/**
 * Trusted documents (TRUSTED_DOCUMENTS): only the operations a known frontend was built with run;
 * anything else is refused before parsing. Manifest formats: docs/security.md.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface TrustedDocuments {
  /** The document text to run for this request body, or null when it is not trusted. */
  resolve(body: Record<string, unknown>): string | null;
  readonly size: number;
}

export function loadTrustedDocuments(path: string): TrustedDocuments {
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  const byHash = new Map<string, string>();
  if (isObject(manifest) && manifest.format === 'apollo-persisted-query-manifest' && Array.isArray(manifest.operations)) {
    for (const op of manifest.operations) {
      if (isObject(op) && typeof op.id === 'string' && typeof op.body === 'string') byHash.set(op.id, op.body);
    }
  } else if (isObject(manifest)) {
    for (const [hash, text] of Object.entries(manifest)) if (typeof text === 'string') byHash.set(hash, text);
  }
  if (byHash.size === 0) throw new Error(`TRUSTED_DOCUMENTS: no operations found in ${path}`);
  return {
    size: byHash.size,
    resolve(body) {
      const id = documentIdOf(body);
      if (id !== null) return byHash.get(id) ?? null;
      if (typeof body.query === 'string') {
        const hash = sha256(body.query);
        return byHash.has(hash) ? body.query : null;
      }
      return null;
    },
  };
}

function documentIdOf(body: Record<string, unknown>): string | null {
  if (typeof body.documentId === 'string') return body.documentId.replace(/^sha256:/, '');
  const persisted = isObject(body.extensions) ? body.extensions.persistedQuery : undefined;
  if (isObject(persisted) && typeof persisted.sha256Hash === 'string') return persisted.sha256Hash;
  return null;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
