/**
 * Starts the emulator and the gateway as real servers on 127.0.0.1 and talks
 * HTTP to them: the way every gateway integration test runs.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, upstreamFor, type RunningGateway } from '../../src/server/index.js';
import type { UpstreamClient } from '../../src/upstream/index.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator/index.js';

export interface Stack {
  emulator: RunningEmulator;
  gateway: RunningGateway;
  upstream: UpstreamClient;
  /** POST a GraphQL operation with `key` as the caller's bearer key. */
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<GqlResult<T>>;
  /** The emulator's request count for one route, e.g. `GET /v1/customers/:id`. */
  upstreamCalls(route?: string): Promise<number>;
  resetCounts(): Promise<void>;
  /** Emulator admin API (faults, stats, reset). */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export interface GqlResult<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

export interface StackOptions {
  emulator?: Partial<EmulatorOptions>;
  env?: Record<string, string>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const emulator = await startEmulator({ port: 0, settleMs: 50, ...options.emulator });
  const { gateway, upstream, gql, stop } = await startGatewayOver(emulator.url, options.env);
  const admin = emulatorAdmin(emulator.url);

  return {
    emulator,
    gateway,
    upstream,
    gql,
    async upstreamCalls(route) {
      const stats = (await admin('GET', '/_emulator/stats')) as { total: number; routes: Record<string, number> };
      return route ? (stats.routes[route] ?? 0) : stats.total;
    },
    async resetCounts() {
      await admin('DELETE', '/_emulator/stats');
    },
    admin,
    async stop() {
      await stop();
      await emulator.stop();
    },
  };
}

/** A gateway alone, over an upstream already running: a second gateway beside a stack's, with other settings. */
export type GatewayOnly = Pick<Stack, 'gateway' | 'upstream' | 'gql' | 'stop'>;

export async function startGatewayOver(upstreamUrl: string, env: Record<string, string> = {}, logger = createLogger('silent')): Promise<GatewayOnly> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYMENTS_API_URL: upstreamUrl,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const upstream = upstreamFor(config, upstreamUrl);
  const gateway = await startGateway({ config, upstream, logger });
  return {
    gateway,
    upstream,
    async gql(query, variables, key = 'sk_sandbox_test') {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, ...((await res.json()) as object) };
    },
    async stop() {
      await gateway.stop();
      upstream.close();
    },
  };
}

/** The emulator's admin API (faults, stats, reset) at `baseUrl`, as JSON. */
export function emulatorAdmin(baseUrl: string) {
  return async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  };
}

let keySeq = 0;
/** A fresh sandbox account per test: objects of one are invisible to another. */
export function newKey(label = 'acct'): string {
  keySeq += 1;
  return `sk_sandbox_${label}_${process.pid}_${keySeq}_${Math.random().toString(36).slice(2, 8)}`;
}
