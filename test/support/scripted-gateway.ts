/**
 * A gateway in front of a scripted fake upstream (test/upstream/fake-upstream.ts),
 * for the answers the emulator never gives: spec-shaped bodies, missing routes,
 * malformed items, amounts beyond a double. Both are real servers on 127.0.0.1.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient } from '../../src/upstream/index.js';
import { startFakeUpstream, type FakeUpstream } from '../upstream/fake-upstream.js';

export interface ScriptedGateway {
  upstream: FakeUpstream;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

export async function startScriptedGateway(env: Record<string, string> = {}): Promise<ScriptedGateway> {
  const upstream = await startFakeUpstream();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: upstream.url, LOG_LEVEL: 'silent', ...env });
  const client = createUpstreamClient({ baseUrl: upstream.url, timeoutMs: 2000 });
  const gateway = await startGateway({ config, upstream: client, logger: createLogger('silent') });
  return {
    upstream,
    gateway,
    stop: async () => {
      await gateway.stop();
      client.close();
      await upstream.close();
    },
  };
}
