/**
 * `npm run schema:check`: the working tree's subgraph SDL against the
 * released one, offline. Exits 1 when it fails. A supergraph team points it
 * at its own files: `--released`, `--current` (SDL files), `--subgraph
 * name=file.graphql` (composed beside the stand-ins) and `--operations
 * file-or-folder` (its .graphql documents, validated against the composed
 * API schema; the project's own against the subgraph's).
 * `--verbose` lists the safe changes and the SDL blocks too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runCheck } from './check.js';
import { knownDocuments, type KnownDocument } from './documents.js';
import { acceptedChanges, releasedSdl, workingTreeSdl } from './inputs.js';
import { reportLines } from './report.js';
import type { Subgraph } from './stand-ins.js';

const { values } = parseArgs({
  options: {
    released: { type: 'string' },
    current: { type: 'string' },
    accepted: { type: 'string' },
    subgraph: { type: 'string', multiple: true, default: [] },
    operations: { type: 'string', multiple: true, default: [] },
    verbose: { type: 'boolean', default: false },
  },
});

function subgraphOf(spec: string): Subgraph {
  const [name, file] = spec.split('=');
  if (!name || !file) throw new Error(`--subgraph takes name=file.graphql, not ${spec}`);
  return { name, sdl: readFileSync(file, 'utf8') };
}

function documentsAt(path: string): KnownDocument[] {
  if (!statSync(path).isDirectory()) return [{ name: path, source: readFileSync(path, 'utf8') }];
  return readdirSync(path)
    .sort()
    .flatMap((name) => (name.endsWith('.graphql') || statSync(join(path, name)).isDirectory() ? documentsAt(join(path, name)) : []));
}

try {
  const result = await runCheck({
    released: releasedSdl(values.released),
    current: values.current ? readFileSync(values.current, 'utf8') : await workingTreeSdl(),
    accepted: acceptedChanges(values.accepted),
    documents: knownDocuments(),
    subgraphs: values.subgraph.map(subgraphOf),
    supergraphDocuments: values.operations.flatMap(documentsAt),
  });
  for (const line of reportLines(result, { verbose: values.verbose })) console.log(line);
  // The whole process, imports included: what CI spends on it.
  console.log(`(${process.uptime().toFixed(1)} s)`);
  process.exitCode = result.passed ? 0 : 1;
} catch (error) {
  console.error(`schema check could not run: ${(error as Error).message}`);
  process.exitCode = 2;
}
