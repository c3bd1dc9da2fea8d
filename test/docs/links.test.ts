/**
 * Every relative link of the README, the changelog, docs/ and the emulator's
 * and the checkout example's READMEs leads somewhere:
 * the file or folder exists, and a `#fragment` names a heading of the file it
 * points into (as GitHub makes heading anchors). Sections move between these
 * pages; a link left behind fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const markdownIn = (dir: string) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`);
const PAGES = ['README.md', 'CHANGELOG.md', 'emulator/README.md', 'examples/checkout/README.md', ...markdownIn('docs'), ...markdownIn('bench')];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const text of headings(markdown)) {
    const base = text
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function headings(markdown: string): string[] {
  const found: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = !fenced && /^#{1,6} (.+?)\s*#*$/.exec(line);
    if (match) found.push(match[1]!);
  }
  return found;
}

/** The targets of inline links and images outside code fences and code spans. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(match[1]!);
  }
  return targets;
}

/** What is wrong with one link of `page`, or null when it resolves. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: ...
  const [path, fragment] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
  if (!existsSync(file)) return `${target}: no ${relative(ROOT, file)}`;
  if (fragment === undefined) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `${target}: a fragment into a file without headings`;
  return headingAnchors(readFileSync(file, 'utf8')).has(fragment) ? null : `${target}: no heading #${fragment} in ${relative(ROOT, file)}`;
}

describe('relative links of the README and docs/', () => {
  it.each(PAGES)('%s: every link resolves', (page) => {
    const targets = linkTargets(readFileSync(join(ROOT, page), 'utf8'));
    expect(targets.map((t) => brokenLink(page, t)).filter(Boolean)).toEqual([]);
  });

  it('links are found, and a missing file or heading is caught', () => {
    expect(linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(20);
    expect(brokenLink('README.md', 'docs/security.md#security')).toBeNull();
    expect(brokenLink('README.md', 'docs/no-such-page.md')).toMatch(/no docs\/no-such-page.md/);
    expect(brokenLink('docs/realtime.md', 'security.md#no-such-heading')).toMatch(/no heading/);
  });

  it('anchors are made as GitHub makes them', () => {
    expect([...headingAnchors('# Real-time: webhooks in, subscriptions out\n## `_entities` and keys\n## Notes\n## Notes')]).toEqual([
      'real-time-webhooks-in-subscriptions-out',
      '_entities-and-keys',
      'notes',
      'notes-1',
    ]);
  });
});

describe('the README is the first-hour page', () => {
  it('is at most about 200 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(200);
  });
});
