import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

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

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty) instead of JSON: for a developer's terminal, never for collectors. */
  pretty?: boolean;
  destination?: DestinationStream;
}

export function createLogger(level: string, { pretty = false, destination }: LoggerOptions = {}): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' } };
  if (pretty) return pino(options, prettyStream());
  return destination ? pino(options, destination) : pino(options);
}

function prettyStream(): DestinationStream {
  // Synchronous, so lines keep their order with the banner and are written before process.exit.
  const require = createRequire(import.meta.url);
  const pretty = require('pino-pretty') as (options: Record<string, unknown>) => DestinationStream;
  return pretty({ sync: true, colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' });
}
