/**
 * Step 2: the payments SDL composed beside the stand-ins (stand-ins.ts) by
 * both composers a supergraph may use: Apollo's (@apollo/composition, with
 * the query planner's satisfiability check) and Hive's
 * (@theguild/federation-composition). An error fails the check; an Apollo
 * hint that the released SDL did not give (or that went) is reported. The
 * composed API schema (Hive's `publicSdl`) is what a supergraph team's own
 * operations are validated against.
 */
import { composeServices as composeWithApollo } from '@apollo/composition';
import { composeServices as composeWithHive } from '@theguild/federation-composition';
import { parse } from 'graphql';
import type { ParsedSdl } from './changes.js';
import { standIns, type Subgraph } from './stand-ins.js';

export type Composer = '@apollo/composition' | '@theguild/federation-composition';

export interface CompositionFinding {
  kind: 'error' | 'baseline error' | 'hint added' | 'hint gone';
  composer: Composer;
  message: string;
}

const URL_OF = (name: string) => `http://${name}.invalid/graphql`;

interface Composed {
  errors: string[];
  hints: string[];
  /** The supergraph's API schema, when the composer gives it. */
  apiSdl?: string;
}

export interface Composition {
  findings: CompositionFinding[];
  /** The API schemas composed with the released and the current payments SDL (undefined when that composition failed). */
  releasedApiSdl?: string;
  currentApiSdl?: string;
}

function apollo(subgraphs: readonly Subgraph[]): Composed {
  const result = composeWithApollo(subgraphs.map((s) => ({ name: s.name, url: URL_OF(s.name), typeDefs: parse(s.sdl) })));
  const errors = (result.errors ?? []).map((e) => `${String(e.extensions.code ?? 'ERROR')}: ${e.message}`);
  const hints = (result.hints ?? []).map((h) => `${h.definition.code}: ${h.message}`);
  return { errors, hints };
}

function hive(subgraphs: readonly Subgraph[]): Composed {
  const result = composeWithHive(subgraphs.map((s) => ({ name: s.name, url: URL_OF(s.name), typeDefs: parse(s.sdl) })));
  const errors = (result.errors ?? []).map((e) => `${String(e.extensions.code ?? 'ERROR')}: ${e.message}`);
  return { errors, hints: [], apiSdl: result.publicSdl };
}

const COMPOSERS: [Composer, (subgraphs: readonly Subgraph[]) => Composed][] = [
  ['@apollo/composition', apollo],
  ['@theguild/federation-composition', hive],
];

export function compose(released: ParsedSdl, current: ParsedSdl, subgraphs: readonly Subgraph[] = []): Composition {
  // A supergraph team's own subgraph takes the place of a stand-in of the same name.
  const theirs = new Set(subgraphs.map((s) => s.name));
  const others = [...standIns(released).filter((s) => !theirs.has(s.name)), ...subgraphs];
  const composition: Composition = { findings: [] };
  const findings = composition.findings;
  for (const [composer, composeWith] of COMPOSERS) {
    const before = composeWith([{ name: 'payments', sdl: released.sdl }, ...others]);
    const after = composeWith([{ name: 'payments', sdl: current.sdl }, ...others]);
    composition.releasedApiSdl ??= before.apiSdl;
    composition.currentApiSdl ??= after.apiSdl;
    // The stand-ins are written from the released SDL, so it must compose with them; if not, the check itself is wrong.
    for (const message of before.errors) findings.push({ kind: 'baseline error', composer, message });
    for (const message of after.errors) findings.push({ kind: 'error', composer, message });
    if (after.errors.length > 0) continue;
    for (const hint of after.hints) if (!before.hints.includes(hint)) findings.push({ kind: 'hint added', composer, message: hint });
    for (const hint of before.hints) if (!after.hints.includes(hint)) findings.push({ kind: 'hint gone', composer, message: hint });
  }
  return composition;
}
