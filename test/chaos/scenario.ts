/**
 * The chaos scenario (docs/resilience.md, The chaos suite): every fault under one load, counted. Per fault a fresh
 * audience of subscribers on every gateway and a fresh account of keyed payments; approvals are made upstream one
 * by one and webhooked to the first gateway; once a third are in, the fault begins, and the load goes on through
 * it. Then: events approved, seen by every subscriber, lost, seen twice; keyed payments, doubled; and every refusal
 * meanwhile, by kind, with those that fell outside the fault's window. Used by test/chaos/chaos.test.ts (short)
 * and `npm run bench -- chaos` (long).
 */
import { newKey } from '../support/harness.js';
import { sleep } from '../realtime/support.js';
import { openAudience, type Audience, type Count } from './audience.js';
import { startPayments, type PaymentsCount } from './payments.js';
import { startWebhookRelay, type WebhookRelay } from './webhooks.js';
import { startWorld, type Gateway, type World } from './world.js';

export const FAULTS = ['redis-killed', 'redis-cut-off', 'redis-empty', 'gateway-killed', 'single-gateway-killed'] as const;
export type FaultName = (typeof FAULTS)[number];

export interface ChaosOptions {
  faults: readonly FaultName[];
  /** Approvals per fault, each seen by every subscriber. */
  events: number;
  /** Between two approvals made upstream. */
  paceMs: number;
  /** Payment clients at once. */
  clients: number;
  quarantineMs: number;
  /** How long a client retries one payment: shorter than the quarantine, as docs/resilience.md asks of it. */
  retryWindowMs: number;
  /** How long a Redis is cut off. */
  cutOffMs: number;
  progress?(line: string): void;
}

export interface FaultReport {
  fault: FaultName;
  /** From the first approval to the last count. */
  ms: number;
  subscribers: Record<string, Count>;
  payments: PaymentsCount;
  /** Refusals meanwhile, by kind: what the webhook sender and the payment clients were told. */
  refused: Record<string, number>;
  /**
   * Refusals before the fault began or after its window closed: its end (and quarantine), then one retry window; for
   * IDEMPOTENCY_IN_PROGRESS, a running record's lock.
   */
  outsideWindow: number;
  /** The fault's window, from its beginning. */
  windowMs: number;
  /** A gateway killed while one of its payments was at the upstream. */
  killedMidPayment?: boolean;
  /** Redis restarted empty: how long each gateway took to quarantine, and its error lines. */
  quarantine?: { foundMs: number[]; lossLines: number[] };
  /** Once the fault (and its quarantine) is over: a keyed payment answered at once by every gateway. */
  recovered: boolean;
}

interface Phase {
  world: World;
  audience: Audience;
  relay: WebhookRelay;
  options: ChaosOptions;
  /** The next payment to start goes first to this gateway. */
  aim(gateway: Gateway): Promise<string>;
  quarantineEnds?: number;
  report: Partial<FaultReport>;
}

interface Fault {
  shape: World['shape'];
  /** Every answered payment is sent again once the fault is over: its record must have outlived it. */
  resend: boolean;
  /** Resolves once the fault has struck. */
  begin(phase: Phase): Promise<void>;
  /** Resolves once the fault is over (Redis back, the gateway restarted and its subscribers back). */
  end(phase: Phase): Promise<void>;
}

type Readyz = { idempotency?: { state: string; until?: string } };
const readyz = async (gateway: Gateway): Promise<Readyz> => (await (await fetch(new URL('/readyz', gateway.url))).json()) as Readyz;
const LOSS_LINE = 'idempotency Redis lost records';
/** A running record's lock (OPERATION_DEADLINE_MS, 15 s, and 5 s) and how long a duplicate waits on it, by default. */
const LOCK_MS = 20_000;
const WAIT_MS = 5_000;
/** A killed Redis stays down past the append's 2 s command timeout, so webhooks meanwhile are refused, not held. */
const DOWN_MS = 2_500;

/** Kills the first gateway while the upstream is creating a payment sent to it, then starts it again. */
const killMidPayment: Fault['begin'] = async (phase) => {
  const victim = phase.world.gateways()[0]!;
  const key = phase.aim(victim);
  const struck = new Promise<boolean>((resolve) => {
    phase.world.onWrite(async (body) => {
      if (!body.includes(`"chaos ${await key}"`)) return;
      phase.world.onWrite(null);
      await phase.world.kill(victim.name);
      resolve(true);
    });
    setTimeout(() => resolve(false), 10_000).unref();
  });
  phase.report.killedMidPayment = await struck;
  phase.world.onWrite(null);
  await phase.world.kill(victim.name);
};

const restartVictim: Fault['end'] = async (phase) => {
  const victim = phase.world.gateways()[0]!;
  const back = await phase.world.restart(victim.name);
  await phase.audience.reopen(back);
};

const FAULT: Record<FaultName, Fault> = {
  'redis-killed': {
    shape: 'redis',
    resend: true,
    begin: async ({ world }) => world.redis().kill(),
    async end({ world }) {
      await sleep(DOWN_MS);
      await world.redis().restartFromFile();
    },
  },
  'redis-cut-off': {
    shape: 'redis',
    resend: true,
    begin: async ({ world }) => world.redis().cutOff(),
    async end({ world, options }) {
      // Past the appending connection's 2 s command timeout: appends answered 503 may still run when bytes flow.
      await sleep(options.cutOffMs);
      world.redis().reconnect();
    },
  },
  'redis-empty': {
    shape: 'redis',
    // Its records are gone: a resend after the quarantine acts again where the upstream ignores the key (documented).
    resend: false,
    begin: async ({ world }) => world.redis().kill(),
    async end(phase) {
      await sleep(DOWN_MS);
      await phase.world.redis().restartEmpty();
      const since = Date.now();
      const foundMs: number[] = [];
      let until = 0;
      for (const gateway of phase.world.gateways()) {
        let state = await readyz(gateway);
        while (state.idempotency?.state !== 'quarantined' && Date.now() - since < 15_000) {
          await sleep(50);
          state = await readyz(gateway);
        }
        foundMs.push(state.idempotency?.state === 'quarantined' ? Date.now() - since : Number.NaN);
        until = Math.max(until, Date.parse(state.idempotency?.until ?? '') || 0);
      }
      phase.quarantineEnds = until;
      phase.report.quarantine = { foundMs, lossLines: [] };
    },
  },
  'gateway-killed': { shape: 'redis', resend: true, begin: killMidPayment, end: restartVictim },
  'single-gateway-killed': { shape: 'single', resend: true, begin: killMidPayment, end: restartVictim },
};

/** Runs each fault in order, on one world per shape (started when first needed), and reports each. */
export async function runChaos(options: ChaosOptions): Promise<FaultReport[]> {
  const reports: FaultReport[] = [];
  const worlds = new Map<World['shape'], { world: World; relay: WebhookRelay }>();
  try {
    for (const name of options.faults) {
      const shape = FAULT[name].shape;
      for (const [other, { world, relay }] of worlds) {
        if (other === shape) continue;
        await relay.close();
        await world.stop();
        worlds.delete(other);
      }
      if (!worlds.has(shape)) {
        const at = Date.now();
        const world = await startWorld({ shape, quarantineMs: options.quarantineMs, env: { WS_MAX_SUBSCRIPTIONS_PER_KEY: String(options.events + 10), WS_SUBSCRIBE_PER_MINUTE: String(4 * (options.events + 10)) } });
        const relay = await startWebhookRelay(world.emulator, () => world.gateways()[0]!);
        worlds.set(shape, { world, relay });
        options.progress?.(`${shape} world started in ${Date.now() - at} ms`);
      }
      const { world, relay } = worlds.get(shape)!;
      options.progress?.(`${name}: starting`);
      const report = await runFault(name, world, relay, options);
      options.progress?.(`${name}: ${JSON.stringify(report)}`);
      reports.push(report);
    }
  } finally {
    for (const { world, relay } of worlds.values()) {
      await relay.close().catch(() => undefined);
      await world.stop();
    }
  }
  return reports;
}

async function runFault(name: FaultName, world: World, relay: WebhookRelay, options: ChaosOptions): Promise<FaultReport> {
  const fault = FAULT[name];
  const opened = Date.now();
  const mark = (what: string) => options.progress?.(`${name}: ${what} at ${Date.now() - opened} ms`);
  const audience = await openAudience(world.emulator, newKey('chaos-events'), world.gateways(), options.events);
  const outputAt = new Map(world.gateways().map((g) => [g.name, g.process.output().length]));
  let aimed: { gateway: string; key: string | null; took: (key: string) => void } | null = null;
  const payments = startPayments({
    emulator: world.emulator,
    apiKey: newKey('chaos-pay'),
    gateways: () => world.gateways(),
    label: name,
    concurrency: options.clients,
    retryWindowMs: options.retryWindowMs,
    route(key, attempt, resend) {
      // A payment's first attempt: one that reaches the upstream.
      if (aimed && aimed.key === null && attempt === 0 && !resend) {
        aimed.key = key;
        aimed.took(key);
      }
      return aimed?.key === key && attempt === 0 ? world.gateway(aimed.gateway) : undefined;
    },
  });
  const phase: Phase = {
    world,
    audience,
    relay,
    options,
    aim: (gateway) => new Promise((took) => (aimed = { gateway: gateway.name, key: null, took })),
    report: {},
  };

  mark('audience listening');
  const started = Date.now();
  let begun = 0;
  let ended: Promise<void> | null = null;
  let endedAt = 0;
  // A quiet part first: refusals before the fault are outside its window.
  await sleep(300);
  for (const [i, id] of audience.transactions.entries()) {
    await audience.approve(id);
    if (i === Math.floor(audience.transactions.length / 3)) {
      begun = Date.now();
      await fault.begin(phase);
      mark('fault struck');
      ended = fault.end(phase).then(() => {
        endedAt = Date.now();
        mark('fault over');
      });
    }
    await sleep(options.paceMs);
  }
  await ended;
  await relay.settled(audience.transactions, 60_000);
  await payments.stop();
  if (fault.resend) await payments.resendAnswered();
  mark('webhooks delivered, payments stopped and resent');
  // Refusals may go on after the fault for a payment under way when it ended: one retry window, and a second. A
  // record left running (its gateway killed, or its result not written while Redis was away) holds its key for its
  // lock, a duplicate waiting IDEMPOTENCY_WAIT_MS before it is told so.
  const over = Math.max(endedAt, phase.quarantineEnds ?? 0);
  const windowEnds = over + options.retryWindowMs + 1_000;
  const runningEnds = Math.max(windowEnds, over + LOCK_MS + WAIT_MS + 1_000);

  // Every subscriber has every approval, or the deadline passed; then a moment for any second copy.
  const everyoneSaw = () => Object.values(audience.tally(audience.transactions)).every((c) => c.seen === c.approved);
  for (const deadline = Date.now() + 20_000; !everyoneSaw() && Date.now() < deadline; ) await sleep(50);
  await sleep(500);
  const subscribers = audience.tally(audience.transactions);

  // Recovered: once the fault and its quarantine are over, a new keyed payment is answered at once by every gateway.
  if (Date.now() < over) await sleep(over - Date.now());
  const recovered = await recoveredOnEvery(world);
  await audience.close();

  const refusals = [...relay.refusals.filter((r) => r.at >= started), ...payments.refusals];
  const refused: Record<string, number> = {};
  for (const r of refusals) refused[r.kind] = (refused[r.kind] ?? 0) + 1;
  if (phase.report.quarantine) {
    phase.report.quarantine.lossLines = world.gateways().map((g) => g.process.output().slice(outputAt.get(g.name) ?? 0).split('\n').filter((l) => l.includes(LOSS_LINE)).length);
  }
  return {
    fault: name,
    ms: Date.now() - started,
    subscribers,
    payments: await payments.count(),
    refused,
    outsideWindow: refusals.filter((r) => r.at < begun || r.at > (r.kind === 'IDEMPOTENCY_IN_PROGRESS' ? runningEnds : windowEnds)).length,
    windowMs: windowEnds - begun,
    ...phase.report,
    recovered,
  };
}

async function recoveredOnEvery(world: World): Promise<boolean> {
  let ok = true;
  for (const gateway of world.gateways()) {
    const once = startPayments({ emulator: world.emulator, apiKey: newKey('chaos-after'), gateways: () => [gateway], label: 'after', concurrency: 1, retryWindowMs: 0 });
    await sleep(300);
    await once.stop();
    ok &&= once.refusals.length === 0 && (await once.count()).replayed > 0;
  }
  return ok;
}
