/**
 * A V8 CPU profile (.cpuprofile, from node --cpu-prof) as text: self time
 * by package (or by the gateway's own directory) and the heaviest functions,
 * so the figures can sit in bench/README.md beside the bench that made them.
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> [top]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/<pkg>` (scoped too), `src/<dir>`, node internals, or V8's own entries. */
function bucketOf(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(src|bench)\/([^/]+)\//.exec(url) ?? /\/(src|bench)\/([^/]+)$/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url;
}

function summarise(path: string, top: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const idle = new Set(['(idle)', '(program)']);
  let busy = 0;
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (idle.has(functionName)) continue;
    busy += us;
    const bucket = bucketOf(url, functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${bucket}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [
    `${path}: ${(busy / 1000).toFixed(0)} ms busy (idle and (program) left out)`,
    'self time by package / directory:',
    ...rows(buckets),
    'heaviest functions (self time):',
    ...rows(functions),
  ].join('\n');
}

const [file, top] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exitCode = 2;
} else {
  console.log(summarise(file, Number(top ?? 20)));
}
