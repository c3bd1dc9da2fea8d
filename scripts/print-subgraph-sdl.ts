/**
 * Writes the subgraph SDL, exactly as `_service { sdl }` answers it, to
 * supergraph/payments.graphql (for `rover subgraph publish` or local
 * composition). `--stdout` prints it instead. CI regenerates it and fails
 * when the committed file differs (scripts/check-generated.sh).
 */
import { writeFileSync } from 'node:fs';
import { workingTreeSdl } from './schema-check/inputs.js';

const OUTPUT = new URL('../supergraph/payments.graphql', import.meta.url);

try {
  const text = await workingTreeSdl();
  if (process.argv.includes('--stdout')) process.stdout.write(text);
  else writeFileSync(OUTPUT, text);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
