/**
 * Reading request bodies and writing JSON answers, for every route of the
 * gateway (GraphQL, webhooks, health): one size rule, one content type.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

/** A body over the limit: known from Content-Length before reading, or found while streaming. */
export class BodyTooLarge {
  constructor(readonly maxBytes: number) {}
}

/** `BodyTooLarge` as soon as it is known (Content-Length, else the crossing chunk), so a huge body is never read to its end. */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer | BodyTooLarge> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(new BodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.pause();
        resolve(new BodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A client that went away mid-request: ordinary on the internet, not an error of ours. */
export function isClientAbort(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** How long a refused connection lingers at most (nginx's `lingering_timeout`). */
const LINGER_MS = 5_000;
/** And how much it may send meanwhile: reading at line rate for seconds is not almost nothing. */
const LINGER_MAX_BYTES = 8 * 1024 * 1024;
/** How often that is checked besides on each body chunk: bytes between requests make no chunk. */
const LINGER_CHECK_MS = 20;

/** Connections answered 413, with what they had sent by then: nothing more they send is served. */
const refused = new WeakMap<Socket, number>();

/** The 413 on every route, in the route's own error shape; the connection then lingers (closeAfterAnswer). */
export function refuseTooLarge(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void {
  refuseUnread(req, res, 413, body);
}

/** A refusal before the body is read: discarded within the 413's bounds, not read to its end by Node. */
export function refuseUnread(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: unknown): void {
  res.setHeader('connection', 'close');
  sendJson(res, status, body);
  closeAfterAnswer(req, res);
}

/**
 * After a 413: only the write side is closed and the rest of the body discarded, so a client still
 * sending does not lose the answer to a reset. See docs/architecture.md, "A refused body's connection".
 */
function closeAfterAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const socket = req.socket;
  // At once, not when the answer is out: a request sent behind the body may be parsed before,
  // and a body Node discards itself (once the answer is out) is never counted against the cap.
  refused.set(socket, socket.bytesRead);
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  const watch = setInterval(() => overLimit(socket) && cut(), LINGER_CHECK_MS);
  socket.once('close', () => {
    clearTimeout(timer);
    clearInterval(watch);
  });
  let bodyEnded = false;
  let answered = false;
  req.once('end', () => {
    bodyEnded = true;
    if (answered) cut();
  });
  req.on('data', () => overLimit(socket) && cut());
  req.resume();
  res.once('finish', () => {
    answered = true;
    if (socket.destroyed) return;
    // Node's own listener (registered by `destroySoon`); removing it leaves the socket half-open.
    socket.removeListener('finish', socket.destroy);
    if (bodyEnded || socket.readableEnded) return cut();
    socket.once('end', cut);
  });
}

/** True when the request came on a connection already answered 413: it is cut, the request never served. */
export function ignoredAfterRefusal(req: http.IncomingMessage): boolean {
  if (!refused.has(req.socket)) return false;
  req.socket.destroy();
  return true;
}

/** Whether this socket was answered 413 (closeAfterAnswer): an upgrade on it is refused too. */
export function wasRefused(socket: Socket): boolean {
  return refused.has(socket);
}

function overLimit(socket: Socket): boolean {
  return socket.bytesRead - (refused.get(socket) ?? 0) > LINGER_MAX_BYTES;
}
