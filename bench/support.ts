/**
 * Small pieces shared by the benches: a keep-alive HTTP client timed on the
 * caller's side, percentiles, a count of new TCP connections per target port,
 * and markdown tables (so the output can be pasted into bench/README.md).
 */
import { execFileSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';

export interface Bench {
  name: string;
  summary: string;
  /** Option lines for `--help`. */
  usage: string[];
  run(argv: string[]): Promise<void>;
}

export interface Timed<T> {
  ms: number;
  status: number;
  body: T;
}

/** One keep-alive agent per client: sockets are reused across iterations, as a real caller's would be. */
export function createJsonClient(maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  return {
    async post<T>(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Timed<T>> {
      const payload = JSON.stringify(body);
      const started = performance.now();
      const { status, text } = await send(agent, url, 'POST', payload, { ...headers, 'content-type': 'application/json' });
      const parsed = JSON.parse(text) as T;
      return { ms: performance.now() - started, status, body: parsed };
    },
    async get(url: string, headers: Record<string, string> = {}): Promise<Timed<string>> {
      const started = performance.now();
      const { status, text } = await send(agent, url, 'GET', undefined, headers);
      return { ms: performance.now() - started, status, body: text };
    },
    close: () => agent.destroy(),
  };
}

function send(
  agent: http.Agent,
  url: string,
  method: string,
  payload: string | undefined,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: payload === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/**
 * Counts TCP connections this process opens, per remote port, through the
 * `net.client.socket` diagnostics channel: a keep-alive miss shows up as a
 * connection opened during a measured loop.
 */
export function watchConnections() {
  const opened = new Map<number, number>();
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: net.Socket };
    socket.once('connect', () => {
      const port = socket.remotePort;
      if (port !== undefined) opened.set(port, (opened.get(port) ?? 0) + 1);
    });
  };
  diagnostics.subscribe('net.client.socket', onSocket);
  return {
    opened: (port: number) => opened.get(port) ?? 0,
    stop: () => diagnostics.unsubscribe('net.client.socket', onSocket),
  };
}

export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `Node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} cores (${model})`;
}

/** Which code was measured: others may be editing src/ in this checkout while a bench runs. */
export function codeLine(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'src').length > 0;
    return `code: ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes in src/' : ''}`;
  } catch {
    return 'code: unknown (not a git checkout)';
  }
}

/** The machine is shared: other processes' load shows up in the latencies, so print it. */
export function loadLine(): string {
  const [one, five] = os.loadavg();
  return `load average ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min) on ${os.cpus().length} cores`;
}

export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(1) : '-');
export const signedMs = (value: number): string => (value >= 0 ? '+' : '') + ms(value);
