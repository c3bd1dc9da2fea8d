/**
 * What the observability tests stand up beside the gateway: a recording
 * proxy in front of the emulator (to see the headers the upstream receives),
 * an OTLP/HTTP receiver (JSON exports, as a collector would take them), a
 * log sink, and a reader of the Prometheus text format.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';

export interface RecordingProxy {
  url: string;
  /** Headers of every request that went through, in order. */
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Forwards every request to `target` unchanged and remembers what came in. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordingProxy['requests'] = [];
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  return listening(server, (port) => ({
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  }));
}

/** A span as the OTLP JSON encoding carries it (the fields the tests read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** Base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: OtlpSpan[];
  /** Service names of the resources that exported. */
  services: Set<string>;
  close(): Promise<void>;
}

/** A collector's OTLP/HTTP traces endpoint, `POST /v1/traces`, for JSON exports. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const services = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
        if (typeof service === 'string') services.add(service);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) spans.push({ ...span, attributes: attributesOf(span.attributes) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return listening(server, (port) => ({
    url: `http://127.0.0.1:${port}`,
    spans,
    services,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }));
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<OtlpSpan, 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = Object.values(value)[0];
  return out;
}

/** A pino destination that keeps the JSON lines. */
export function logSink(): DestinationStream & { lines(): Record<string, unknown>[] } {
  const raw: string[] = [];
  return {
    write: (line: string) => void raw.push(line),
    lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (no escapes in our label values). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unreadable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function listening<T>(server: http.Server, make: (port: number) => T): Promise<T> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return make((server.address() as AddressInfo).port);
}
