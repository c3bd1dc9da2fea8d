/**
 * Hive Gateway in a process of its own, for `npm run bench -- router-cache`
 * (its CPU is counted apart from the gateway's). The configuration is the
 * one test/routers runs: the caller's key propagated, and with
 * HIVE_RESPONSE_CACHE=hints the response cache keyed per caller with the
 * gateway's no-store honoured (test/routers/hive-invalidation.ts); `ignore-hints`
 * is Hive's response cache as it comes (it keeps no-store answers: stale,
 * measured only as the ceiling); `off` is no response cache.
 * Env: HIVE_PORT, HIVE_SUPERGRAPH (a file), HIVE_RESPONSE_CACHE.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createHiveCache, createHiveRuntime, PROPAGATE_AUTHORIZATION } from '../test/routers/hive.js';
import { usePaymentsNoStore } from '../test/routers/hive-invalidation.js';

// The bench sets the gateway's LOG_LEVEL=silent for every server; Hive reads the same name and refuses that value.
delete process.env.LOG_LEVEL;
const mode = process.env.HIVE_RESPONSE_CACHE ?? 'off';
if (!['hints', 'ignore-hints', 'off'].includes(mode)) throw new Error(`HIVE_RESPONSE_CACHE must be hints, ignore-hints or off, not ${mode}`);
const port = Number(process.env.HIVE_PORT);
const supergraph = readFileSync(process.env.HIVE_SUPERGRAPH ?? '', 'utf8');

const caching =
  mode === 'off'
    ? {}
    : {
        cache: await createHiveCache(),
        responseCaching: { session: (request: Request) => request.headers.get('authorization'), ttl: 60_000 },
        plugins: () => (mode === 'hints' ? [usePaymentsNoStore()] : []),
      };
const runtime = await createHiveRuntime({ supergraph, propagateHeaders: PROPAGATE_AUTHORIZATION, ...caching });
const server = http.createServer(runtime);
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void Promise.resolve(runtime.dispose()).finally(() => process.exit(0)));
});
