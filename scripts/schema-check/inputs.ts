/**
 * Where the check's inputs live in the repository. The baseline is
 * supergraph/released.graphql, the SDL of the last release, which only the
 * release step (`npm run schema:release`) writes; never
 * supergraph/payments.graphql, which `npm run sdl` regenerates from the
 * working tree. Why a committed file and not git: docs/federation.md,
 * Schema changes.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { graphql } from 'graphql';
import { buildSchema } from '../../src/schema.js';
import { parseAccepted, type AcceptedChanges } from './acceptance.js';

export const RELEASED_SDL = new URL('../../supergraph/released.graphql', import.meta.url);
export const ACCEPTED_CHANGES = new URL('../../supergraph/accepted-changes.json', import.meta.url);

/** The working tree's subgraph SDL, exactly as `_service { sdl }` answers it (what `npm run sdl` writes). */
export async function workingTreeSdl(): Promise<string> {
  const result = await graphql({ schema: buildSchema(), source: '{ _service { sdl } }' });
  const sdl = (result.data as { _service?: { sdl?: string } } | null | undefined)?._service?.sdl;
  if (result.errors?.length || typeof sdl !== 'string') {
    throw new Error(`could not read _service { sdl }: ${result.errors?.map((e) => e.message).join('; ') ?? 'no sdl'}`);
  }
  return sdl.endsWith('\n') ? sdl : `${sdl}\n`;
}

export function releasedSdl(file: URL | string = RELEASED_SDL): string {
  return readFileSync(file, 'utf8');
}

export function acceptedChanges(file: URL | string = ACCEPTED_CHANGES): AcceptedChanges {
  const path = typeof file === 'string' ? file : relative(process.cwd(), fileURLToPath(file));
  return parseAccepted(readFileSync(file, 'utf8'), path);
}
