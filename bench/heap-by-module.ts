/**
 * What a heap snapshot holds, by the module that holds it:
 * `npx tsx bench/heap-by-module.ts <file.heapsnapshot> [--top 25] [--by package|file] [--largest N]`.
 *
 * Every object is charged to one owner: the script it is (its source text too),
 * or of the function it is, or of the function whose context it is, or else its immediate dominator's owner
 * (the object that all paths from the roots to it go through). So what a
 * module's top-level variables alone keep alive counts to that module, and
 * what two modules share goes to whoever dominates both, often "(roots)".
 * Scripts are grouped by npm package, by the gateway's folder under src/, or
 * as node's own. Write the snapshot with `node --heapsnapshot-signal=SIGUSR2`
 * or `v8.writeHeapSnapshot()`; `npm run bench -- idle --snapshot <dir>` does.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Owned {
  owner: string;
  bytes: number;
  objects: number;
}

/** One owner per script name: the npm package, the gateway's folder, or node itself. */
export function ownerOf(script: string, by: 'package' | 'file'): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(script);
  if (pkg) return by === 'file' ? `${pkg[1]}${pkg[2] ?? ''}` : pkg[1]!;
  const own = /\/(?:dist\/)?(src|emulator)\/(.*)$/.exec(script);
  if (own) return by === 'file' ? `${own[1]}/${own[2]}` : `${own[1]}/${own[2]!.includes('/') ? own[2]!.split('/')[0] : own[2]!.replace(/\.[jt]s$/, '')}`;
  if (script.startsWith('node:') || !script.includes('/')) return 'node (core)';
  return script;
}

export interface Largest {
  owner: string;
  bytes: number;
  /** The object's type and name, then its dominators' up to the root. */
  path: string[];
}

export function heapByModule(snap: Snapshot, by: 'package' | 'file', largest = 0): { owned: Owned[]; largest: Largest[] } {
  const { meta } = snap.snapshot;
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const [nodeTypes] = meta.node_types;
  const [edgeTypes] = meta.edge_types;
  const n = snap.snapshot.node_count;
  const { nodes, edges, strings } = snap;
  const TYPE = meta.node_fields.indexOf('type');
  const NAME = meta.node_fields.indexOf('name');
  const SIZE = meta.node_fields.indexOf('self_size');
  const COUNT = meta.node_fields.indexOf('edge_count');
  const ETYPE = meta.edge_fields.indexOf('type');
  const ENAME = meta.edge_fields.indexOf('name_or_index');
  const ETO = meta.edge_fields.indexOf('to_node');
  const WEAK = edgeTypes.indexOf('weak');
  const SHORTCUT = edgeTypes.indexOf('shortcut');
  const CLOSURE = nodeTypes.indexOf('closure');
  const named = (e: number, name: string) => edgeTypes[edges[e + ETYPE]!] !== 'element' && edgeTypes[edges[e + ETYPE]!] !== 'hidden' && strings[edges[e + ENAME]!] === name;

  const firstEdge = new Uint32Array(n + 1);
  for (let i = 0, e = 0; i < n; i++) {
    firstEdge[i] = e;
    e += nodes[i * NF + COUNT]! * EF;
  }
  firstEdge[n] = edges.length;
  const strong = (e: number) => edges[e + ETYPE] !== WEAK && edges[e + ETYPE] !== SHORTCUT;

  // The script of each function (closure -> shared -> script_or_debug_info), and of each closure's context.
  const script = new Int32Array(n).fill(-1);
  const targetOf = (i: number, name: string) => {
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF) if (named(e, name)) return edges[e + ETO]! / NF;
    return -1;
  };
  for (let i = 0; i < n; i++) {
    if (nodes[i * NF + TYPE] !== CLOSURE) continue;
    const shared = targetOf(i, 'shared');
    const scriptNode = shared < 0 ? -1 : targetOf(shared, 'script_or_debug_info');
    if (scriptNode < 0) continue;
    const name = strings[nodes[scriptNode * NF + NAME]!]!;
    if (!name || name.startsWith('system /')) continue;
    script[i] = nodes[scriptNode * NF + NAME]!;
    script[shared] = script[i]!;
    // The script itself, so its source text counts to its module.
    script[scriptNode] = script[i]!;
    const context = targetOf(i, 'context');
    if (context >= 0 && script[context]! < 0) script[context] = script[i]!;
  }

  // Dominators (Cooper, Harvey and Kennedy's iterative algorithm) over the strong edges from node 0, the root.
  const order = new Int32Array(n).fill(-1);
  const post: number[] = [];
  const stack: number[] = [0];
  const cursor = new Uint32Array(n);
  const seen = new Uint8Array(n);
  seen[0] = 1;
  cursor[0] = firstEdge[0]!;
  while (stack.length) {
    const v = stack[stack.length - 1]!;
    let pushed = false;
    while (cursor[v]! < firstEdge[v + 1]!) {
      const e = cursor[v]!;
      cursor[v] = e + EF;
      if (!strong(e)) continue;
      const w = edges[e + ETO]! / NF;
      if (seen[w]) continue;
      seen[w] = 1;
      cursor[w] = firstEdge[w]!;
      stack.push(w);
      pushed = true;
      break;
    }
    if (!pushed) {
      order[v] = post.length;
      post.push(stack.pop()!);
    }
  }
  const preds: number[][] = Array.from({ length: n }, () => []);
  for (let v = 0; v < n; v++) {
    if (!seen[v]) continue;
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (strong(e)) preds[edges[e + ETO]! / NF]!.push(v);
  }
  const idom = new Int32Array(n).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (order[a]! < order[b]!) a = idom[a]!;
      while (order[b]! < order[a]!) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let k = post.length - 2; k >= 0; k--) {
      const v = post[k]!;
      let best = -1;
      for (const p of preds[v]!) if (idom[p]! >= 0) best = best < 0 ? p : intersect(p, best);
      if (best >= 0 && idom[v] !== best) {
        idom[v] = best;
        changed = true;
      }
    }
  }

  // Owner: the node's own script, else its dominator's (reverse post-order visits dominators first).
  const owner = new Int32Array(n).fill(-1);
  const totals = new Map<string, Owned>();
  for (let k = post.length - 1; k >= 0; k--) {
    const v = post[k]!;
    owner[v] = script[v]! >= 0 ? script[v]! : v === 0 ? -1 : owner[idom[v]!]!;
    const key = owner[v]! < 0 ? '(roots)' : ownerOf(strings[owner[v]!]!, by);
    const entry = totals.get(key) ?? { owner: key, bytes: 0, objects: 0 };
    entry.bytes += nodes[v * NF + SIZE]!;
    entry.objects++;
    totals.set(key, entry);
  }
  const biggest = post.filter((v) => nodes[v * NF + SIZE]! > 0).sort((a, b) => nodes[b * NF + SIZE]! - nodes[a * NF + SIZE]!).slice(0, largest);
  const label = (v: number) => `${nodeTypes[nodes[v * NF + TYPE]!]}:${strings[nodes[v * NF + NAME]!]!.slice(0, 40)}`;
  const pathOf = (v: number) => {
    const path = [label(v)];
    for (let u = v; u !== 0 && path.length < 6; u = idom[u]!) path.push(label(idom[u]!));
    return path;
  };
  return {
    owned: [...totals.values()].sort((a, b) => b.bytes - a.bytes),
    largest: biggest.map((v) => ({ owner: owner[v]! < 0 ? '(roots)' : ownerOf(strings[owner[v]!]!, by), bytes: nodes[v * NF + SIZE]!, path: pathOf(v) })),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, by: { type: 'string', default: 'package' }, largest: { type: 'string', default: '0' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: npx tsx bench/heap-by-module.ts <file.heapsnapshot> [--top 25] [--by package|file] [--largest N]');
  const { owned, largest } = heapByModule(JSON.parse(readFileSync(file, 'utf8')) as Snapshot, values.by === 'file' ? 'file' : 'package', Number(values.largest));
  const total = owned.reduce((sum, o) => sum + o.bytes, 0);
  console.log(`| owner | KB | share | objects |\n|---|---|---|---|`);
  for (const o of owned.slice(0, Number(values.top))) console.log(`| ${o.owner} | ${(o.bytes / 1024).toFixed(0)} | ${((o.bytes / total) * 100).toFixed(1)} % | ${o.objects} |`);
  console.log(`| total reachable | ${(total / 1024).toFixed(0)} | | ${owned.reduce((sum, o) => sum + o.objects, 0)} |`);
  if (largest.length) console.log(`\nlargest objects:\n${largest.map((o) => `${(o.bytes / 1024).toFixed(0)} KB  ${o.owner}  ${o.path.join(' < ')}`).join('\n')}`);
}
