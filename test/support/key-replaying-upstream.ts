/**
 * A proxy in front of the emulator that keeps idempotency keys the way some
 * payments APIs do: per account, not per path. A request whose
 * `Idempotency-Key` that account already used gets the earlier answer again,
 * whatever its method and path, and never reaches the emulator. The emulator
 * scopes keys per path, so a gateway that reuses one key for two different
 * writes only shows what it does to the payer here.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeyReplayingUpstream {
  url: string;
  /** `METHOD path` of each request answered from an earlier one, in order. */
  replayed: string[];
  close(): Promise<void>;
}

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

export async function startKeyReplayingUpstream(target: string): Promise<KeyReplayingUpstream> {
  const answers = new Map<string, Answer>();
  const replayed: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const key = req.headers['idempotency-key'];
        const scope = typeof key === 'string' ? `${req.headers.authorization ?? ''}\n${key}` : null;
        const earlier = scope === null ? undefined : answers.get(scope);
        let answer: Answer;
        if (earlier) {
          replayed.push(`${req.method} ${req.url}`);
          answer = earlier;
        } else {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(req.headers)) {
            if (typeof value === 'string' && !['host', 'connection', 'content-length', 'accept-encoding'].includes(name)) headers[name] = value;
          }
          const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
          const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
          answer = { status: upstream.status, contentType: upstream.headers.get('content-type') ?? 'application/json', body: Buffer.from(await upstream.arrayBuffer()) };
          if (scope !== null) answers.set(scope, answer);
        }
        res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
      })().catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    replayed,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
