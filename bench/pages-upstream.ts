/**
 * The pages bench's fast upstream, in a process of its own: it answers every `GET /v1/transactions`
 * from bytes recorded beforehand (heavy key i's page for a key containing `_heavy<i>_`, else the
 * bystander's 5-row list), so what is measured is the gateway's own work on the page, not an
 * upstream serialising it.
 *
 *   PAGES_PORT=<port> PAGES_HEAVY_FILES=<file>,<file>,... PAGES_SMALL_FILE=<file> tsx bench/pages-upstream.ts
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

const heavy = (process.env.PAGES_HEAVY_FILES ?? '').split(',').map((file) => readFileSync(file));
const small = readFileSync(process.env.PAGES_SMALL_FILE ?? '');
const JSON_TYPE = 'application/json; charset=utf-8';

const server = http.createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': JSON_TYPE }).end('{"status":"ok"}');
    return;
  }
  if (req.method !== 'GET' || path !== '/v1/transactions') {
    res.writeHead(404, { 'content-type': JSON_TYPE }).end('{"message":"not recorded","errors":{}}');
    return;
  }
  const which = /_heavy(\d+)_/.exec(req.headers.authorization ?? '');
  const body = which ? heavy[Number(which[1])] : small;
  if (!body) {
    res.writeHead(404, { 'content-type': JSON_TYPE }).end('{"message":"no page recorded for this key","errors":{}}');
    return;
  }
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length }).end(body);
});
server.listen(Number(process.env.PAGES_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
