/** Command-line entry: config, the gateway (and with no PAYMENTS_API_URL the seeded emulator), graceful stop. */
import { randomBytes } from 'node:crypto';
import { RedisLinks } from './redis.js';
import { checkIdempotencyRedis, RedisIdempotencyStore } from './idempotency/index.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startGateway, upstreamFor } from './server/index.js';
import { exampleTabs } from './explorer/index.js';
import { embeddedAdminToken, loadEmulatorOptionsFromEnv, startEmbeddedEmulator, type RunningEmulator } from '../emulator/index.js';

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
  const logger = createLogger(config.logLevel, { pretty: process.stdout.isTTY === true && process.env.NODE_ENV !== 'production' });

  let emulator: RunningEmulator | null = null;
  let emulatorForwards = false;
  let consolePortTaken: number | null = null;
  // Loopback only, admin API behind this user's token: never reachable from outside.
  const adminToken = config.embeddedEmulator ? embeddedAdminToken(undefined, (message) => logger.warn(message)) : '';
  if (config.embeddedEmulator) {
    const options = loadEmulatorOptionsFromEnv(process.env);
    // 4010 when free, so the console keeps its address.
    emulator = await startEmbeddedEmulator({ ...options, adminToken }, Boolean(process.env.EMULATOR_PORT));
    if (options.port !== 0 && new URL(emulator.url).port !== String(options.port)) consolePortTaken = options.port;
    emulatorForwards = Boolean(options.forwardTo);
  }
  const demoKey = emulator?.seedDemo() ?? null;
  const startingTransaction = emulator && demoKey ? await createStartingTransaction(emulator.url, demoKey) : undefined;
  const upstreamUrl = config.paymentsApiUrl ?? emulator!.url;

  // The emulator's webhooks come here, signed with a secret made here.
  const forwardSecret = emulator && !emulatorForwards ? randomBytes(32).toString('hex') : null;
  const gatewayConfig = forwardSecret
    ? Object.freeze({ ...config, webhookSecrets: Object.freeze([...config.webhookSecrets, forwardSecret]) })
    : config;
  const redisLinks = new RedisLinks(logger);
  const idempotencyRedis = config.redis ? redisLinks.open(config.redis, 'idempotency') : null;
  if (idempotencyRedis) {
    // A Redis that forgets records on restart lets retries of payments in flight act twice.
    try {
      await checkIdempotencyRedis(idempotencyRedis, config.idempotency.redisPersistence, logger);
    } catch (error) {
      logger.fatal({ err: error }, 'refusing to start');
      process.exit(1);
    }
  }
  const idempotencyStore = idempotencyRedis ? new RedisIdempotencyStore(idempotencyRedis, undefined, undefined, config.idempotency.ttlMs) : undefined;
  const upstream = upstreamFor(config, upstreamUrl);
  const gateway = await startGateway({
    config: gatewayConfig,
    upstream,
    logger,
    redisLinks,
    ...(idempotencyStore ? { idempotencyStore } : {}),
    ...(demoKey ? { explorer: { defaultHeaders: { Authorization: `Bearer ${demoKey}` }, tabs: exampleTabs(startingTransaction) } } : {}),
  });
  // The gateway's port is known only now (PORT may be 0).
  if (emulator && forwardSecret) emulator.forwardEventsTo(new URL('/webhooks/payments', gateway.url).href, forwardSecret);

  // The welcome holds the emulator's admin token: never print it into a production log stream.
  if (emulator && demoKey && (!config.production || process.stdout.isTTY)) {
    printWelcome(gateway.url, emulator.url, demoKey, adminToken, config.explorer, gateway.metricsUrl, consolePortTaken);
  } else {
    logger.info({ url: gateway.url, metrics: gateway.metricsUrl, upstream: upstreamUrl, httpClient: upstream.httpClient, env: config.paymentsEnv }, 'gateway ready');
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // Past the grace period in-flight work is cut: say so with a non-zero exit.
    const { graceMs, readinessDelayMs } = config.shutdown;
    // The drain, up to 5 s for the last trace export, then a margin.
    setTimeout(() => {
      logger.error({ graceMs }, 'shutdown grace period exceeded; exiting with work still in flight');
      process.exit(1);
    }, readinessDelayMs + graceMs + 7_000).unref();
    const { cutRequests } = await gateway.stop();
    upstream.close();
    await idempotencyStore?.close();
    await emulator?.stop();
    if (cutRequests > 0) {
      // A cut keyed mutation is safe to retry with the same Idempotency-Key.
      logger.error({ signal, cutRequests, graceMs }, `shutdown grace period exceeded: ${cutRequests} in-flight request(s) cut`);
      process.exit(1);
    }
    logger.info({ signal }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function createStartingTransaction(emulatorUrl: string, key: string): Promise<string | undefined> {
  const body = { amount: 2500, description: 'Order 42', currency: { iso: 'XOF' }, customer: { firstname: 'Ama', lastname: 'Mensah', email: 'ama@example.com' } };
  try {
    const res = await fetch(`${emulatorUrl}/v1/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { 'v1/transaction'?: { id?: unknown }; id?: unknown };
    const id = (answer['v1/transaction'] ?? answer).id;
    return res.ok && (typeof id === 'number' || typeof id === 'string') ? String(id) : undefined;
  } catch {
    return undefined;
  }
}

const EXPLORER_HINT = {
  graphiql: '(open it in a browser: GraphiQL, key and examples prefilled)',
  sandbox: '(open it in a browser for Apollo Sandbox; needs the network)',
  off: '',
} as const;

function printWelcome(
  graphqlUrl: string,
  emulatorUrl: string,
  key: string,
  adminToken: string,
  explorer: keyof typeof EXPLORER_HINT,
  metricsUrl: string | null,
  consolePortTaken: number | null,
): void {
  const moved = consolePortTaken
    ? `\n              port ${consolePortTaken} was taken, so this address changes on every start: free it, or set EMULATOR_PORT`
    : '';
  const query = '{ transactions(first: 5) { totalCount nodes { id amountMoney { amount currencyIso } status customer { fullName } } } }';
  console.log(`
Payments GraphQL gateway ready (embedded emulator, sandbox demo data)

  GraphQL     ${graphqlUrl}   ${EXPLORER_HINT[explorer]}
  Emulator    ${emulatorUrl}   (loopback only; admin API header x-emulator-admin-token: ${adminToken})
  Console     ${emulatorUrl}/_emulator/console#token=${adminToken}   (settle payments, see webhooks, switch faults)${moved}
  Sandbox key ${key}   (holds the demo data; any other sk_sandbox_… key is a new, empty account)${metricsUrl ? `\n  Metrics     ${metricsUrl}   (Prometheus)` : ''}

Set this header in your client:
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
