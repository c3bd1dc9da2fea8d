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

process.stdout.write(
  [
    `Payments API emulator listening on ${emulator.url}  (style: ${emulator.options.responseStyle}, list params: ${emulator.options.listParams}, settle: ${emulator.options.settleMs} ms)`,
    `Sandbox key: ${DEMO_API_KEY}${emulator.options.seed ? ' (seeded with demo data)' : ''}; any other sk_sandbox_<anything> key is a new, empty account.`,
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
