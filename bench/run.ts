/**
 * `npm run bench [-- <bench>] [options]`: runs one bench (default: gateway).
 * `npm run bench -- --help` lists the benches and their options.
 */
import { abuseBench } from './abuse.js';
import { chaosBench } from './chaos.js';
import { eventLogBench } from './event-log.js';
import { fleetBench } from './fleet.js';
import { gatewayBench } from './gateway.js';
import { idleBench } from './idle.js';
import { observabilityBench } from './observability.js';
import { pagesBench } from './pages.js';
import { peerBench } from './peer.js';
import { pollingBench } from './polling.js';
import { realtimeBench } from './realtime.js';
import { reconcileBench } from './reconcile.js';
import { replicaAcksBench } from './replica-acks.js';
import { resilienceBench } from './resilience.js';
import { routerCacheBench } from './router-cache.js';
import type { Bench } from './support.js';

const BENCHES: readonly Bench[] = [gatewayBench, peerBench, realtimeBench, eventLogBench, reconcileBench, resilienceBench, abuseBench, observabilityBench, routerCacheBench, idleBench, pollingBench, pagesBench, chaosBench, replicaAcksBench, fleetBench];
const DEFAULT = 'gateway';

function help(): string {
  const lines = ['usage: npm run bench [-- <bench>] [options]', '', 'benches:'];
  for (const bench of BENCHES) {
    lines.push(`  ${bench.name}${bench.name === DEFAULT ? ' (default)' : ''}: ${bench.summary}`);
    for (const option of bench.usage) lines.push(`      ${option}`);
  }
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(help());
    return;
  }
  const named = argv[0] !== undefined && !argv[0].startsWith('-');
  const name = named ? argv[0]! : DEFAULT;
  const bench = BENCHES.find((b) => b.name === name);
  if (!bench) {
    console.error(`unknown bench "${name}"\n\n${help()}`);
    process.exitCode = 2;
    return;
  }
  await bench.run(named ? argv.slice(1) : argv);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
