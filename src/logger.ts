import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths that may carry a secret, wherever a log line is built from a request. */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } });
}
