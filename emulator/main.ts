/**
 * `npm run emulator`: the emulator alone on EMULATOR_PORT (default 4010).
 * Invalid configuration: every problem printed, exit code 1.
 */
import { pino } from 'pino';
import { DEMO_API_KEY, parseEmulatorEnv, startEmulator } from './index.js';

const parsed = parseEmulatorEnv(process.env);
if (!parsed.ok) {
  process.stderr.write(`Invalid emulator configuration:\n${parsed.problems.map((p) => `  - ${p}`).join('\n')}\n`);
  process.exit(1);
}

const logger = pino({ name: 'payments-emulator', level: process.env.LOG_LEVEL ?? 'info' });
const emulator = await startEmulator({ ...parsed.options, logger });

// Loud on purpose: a rehearsal emulator must never be mistaken for the provider, nor left behind a live gateway.
const rehearsal = emulator.options.liveRehearsal
  ? [
      '',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '!!  LIVE REHEARSAL (EMULATOR_LIVE_REHEARSAL=true): sk_live_ keys are accepted.  ',
      '!!  This is the emulator, not the payments provider: no money moves, and the    ',
      '!!  sandbox phone numbers decide every outcome. Never send real traffic here.   ',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '',
    ]
  : [];

process.stdout.write(
  [
    ...rehearsal,
    `Payments API emulator listening on ${emulator.url}  (style: ${emulator.options.responseStyle}, list params: ${emulator.options.listParams}, settle: ${emulator.options.settleMs} ms)`,
    `Sandbox key: ${DEMO_API_KEY}${emulator.options.seed ? ' (seeded with demo data)' : ''}; any other sk_sandbox_<anything>${emulator.options.liveRehearsal ? ' or sk_live_<anything>' : ''} key is a new, empty account.`,
    `Try: curl -H 'Authorization: Bearer ${DEMO_API_KEY}' ${emulator.url}/v1/transactions`,
    `Admin: ${emulator.url}/_emulator/stats, /_emulator/faults, /_emulator/reset; settle a payment: POST /_emulator/transactions/{id}/status`,
    'No console here: the console page comes with the emulator `npm start` embeds (its banner prints the address).',
    '',
  ].join('\n'),
);

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  void emulator.stop().then(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
