/**
 * Writes the subgraph SDL, exactly as `_service { sdl }` answers it, to
 * supergraph/payments.graphql (for `rover subgraph publish` or local
 * composition). `--stdout` prints it instead. CI regenerates it and fails
 * when the committed file differs (scripts/check-generated.sh).
 */
import { writeFileSync } from 'node:fs';
import { graphql } from 'graphql';
import { buildSchema } from '../src/schema.js';

const OUTPUT = new URL('../supergraph/payments.graphql', import.meta.url);

const result = await graphql({ schema: buildSchema(), source: '{ _service { sdl } }' });
const sdl = (result.data as { _service?: { sdl?: string } } | null | undefined)?._service?.sdl;
if (result.errors?.length || typeof sdl !== 'string') {
  console.error('could not read _service { sdl }:', result.errors);
  process.exit(1);
}

const text = sdl.endsWith('\n') ? sdl : `${sdl}\n`;
if (process.argv.includes('--stdout')) process.stdout.write(text);
else writeFileSync(OUTPUT, text);
