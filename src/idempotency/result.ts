/**
 * What a record keeps of a result: an exact echo of an argument (a large `customMetadata`) is left out and taken
 * back from the replay's identical arguments. Forms: plain JSON; `~` + `{v, echo}`; `!` (over the cap, not kept).
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';

/** Leaving out shorter values saves less than it costs. */
const ECHO_MIN_CHARS = 512;
const ECHO_DEPTH = 3;

export const NOT_KEPT = '!';
const WITH_ECHOES = '~';

type Path = (string | number)[];

export function encodeResult(result: unknown, args: object, maxBytes: number): string {
  const json = JSON.stringify(result) ?? 'null';
  const echoes = json.length >= ECHO_MIN_CHARS ? echoedArguments(args) : new Map<string, Path>();
  let text = json;
  if (echoes.size > 0) {
    const tree = JSON.parse(json) as unknown;
    const found: [Path, Path][] = [];
    leaveOutEchoes(tree, [], echoes, found);
    if (found.length > 0) text = WITH_ECHOES + JSON.stringify({ v: tree, echo: found });
  }
  return text.length * 2 > maxBytes ? NOT_KEPT : text;
}

export function decodeResult(text: string, args: object): unknown {
  if (text === NOT_KEPT) throw idempotencyResultNotKept();
  if (!text.startsWith(WITH_ECHOES)) return JSON.parse(text);
  const { v, echo } = JSON.parse(text.slice(1)) as { v: unknown; echo: [Path, Path][] };
  for (const [at, from] of echo) {
    const value = JSON.parse(JSON.stringify(valueAt(args, from)) ?? 'null') as unknown;
    const parent = valueAt(v, at.slice(0, -1)) as Record<string | number, unknown>;
    parent[at[at.length - 1]!] = value;
  }
  return v;
}

export function idempotencyResultNotKept(): GraphQLError {
  return new GraphQLError(
    'A request with this idempotency key already succeeded, but its answer was too large to keep, so it cannot be given again; nothing was sent now. Read the objects it created or changed instead.',
    { extensions: { code: ErrorCode.IDEMPOTENCY_RESULT_NOT_KEPT } },
  );
}

function echoedArguments(args: object): Map<string, Path> {
  const byText = new Map<string, Path>();
  const visit = (value: unknown, path: Path): void => {
    if (value === null || (typeof value !== 'object' && typeof value !== 'string')) return;
    if (path.length > 0) {
      const text = JSON.stringify(value);
      if (text === undefined || text.length < ECHO_MIN_CHARS) return;
      if (!byText.has(text)) byText.set(text, path);
    }
    if (typeof value === 'object' && path.length < ECHO_DEPTH) for (const [k, v] of entries(value)) visit(v, [...path, k]);
  };
  const { idempotencyKey: _key, ...rest } = args as Record<string, unknown>;
  visit(rest, []);
  return byText;
}

function leaveOutEchoes(node: unknown, path: Path, echoes: Map<string, Path>, found: [Path, Path][]): void {
  if (node === null || typeof node !== 'object' || path.length >= ECHO_DEPTH) return;
  for (const [key, value] of entries(node)) {
    if (value === null || (typeof value !== 'object' && typeof value !== 'string')) continue;
    const from = echoes.get(JSON.stringify(value));
    if (from) {
      (node as Record<string | number, unknown>)[key] = null;
      found.push([[...path, key], from]);
    } else {
      leaveOutEchoes(value, [...path, key], echoes, found);
    }
  }
}

/** `__proto__` left out, so a path written back can never reach a prototype. */
function entries(value: object): [string | number, unknown][] {
  return Array.isArray(value) ? value.map((v, i) => [i, v] as [number, unknown]) : Object.entries(value).filter(([k]) => k !== '__proto__');
}

function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown> | null | undefined)?.[key];
  return node;
}
