/** One fake upstream and one client bound to a test key per suite; requests cleared between tests. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createUpstreamClient, type PaymentsApi, type UpstreamClient } from '../../src/upstream/index.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

export const TEST_KEY = 'sk_sandbox_Zq8TESTKEYdoNotLeak123';
export const TEST_TIMEOUT_MS = 250;

export interface Harness {
  readonly upstream: FakeUpstream;
  readonly client: UpstreamClient;
  readonly api: PaymentsApi;
}

export function useUpstreamHarness(): Harness {
  let upstream: FakeUpstream | undefined;
  let client: UpstreamClient | undefined;
  let api: PaymentsApi | undefined;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    client = createUpstreamClient({ baseUrl: upstream.url, timeoutMs: TEST_TIMEOUT_MS });
    api = client.forKey(TEST_KEY);
  });
  beforeEach(() => {
    upstream?.requests.splice(0);
  });
  afterAll(async () => {
    client?.close();
    await upstream?.close();
  });

  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('harness used outside a test');
    return value;
  };
  return {
    get upstream() {
      return ready(upstream);
    },
    get client() {
      return ready(client);
    },
    get api() {
      return ready(api);
    },
  };
}
