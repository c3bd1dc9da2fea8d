/**
 * `npx tsx bench/data-path-frames.ts [--node] [--verbose]`: the gateway's own
 * frames one cold `transaction(id) { customer currency }` crosses from the
 * resolver to the socket, and the files they are in. The gateway runs here
 * from its sources (entity cache off, currency TTL 0) over an in-process
 * emulator, warmed by one unmeasured operation.
 *
 * No one stack spans the path: DataLoader runs its batch from a tick of its
 * own, and each `await` on a promise that is not an async function's (a
 * breaker's `fire`, a bulkhead's slot) starts a stack afresh. So a stack is
 * taken at every promise made from the moment the `transaction` resolver
 * calls its loader until the request leaves the gateway's code for the HTTP
 * client (got's `stream`, or `http.request` for the node transport), and the
 * frames under src/ are collected over all of them, each distinct
 * function once (the innermost function of the source that holds the
 * frame's position, so an async function seen at two of its awaits is one). Frames of the operation around the resolver
 * (src/http, src/graphql, src/server) are left out: they are not the path.
 */
import { createHook } from 'node:async_hooks';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import got from 'got';
import DataLoader from 'dataloader';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import { startStack } from '../test/support/harness.js';
import { factories } from '../test/support/factories.js';

Error.stackTraceLimit = 200;
const { values } = parseArgs({ options: { node: { type: 'boolean', default: false }, verbose: { type: 'boolean', default: false } } });
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const OUTSIDE_PATH = ['src/http/', 'src/graphql/', 'src/server/'];

/** The innermost function, method or arrow of `file` holding line:column (1-based), named by where it starts. */
function enclosingFunction(file: string, line: number, column: number): string {
  const source = ts.createSourceFile(file, readFileSync(`${SRC}/../${file}`, 'utf8'), ts.ScriptTarget.Latest, true);
  const at = source.getPositionOfLineAndCharacter(line - 1, column - 1);
  let found: ts.Node | undefined;
  const visit = (node: ts.Node) => {
    if (at < node.getStart(source) || at >= node.getEnd()) return;
    if (ts.isFunctionLike(node)) found = node;
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!found) return `(top level):${line}`;
  const start = source.getLineAndCharacterOfPosition(found.getStart(source));
  const name = (found as { name?: ts.Node }).name?.getText(source) ?? '(anonymous)';
  return `${name}:${start.line + 1}:${start.character + 1}`;
}

/** Stacks taken while the read is on its way; null outside it. */
let stacks: string[] | null = null;
let done = false;
let armedOnce = false;
const take = () => {
  if (!done) stacks?.push(new Error().stack ?? '');
};
createHook({ init: (_id, type) => { if (type === 'PROMISE') take(); } }).enable();

const out = () => {
  if (stacks && !done) {
    take();
    done = true;
  }
};
// The node transport: node:http's request is called from our code.
const request = http.request;
(http as { request: unknown }).request = function (this: unknown, ...args: unknown[]) {
  out();
  return (request as (...a: unknown[]) => unknown).apply(this, args);
};
// got: the instance the transport makes, its stream() called from our code.
const extend = got.extend.bind(got);
(got as { extend: unknown }).extend = (...args: Parameters<typeof got.extend>) => {
  const instance = extend(...args);
  const stream = instance.stream;
  (instance as { stream: unknown }).stream = (...a: unknown[]) => {
    out();
    return (stream as (...b: unknown[]) => unknown)(...a);
  };
  return instance;
};
// The path starts where the `transaction` resolver hands its id to a loader.
const load = DataLoader.prototype.load;
DataLoader.prototype.load = function (this: DataLoader<unknown, unknown>, key: unknown) {
  if (armedOnce && stacks === null && /resolvers\/transaction\.ts/.test(new Error().stack ?? '')) {
    stacks = [];
    take();
  }
  return load.call(this, key);
};

const KEY = 'sk_sandbox_frames';
const stack = await startStack({ env: { ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0', ...(values.node ? { UPSTREAM_HTTP_CLIENT: 'node' } : {}) } });
try {
  const make = factories(stack.emulator, KEY);
  const customer = await make.customer();
  const t = await make.transaction({ amount: 1000, customer: { id: customer.id } });
  const query = 'query ($id: ID!) { transaction(id: $id) { id amount status customer { email fullName } currency { iso } } }';
  // Once unmeasured: the key's proof and everything made on first use.
  await stack.gql(query, { id: String(t.id) }, KEY);
  armedOnce = true;
  const res = await stack.gql(query, { id: String(t.id) }, KEY);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  if (!done || !stacks) throw new Error('the read never reached the transport');

  const seen = new Map<string, string>();
  for (const s of stacks as string[]) {
    for (const line of s.split('\n').slice(1)) {
      const frame = line.trim();
      if (!frame.includes(SRC)) continue;
      const rel = frame.replace(SRC, 'src/');
      if (OUTSIDE_PATH.some((p) => rel.includes(p))) continue;
      // One frame per function, wherever in it the stack was taken: the function that encloses the position.
      const m = /\(?(src\/[^:]+):(\d+):(\d+)\)?$/.exec(rel);
      if (!m) continue;
      const key = `${m[1]} ${enclosingFunction(m[1]!, Number(m[2]), Number(m[3]))}`;
      if (!seen.has(key)) seen.set(key, m[1]!);
    }
  }
  const files = new Set(seen.values());
  console.log(`transport: ${values.node ? 'node' : 'got'}; stacks taken: ${(stacks as string[]).length}`);
  console.log(`${seen.size} frames of src/ in ${files.size} files`);
  const byFile = new Map<string, number>();
  for (const f of seen.values()) byFile.set(f, (byFile.get(f) ?? 0) + 1);
  for (const [f, n] of [...byFile].sort()) console.log(`  ${String(n).padStart(2)}  ${f}`);
  if (values.verbose) for (const k of seen.keys()) console.log(`    ${k}`);
} finally {
  await stack.stop();
}
