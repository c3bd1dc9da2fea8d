#!/usr/bin/env node
// Which rows of docs/testing.md's mutation table still describe the code:
// a row is fresh when the commit it was measured at already holds the
// module's last change. `node scripts/mutation-freshness.mjs` prints one
// line per module of stryker.groups.json and exits 1 if any is stale or
// unmeasured. Needs the git history (not a shallow clone); not run in CI,
// because changing a guarded module must not fail the build until it is
// re-scored. Run it from the repository's root.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import console from 'node:console';
import process from 'node:process';

const groups = JSON.parse(readFileSync('stryker.groups.json', 'utf8'));
const modules = [...new Set(Object.values(groups).flatMap((g) => g.mutate))];
const doc = readFileSync('docs/testing.md', 'utf8');

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();
const commitExists = (commit) => {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const isAncestor = (older, newer) => {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', older, newer]);
    return true;
  } catch {
    return false;
  }
};

let bad = 0;
for (const file of modules) {
  const name = file.replace(/^src\//, '');
  const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
  const cells = row?.split('|').map((c) => c.trim()) ?? [];
  const score = cells[7] ?? '';
  // The measured column reads "date, <commit>…": the first hex word of 7+ digits.
  const measuredAt = /\b([0-9a-f]{7,40})\b/.exec(cells[9] ?? '')?.[1];
  const last = git('log', '-1', '--format=%h', '--', file);
  let verdict;
  if (!row || !/%/.test(score) || !measuredAt) verdict = 'unmeasured';
  else if (!commitExists(measuredAt)) verdict = `unknown commit ${measuredAt}`;
  else if (!last) verdict = 'not in git';
  else if (isAncestor(last, measuredAt)) verdict = 'fresh';
  else verdict = `stale (changed in ${last} after ${measuredAt})`;
  const below = /%/.test(score) && Number.parseFloat(score) < 90 ? ', below 90 %' : '';
  if (verdict !== 'fresh' || below) bad += 1;
  console.log(`${score.padEnd(8)} ${name.padEnd(34)} ${verdict}${below}`);
}
process.exitCode = bad === 0 ? 0 : 1;
