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

/**
 * The whole body, or `BodyTooLarge` as soon as it is known to pass
 * `maxBytes`: from Content-Length without reading a byte, else at the chunk
 * that crosses the limit. Reading stops there; the caller answers 413 and
 * closes the connection, so a 100 MB body is never read to its end.
 */
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

/**
 * How long a refused connection lingers at most: the rest of the body is read and thrown away
 * until the client closes its side, or until this passes (nginx waits as long for more of a
 * refused body: `lingering_timeout`).
 */
const LINGER_MS = 5_000;
/** And how much it may send meanwhile: reading at line rate for seconds is not almost nothing. */
const LINGER_MAX_BYTES = 8 * 1024 * 1024;
/** How often that is checked besides on each body chunk: bytes between requests make no chunk. */
const LINGER_CHECK_MS = 20;

/** Connections answered 413, with what they had sent by then: nothing more they send is served. */
const refused = new WeakMap<Socket, number>();

/**
 * The 413 for a body over the limit (`BodyTooLarge`), on every route: `body` is the route's own
 * error shape. The answer says `connection: close`, and the connection lingers (closeAfterAnswer).
 */
export function refuseTooLarge(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void {
  refuseUnread(req, res, 413, body);
}

/**
 * Any refusal answered before the body is read (a webhook with no valid signature header): as a
 * 413, the body is discarded within the same bounds and the connection closed, rather than read
 * to its end by Node's own discarding, however long it is.
 */
export function refuseUnread(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: unknown): void {
  res.setHeader('connection', 'close');
  sendJson(res, status, body);
  closeAfterAnswer(req, res);
}

/**
 * After a 413: the answer goes out with `connection: close`, then the connection lingers. Node
 * ends such an answer by destroying the socket as soon as it is written (`destroySoon`); the body
 * bytes still arriving then make the kernel reset the connection, and a client that is still
 * sending gets EPIPE and loses the answer it had not read yet. So the write side alone is closed
 * (the FIN is out) and the rest of the body is discarded (never buffered). The socket is cut when
 * the client closes its side, when the refused body has ended and the answer is out (nothing
 * legitimate follows it), after `LINGER_MS`, or past `LINGER_MAX_BYTES`, whichever comes first.
 * A request sent behind the refused body is never served: after `connection: close` none may be
 * (server.ts routes a request only once its answer has the socket, which Node never gives one
 * queued behind such an answer; `ignoredAfterRefusal` cuts the connection when one arrives).
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
    // Were it ever named otherwise, the socket would be cut at once, as before: no leak.
    socket.removeListener('finish', socket.destroy);
    if (bodyEnded || socket.readableEnded) return cut();
    socket.once('end', cut);
  });
}

/** A request on a connection already answered 413: the connection is cut, the request never served. True when it was one. */
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
