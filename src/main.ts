/** Command-line entry: config, the gateway (and with no PAYMENTS_API_URL the seeded emulator), graceful stop. */
import { randomBytes } from 'node:crypto';
import { RedisLinks } from './redis.js';
import { checkIdempotencyRedis, IDEMPOTENCY_PARTITIONS, idempotencyKeys, loadDiskStore, MemoryIdempotencyStore, RedisContinuity, RedisIdempotencyStore, type IdempotencyStore } from './idempotency/index.js';
import { ConfigError, embedsEmulator, loadConfig, settingLookalikes } from './config.js';
import { DataDirInUseError, lockDataDir, runsWithoutFolder, type DataDirLock } from './data-lock.js';
import { loadDiskLedger, type DeliveryLedger } from './realtime/index.js';
import { createLogger } from './logger.js';
import { startGateway, upstreamFor } from './server/index.js';
import { exampleTabs } from './explorer/index.js';
import { welcome } from './welcome.js';
import type { RunningEmulator } from '../emulator/index.js';

const IDEMPOTENCY_PREFIX = 'gateway:idempotency:';

async function main(): Promise<void> {
  // A near miss of a setting's name is ignored, so said at once: `WEBHOOK_SECRET` would leave webhooks off.
  // The emulator's names are loaded only where it runs: a gateway in front of the real API does not carry its modules.
  const nearMisses = settingLookalikes(process.env, embedsEmulator(process.env) ? (await import('../emulator/index.js')).EMULATOR_SETTING_NAMES : []);
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error([error.message, ...nearMisses.map((m) => `  - ${m}`)].join('\n'));
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel, { pretty: process.stdout.isTTY === true && process.env.NODE_ENV !== 'production' });
  for (const message of nearMisses) logger.warn(message);

  // Before anything starts: a second process on the same folder would take the first's retries as new.
  let dataLock: DataDirLock | null = null;
  let withoutFolder = false;
  if (!config.redis) {
    try {
      dataLock = await lockDataDir(config.dataDir, {
        onLost: (holder) => logger.error({ dataDir: config.dataDir, holder: holder && { pid: holder.pid, host: holder.host } }, 'the DATA_DIR lock was taken from this process: another gateway may now use the same folder'),
      });
    } catch (error) {
      if (runsWithoutFolder(error, config)) {
        withoutFolder = true;
        logger.warn({ dataDir: config.dataDir }, `${error.message} This one keeps its idempotency records and webhook ledger in memory, lost when it stops: set DATA_DIR to give it a folder of its own.`);
      } else {
        const message = error instanceof DataDirInUseError ? error.message : 'the DATA_DIR lock cannot be taken';
        logger.fatal({ ...(error instanceof DataDirInUseError ? {} : { err: error }), dataDir: config.dataDir }, `refusing to start: ${message}`);
        process.exit(1);
      }
    }
  }

  let emulator: RunningEmulator | null = null;
  let emulatorForwards = false;
  let consolePortTaken: number | null = null;
  // Loaded only when embedded: a gateway in front of the real API does not carry the emulator's modules.
  const embedded = config.embeddedEmulator ? await import('../emulator/index.js') : null;
  // On the gateway's HOST (loopback unless asked), admin API behind this user's token.
  const adminToken = embedded ? embedded.embeddedAdminToken(undefined, (message) => logger.warn(message)) : '';
  if (embedded) {
    const options = embedded.loadEmulatorOptionsFromEnv(process.env);
    // 4010 when free, so the console keeps its address.
    emulator = await embedded.startEmbeddedEmulator({ ...options, adminToken }, Boolean(process.env.EMULATOR_PORT), config.host);
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
  let idempotencyStore: IdempotencyStore;
  try {
    // Records lost in Redis (emptied, an older snapshot, a replica behind) are found and new claims refused a while.
    // A cluster spreads callers over partitions, each with its own marker; one server keeps the layout it always had.
    const layout = config.redis ? { partitions: idempotencyRedis?.isCluster ? IDEMPOTENCY_PARTITIONS : undefined, acks: config.redis } : {};
    const markers = idempotencyKeys(IDEMPOTENCY_PREFIX, layout.partitions ?? null).markers;
    const continuity = idempotencyRedis ? new RedisContinuity(idempotencyRedis, markers, { quarantineMs: config.idempotency.quarantineMs, logger, ...(config.redis ? { acks: config.redis } : {}) }) : null;
    await continuity?.start();
    idempotencyStore = idempotencyRedis
      ? new RedisIdempotencyStore(idempotencyRedis, IDEMPOTENCY_PREFIX, undefined, config.idempotency.ttlMs, continuity ?? undefined, layout)
      : withoutFolder
        ? new MemoryIdempotencyStore(undefined, undefined, config.idempotency.callerMaxBytes, config.idempotency.maxBytes)
        : // One instance keeps its records on disk: a retry after a crash or a deploy replays instead of paying twice.
          (await loadDiskStore()).open(config.dataDir, { bytesPerCaller: config.idempotency.callerMaxBytes, maxBytes: config.idempotency.maxBytes }, (pid) =>
            logger.warn({ dataDir: config.dataDir, pid }, 'another gateway process uses this DATA_DIR: a retry sent to the other may act again; give each process its own folder, or share REDIS_URL'),
          );
  } catch (error) {
    logger.fatal({ err: error, dataDir: config.dataDir }, 'refusing to start: the idempotency records cannot be opened');
    process.exit(1);
  }
  let webhookLedger: (DeliveryLedger & { close(): Promise<void> }) | null = null;
  try {
    // One instance remembers its deliveries on disk: a redelivery after a restart is still a duplicate. Not with the
    // embedded emulator: it is new at every start and numbers its events from 1 again, which would read as redeliveries.
    webhookLedger = config.redis || withoutFolder || emulator ? null : (await loadDiskLedger()).open(config.dataDir, config.webhookLedger);
  } catch (error) {
    logger.fatal({ err: error, dataDir: config.dataDir }, 'refusing to start: the webhook ledger cannot be opened');
    process.exit(1);
  }
  const upstream = upstreamFor(config, upstreamUrl);
  const gateway = await startGateway({
    config: gatewayConfig,
    upstream,
    logger,
    redisLinks,
    idempotencyStore,
    ...(webhookLedger ? { webhookLedger } : {}),
    ...(demoKey ? { explorer: { defaultHeaders: { Authorization: `Bearer ${demoKey}` }, tabs: exampleTabs(startingTransaction) } } : {}),
  });
  // The gateway's port is known only now (PORT may be 0).
  if (emulator && forwardSecret) emulator.forwardEventsTo(new URL('/webhooks/payments', gateway.url).href, forwardSecret);

  // The welcome holds the emulator's admin token: never print it into a production log stream.
  if (emulator && demoKey && (!config.production || process.stdout.isTTY)) {
    console.log(
      welcome({
        graphqlUrl: gateway.url,
        gatewayAddress: gateway.boundAddress,
        emulatorUrl: emulator.url,
        emulatorAddress: emulator.boundAddress,
        key: demoKey,
        adminToken,
        explorer: config.explorer,
        metrics: gateway.metricsClosed ?? gateway.metricsUrl,
        consolePortTaken,
      }),
    );
  } else {
    // A URL no one may read would only puzzle: say instead what opens it.
    logger.info({ url: gateway.url, listening: gateway.boundAddress, metrics: gateway.metricsClosed ?? gateway.metricsUrl, upstream: upstreamUrl, httpClient: upstream.httpClient, env: config.paymentsEnv }, 'gateway ready');
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
    await idempotencyStore.close();
    await webhookLedger?.close();
    dataLock?.release();
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
