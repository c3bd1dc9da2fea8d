/**
 * A proxy in front of the emulator that drops the `Idempotency-Key` header, as a payments API that ignores it
 * would: every write that reaches it acts. What the gateway's own records prevent is all that stands between a
 * retry and a second payment, so the emulator's counts behind it are the creations the payer feels.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeyStrippingUpstream {
  url: string;
  /** Requests that arrived with an `Idempotency-Key` (which was dropped). */
  stripped(): number;
  close(): Promise<void>;
}

export async function startKeyStrippingUpstream(target: string): Promise<KeyStrippingUpstream> {
  let stripped = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (name === 'idempotency-key') stripped += 1;
          else if (typeof value === 'string' && !['host', 'connection', 'content-length', 'accept-encoding'].includes(name)) headers[name] = value;
        }
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
        const text = Buffer.from(await upstream.arrayBuffer());
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(text);
      })().catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stripped: () => stripped,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
