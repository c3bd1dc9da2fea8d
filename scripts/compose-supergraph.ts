/**
 * `npm run -s compose > supergraph.graphql`: the npm equivalent of `rover supergraph compose --config
 * supergraph/supergraph.yaml`, for machines where rover (a downloaded binary) cannot be installed. It reads
 * the same Rover config (`--config <file>` for another), takes each subgraph's schema from its `file`, its
 * inline `sdl` or its `subgraph_url` (asked `{ _service { sdl } }`, as `rover subgraph introspect` does),
 * composes them with @apollo/composition and prints the supergraph SDL; composition errors go to stderr
 * with exit code 1.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { parse as parseYaml } from 'yaml';

interface RoverConfig {
  federation_version?: string;
  subgraphs?: Record<string, { routing_url?: string; schema?: { file?: string; sdl?: string; subgraph_url?: string } }>;
}

export type Composed = { supergraphSdl: string; notes: string[] } | { errors: string[]; notes: string[] };

const installedComposition = (): string =>
  (createRequire(import.meta.url)('@apollo/composition/package.json') as { version: string }).version;

async function introspect(url: string): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ _service { sdl } }' }) });
  const body = (await res.json()) as { data?: { _service?: { sdl?: string } } };
  const sdl = body.data?._service?.sdl;
  if (typeof sdl !== 'string') throw new Error(`${url} answered no _service { sdl } (HTTP ${res.status})`);
  return sdl;
}

export async function composeFromConfig(configFile: URL): Promise<Composed> {
  const notes: string[] = [];
  let config: RoverConfig;
  try {
    config = (parseYaml(readFileSync(configFile, 'utf8')) ?? {}) as RoverConfig;
  } catch (error) {
    return { errors: [`cannot read the Rover config ${configFile.pathname}: ${(error as Error).message}`], notes };
  }
  const wanted = config.federation_version?.replace(/^=/, '');
  if (wanted && wanted !== installedComposition()) {
    notes.push(`federation_version asks for ${config.federation_version}; composing with the installed @apollo/composition ${installedComposition()}`);
  }
  const errors: string[] = [];
  const services: { name: string; url: string; sdl: string }[] = [];
  for (const [name, subgraph] of Object.entries(config.subgraphs ?? {})) {
    const { file, sdl, subgraph_url: subgraphUrl } = subgraph.schema ?? {};
    try {
      const text = file ? readFileSync(new URL(file, configFile), 'utf8') : (sdl ?? (subgraphUrl ? await introspect(subgraphUrl) : null));
      if (text === null) errors.push(`${name}: schema needs file, sdl or subgraph_url (use rover for a graph_ref)`);
      else services.push({ name, url: subgraph.routing_url ?? '', sdl: text });
    } catch (error) {
      errors.push(`${name}: ${(error as Error).message}`);
    }
  }
  if (services.length === 0 && errors.length === 0) errors.push('no subgraphs in the config');
  if (errors.length > 0) return { errors, notes };
  try {
    const result = composeServices(services.map(({ name, url, sdl }) => ({ name, url, typeDefs: parse(sdl) })));
    if (result.errors) return { errors: result.errors.map((e) => e.message), notes };
    return { supergraphSdl: result.supergraphSdl, notes };
  } catch (error) {
    return { errors: [(error as Error).message], notes };
  }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--config');
  const file = at === -1 ? new URL('../supergraph/supergraph.yaml', import.meta.url) : pathToFileURL(process.argv[at + 1] ?? '');
  const composed = await composeFromConfig(file);
  for (const note of composed.notes) console.error(`note: ${note}`);
  if ('errors' in composed) {
    console.error(`composition failed:\n${composed.errors.map((e) => `  - ${e}`).join('\n')}`);
    process.exit(1);
  }
  process.stdout.write(composed.supergraphSdl.endsWith('\n') ? composed.supergraphSdl : `${composed.supergraphSdl}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
