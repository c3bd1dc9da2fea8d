/**
 * A stand-in for the payments REST API on 127.0.0.1: it records what the
 * client sent and answers with whatever the test scripted. The client is the
 * thing under test, so the fake only needs to speak HTTP.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when none was sent. */
  body: unknown;
  /** The body as sent, for checks `JSON.parse` would blur (number tokens). */
  rawBody: string;
  /** Which connection carried it: 1 for the first the server accepted, and so on. */
  connection: number;
  /** Settles when that connection closes (the client destroyed it, or the server did). */
  connectionClosed: Promise<void>;
}

export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; text: string; headers?: Record<string, string> }
  /** Answer by hand: the test writes status, headers and body itself (a stream, a compressed body). */
  | { write: (res: http.ServerResponse) => void }
  /** Accept the request and never answer. */
  | 'hang'
  /** Destroy the socket without an answer. */
  | 'reset'
  /** Send the status line, the headers and the start of a JSON body, then nothing more. */
  | 'stall-body'
  /** The same, then destroy the socket mid-body. */
  | 'reset-mid-body';

export interface FakeUpstream {
  url: string;
  requests: ReceivedRequest[];
  /** Every following request gets this reply (or the reply the function returns). */
  replyWith(reply: Reply | ((req: ReceivedRequest) => Reply)): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: ReceivedRequest[] = [];
  let respond: (req: ReceivedRequest) => Reply = () => ({ status: 500, json: { message: 'no reply scripted' } });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const raw = Buffer.concat(chunks).toString('utf8');
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: raw === '' ? undefined : (JSON.parse(raw) as unknown),
        rawBody: raw,
        connection: sockets.get(req.socket)?.id ?? 0,
        connectionClosed: sockets.get(req.socket)?.closed ?? Promise.resolve(),
      };
      requests.push(received);
      const reply = respond(received);
      if (reply === 'hang') return;
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      if (reply === 'stall-body' || reply === 'reset-mid-body') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"v1/transaction": {"id": 1, ');
        if (reply === 'reset-mid-body') setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      if ('write' in reply) {
        reply.write(res);
        return;
      }
      const payload = 'json' in reply ? JSON.stringify(reply.json) : reply.text;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(payload);
    });
  });
  let connections = 0;
  const sockets = new WeakMap<Socket, { id: number; closed: Promise<void> }>();
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.set(socket, { id: connections, closed: new Promise((resolve) => socket.once('close', () => resolve())) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    replyWith(reply) {
      respond = typeof reply === 'function' ? reply : () => reply;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
