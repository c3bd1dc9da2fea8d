/**
 * Chaos bench: the chaos scenario of test/chaos/scenario.ts (the suite's short version runs in `npm test`), long:
 * more approvals per fault, more payment clients. Prints one table of events per fault and subscriber, one of
 * payments and refusals per fault, to paste into bench/README.md. Needs redis-server on PATH.
 */
import { parseArgs } from 'node:util';
import { FAULTS, runChaos, type FaultName, type FaultReport } from '../test/chaos/scenario.js';
import { codeLine, loadLine, machineLine, markdownTable, type Bench } from './support.js';

const OPTIONS = {
  events: { type: 'string', default: '200' },
  clients: { type: 'string', default: '4' },
  faults: { type: 'string', default: FAULTS.join(',') },
  'quarantine-ms': { type: 'string', default: '20000' },
  'retry-window-ms': { type: 'string', default: '10000' },
  verbose: { type: 'boolean', default: false },
} as const;

const whole = (value: string, name: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number >= ${min}`);
  return n;
};

function tables(reports: FaultReport[]): string {
  const events = reports.flatMap((r) => Object.entries(r.subscribers).map(([who, c]) => [r.fault, who, String(c.approved), String(c.seen), String(c.lost), String(c.twice)]));
  const payments = reports.map((r) => {
    const p = r.payments;
    const refused = Object.entries(r.refused).map(([kind, n]) => `${kind} ${n}`).join(', ') || 'none';
    const quarantine = r.quarantine ? `found in ${r.quarantine.foundMs.join(' / ')} ms, lines ${r.quarantine.lossLines.join(' / ')}` : '-';
    return [r.fault, String(p.keyed), String(p.answered), r.fault === 'redis-empty' ? `${p.replayed} / -` : `${p.replayed} / ${p.replayedAfter} (${p.refusedAfter} refused)`, String(p.doubled), `${p.gaveUp} / ${p.createdUnanswered}`, refused, String(r.outsideWindow), `${(r.windowMs / 1000).toFixed(1)} s`, quarantine, r.recovered ? 'yes' : 'NO'];
  });
  return [
    markdownTable(['fault', 'subscriber', 'approved', 'seen', 'lost', 'twice'], events),
    '',
    markdownTable(['fault', 'keyed payments', 'answered', 'replayed (at once / after)', 'doubled', 'gave up / created unanswered', 'refused meanwhile', 'outside window', 'window', 'quarantine', 'recovered'], payments),
  ].join('\n');
}

async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const faults = values.faults.split(',').map((f) => f.trim()) as FaultName[];
  const unknown = faults.filter((f) => !FAULTS.includes(f));
  if (unknown.length > 0) throw new Error(`--faults: unknown ${unknown.join(', ')} (known: ${FAULTS.join(', ')})`);
  const quarantineMs = whole(values['quarantine-ms'], 'quarantine-ms', 1000);
  const retryWindowMs = whole(values['retry-window-ms'], 'retry-window-ms', 0);
  const started = Date.now();
  const before = loadLine();
  const reports = await runChaos({
    faults,
    events: whole(values.events, 'events', 3),
    paceMs: 20,
    clients: whole(values.clients, 'clients', 1),
    quarantineMs,
    retryWindowMs,
    cutOffMs: 3_000,
    progress: values.verbose ? (line) => console.error(line) : undefined,
  });
  console.log(`${machineLine()}\n${before} (before)\n${loadLine()} (after)\n${codeLine()}`);
  console.log(`quarantine ${quarantineMs} ms, client retry window ${retryWindowMs} ms, ${Math.round((Date.now() - started) / 1000)} s in all\n`);
  console.log(tables(reports));
}

export const chaosBench: Bench = {
  name: 'chaos',
  summary: 'every fault of the chaos suite under a longer load: events lost or twice, payments doubled, refusals (redis-server from PATH)',
  usage: [
    '--events <n>            approvals per fault, each to every subscriber (200)',
    '--clients <n>           keyed payment clients at once (4)',
    `--faults <a,b>          faults in order (${FAULTS.join(',')})`,
    '--quarantine-ms <ms>    IDEMPOTENCY_QUARANTINE_MS (20000)',
    '--retry-window-ms <ms>  how long a client retries one payment (10000; below the quarantine and below a crashed claim\'s lock, 20 s)',
    '--verbose               each fault\'s progress on stderr',
  ],
  run,
};
