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
 * How long the rest of a refused body is read and thrown away before the connection is cut. At
 * half a second, a client on a loaded machine had sometimes not read the answer yet, and the
 * reset of the cut discarded it.
 */
const DRAIN_MS = 1_000;

/**
 * After a 413: the answer goes out with `connection: close`, the rest of the
 * body is discarded (never buffered) for a moment so the client can read the
 * answer, then the socket is cut: cutting at once would reset the connection
 * under the unread answer.
 */
export function closeAfterAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.once('finish', () => {
    req.resume();
    setTimeout(() => req.destroy(), DRAIN_MS).unref();
  });
}
