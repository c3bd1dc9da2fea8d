/**
 * Test helpers for the emulator suites: a tiny HTTP caller, a webhook receiver
 * that keeps raw bodies, a signature verifier written from the published
 * scheme (not the emulator's own signer), and polling.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator/index.js';

// Response bodies are arbitrary JSON; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface HttpResult {
  status: number;
  body: Json;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  /** `null` sends no Authorization header; a string replaces the whole header value. */
  auth?: string | null;
  form?: boolean;
  headers?: Record<string, string>;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key = 'sk_sandbox_tests',
  ) {}

  as(key: string): Api {
    return new Api(this.baseUrl, key);
  }

  async call(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth !== null) headers.authorization = opts.auth ?? `Bearer ${this.key}`;
    let payload: string | undefined;
    if (body !== undefined) {
      if (opts.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        payload = typeof body === 'string' ? body : new URLSearchParams(body as Record<string, string>).toString();
      } else {
        headers['content-type'] = 'application/json';
        payload = typeof body === 'string' ? body : JSON.stringify(body);
      }
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.text();
    let parsed: Json = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  get(path: string, opts?: CallOptions) {
    return this.call('GET', path, undefined, opts);
  }
  post(path: string, body?: unknown, opts?: CallOptions) {
    return this.call('POST', path, body ?? {}, opts);
  }
  put(path: string, body?: unknown, opts?: CallOptions) {
    return this.call('PUT', path, body ?? {}, opts);
  }
  del(path: string, opts?: CallOptions) {
    return this.call('DELETE', path, undefined, opts);
  }
}

/** One object out of a single-object response, in either style (and an array of one). */
export function one(body: Json, kind: string): Json {
  if (body && typeof body === 'object' && !Array.isArray(body) && `v1/${kind}` in body) return body[`v1/${kind}`];
  if (Array.isArray(body)) return body[0];
  return body;
}

/** The items of a list response, in either style. */
export function many(body: Json, plural: string): Json[] {
  if (Array.isArray(body)) return body;
  return body[`v1/${plural}`];
}

export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const FAST: Partial<EmulatorOptions> = { settleMs: 40, webhookRetryBaseMs: 20, webhookMaxAttempts: 3, webhookTimeoutMs: 1000 };

export async function emulator(options: Partial<EmulatorOptions> = {}): Promise<{ emu: RunningEmulator; api: Api }> {
  const emu = await startEmulator({ ...FAST, ...options });
  return { emu, api: new Api(emu.url) };
}

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  raw: string;
  json: Json;
}

export interface Receiver {
  url: string;
  received: Delivery[];
  close(): Promise<void>;
}

/** A webhook endpoint; `status(n)` decides the answer to the n-th delivery (1-based). */
export async function startReceiver(status: (n: number) => number = () => 200): Promise<Receiver> {
  const received: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, raw, json: JSON.parse(raw) });
      res.writeHead(status(received.length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The receiver's check, from the documented scheme: `t=<unix>,s=<hex>`, HMAC-SHA256
 * of "<t>.<raw body>" with the secret, any `s=` may match, 300 s tolerance.
 */
export function verifySignature(header: string | undefined, raw: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('=') as [string, string]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isFinite(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${raw}`).digest();
  return parts
    .filter(([k]) => k === 's')
    .some(([, hex]) => {
      const given = Buffer.from(hex, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
