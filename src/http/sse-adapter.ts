/**
 * graphql-sse's node:http adapter with the body read under the gateway's size rule: its own reads
 * any body unbounded (docs/architecture.md, "The SSE adapter").
 */
import type http from 'node:http';
import type { Handler } from 'graphql-sse';
import { BodyTooLarge, readBody, refuseTooLarge } from './body.js';

export type NodeSseHandler = Handler<http.IncomingMessage, { res: http.ServerResponse }>;

export async function serveSse(handler: NodeSseHandler, req: http.IncomingMessage, res: http.ServerResponse, maxBodyBytes: number): Promise<void> {
  let text = '';
  if (req.method === 'POST') {
    const raw = await readBody(req, maxBodyBytes);
    if (raw instanceof BodyTooLarge) {
      return refuseTooLarge(req, res, { errors: [{ message: `Request body too large: at most ${maxBodyBytes} bytes.`, extensions: { code: 'BAD_REQUEST' } }] });
    }
    text = raw.toString('utf8');
  }
  const [body, init] = await handler({
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: {
      get(key) {
        const header = req.headers[key];
        return Array.isArray(header) ? header.join('\n') : header;
      },
    },
    body: () => Promise.resolve(text),
    raw: req,
    context: { res },
  });
  res.writeHead(init.status, init.statusText, init.headers);
  if (!body || typeof body === 'string') return new Promise((resolve) => res.end(body, () => resolve()));
  res.once('close', body.return);
  for await (const value of body) {
    const closed = await new Promise<boolean>((resolve, reject) => {
      // The response's close event may come late.
      if (!res.writable) resolve(true);
      else res.write(value, (error) => (error ? reject(error) : resolve(false)));
    });
    if (closed) break;
  }
  res.off('close', body.return);
  return new Promise((resolve) => res.end(resolve));
}
