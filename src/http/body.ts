/**
 * Reading request bodies and writing JSON answers, for every route of the
 * gateway (GraphQL, webhooks, health): one size rule, one content type.
 */
import type http from 'node:http';

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

/**
 * After a 413: the answer goes out with `connection: close`, then the connection lingers. Node
 * ends such an answer by destroying the socket as soon as it is written (`destroySoon`); the body
 * bytes still arriving then make the kernel reset the connection, and a client that is still
 * sending gets EPIPE and loses the answer it had not read yet. So the write side alone is closed
 * (the FIN is out), the rest of the body is discarded (never buffered), and the socket is cut when
 * the client closes its side or after `LINGER_MS`.
 */
export function closeAfterAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const socket = req.socket;
  res.once('finish', () => {
    if (socket.destroyed) return;
    // Node's own listener (registered by `destroySoon`); removing it leaves the socket half-open.
    socket.removeListener('finish', socket.destroy);
    if (socket.readableEnded) return void socket.destroy();
    if (socket.readableEnded) return void socket.destroy();
    socket.once('end', () => socket.destroy());
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
    req.resume();
  });
}
