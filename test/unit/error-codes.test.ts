import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCode, UserErrorCode } from '../../src/errors.js';

/** The codes in the first column of the README table whose header cell is `header`. */
function readmeTableCodes(header: string): string[] {
  const lines = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start, `README has a table headed "| ${header} |"`).toBeGreaterThanOrEqual(0);
  const codes: string[] = [];
  for (const line of lines.slice(start + 2)) {
    const match = /^\| `([A-Z_]+)` \|/.exec(line);
    if (!match) break;
    codes.push(match[1]!);
  }
  return codes;
}

describe('the README documents exactly the codes the gateway uses', () => {
  it('GraphQL error codes (extensions.code)', () => {
    expect(readmeTableCodes('code').sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('userErrors codes', () => {
    expect(readmeTableCodes('user error code').sort()).toEqual(Object.values(UserErrorCode).sort());
  });
});

describe('the schema documents the same codes', () => {
  it('the Query description lists every GraphQL error code, for Studio and explorer readers', () => {
    const base = readFileSync(new URL('../../schema/base.graphql', import.meta.url), 'utf8');
    const listed = [...base.matchAll(/^- `([A-Z_]+)`: /gm)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(Object.values(ErrorCode).sort());
  });
});
