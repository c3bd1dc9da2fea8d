/**
 * Command-line entry: read config, start the gateway (and, with no
 * PAYMENTS_API_URL, the embedded emulator seeded with demo data), stop
 * gracefully on SIGINT/SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisIdempotencyStore } from './idempotency/index.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startGateway } from './server.js';
import { createUpstreamClient, type UpstreamClient } from './upstream/index.js';
import { loadEmulatorOptionsFromEnv, startEmulator, type RunningEmulator } from './emulator/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);

  let emulator: RunningEmulator | null = null;
  let demoKey: string | null = null;
  let upstreamUrl: string;
  // Embedded: the emulator forwards its webhooks to the gateway, signed with a
  // secret made here. The gateway's port is known only once it listens, so it
  // starts first and its upstream client is bound right after the emulator.
  const forwardSecret = config.paymentsApiUrl ? null : randomBytes(32).toString('hex');
  const gatewayConfig = forwardSecret
    ? Object.freeze({ ...config, webhookSecrets: Object.freeze([...config.webhookSecrets, forwardSecret]) })
    : config;
  let bound: UpstreamClient | null = null;
  // With REDIS_URL every instance sees the same idempotency records.
  const idempotencyStore = config.redisUrl ? new RedisIdempotencyStore(new Redis(config.redisUrl, { maxRetriesPerRequest: 2 })) : undefined;
  const gateway = await startGateway({
    config: gatewayConfig,
    upstream: {
      forKey: (key, scope) => {
        if (!bound) throw new Error('upstream client not bound yet');
        return bound.forKey(key, scope);
      },
      breakerStates: () => bound?.breakerStates() ?? {},
    },
    logger,
    ...(idempotencyStore ? { idempotencyStore } : {}),
  });
  if (config.paymentsApiUrl) {
    upstreamUrl = config.paymentsApiUrl;
  } else {
    const options = loadEmulatorOptionsFromEnv(process.env);
    const forward = options.forwardTo
      ? {}
      : { forwardTo: new URL('/webhooks/payments', gateway.url).href, forwardSecret: forwardSecret ?? undefined };
    // Embedded: a free port unless one is asked for, so a standalone emulator on 4010 can coexist.
    emulator = await startEmulator({ ...options, ...forward, port: process.env.EMULATOR_PORT ? options.port : 0, seed: false });
    demoKey = await emulator.seedDemo();
    upstreamUrl = emulator.url;
  }

  const upstream = createUpstreamClient({ baseUrl: upstreamUrl, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  bound = upstream;

  if (emulator && demoKey) {
    printWelcome(gateway.url, emulator.url, demoKey);
  } else {
    logger.info({ url: gateway.url, upstream: upstreamUrl, env: config.paymentsEnv }, 'gateway ready');
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // Past the grace period in-flight work is cut: say so with a non-zero exit.
    const { graceMs, readinessDelayMs } = config.shutdown;
    setTimeout(() => {
      logger.error({ graceMs }, 'shutdown grace period exceeded; exiting with work still in flight');
      process.exit(1);
    }, readinessDelayMs + graceMs + 2_000).unref();
    await gateway.stop();
    upstream.close();
    await idempotencyStore?.close();
    await emulator?.stop();
    logger.info({ signal }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function printWelcome(graphqlUrl: string, emulatorUrl: string, key: string): void {
  const query = '{ transactions(first: 5) { totalCount nodes { id amount status customer { fullName } currency { iso } } } }';
  console.log(`
Payments GraphQL gateway ready (embedded emulator, sandbox demo data)

  GraphQL     ${graphqlUrl}   (open it in a browser for Apollo Sandbox)
  Emulator    ${emulatorUrl}
  Sandbox key ${key}

Set this header in Apollo Sandbox or your client:
  Authorization: Bearer ${key}

A first query:
  curl -s ${graphqlUrl} -H 'content-type: application/json' \\
    -H 'authorization: Bearer ${key}' \\
    -d '{"query":"${query}"}'
`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
