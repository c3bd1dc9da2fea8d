/**
 * One fake upstream per suite and clients bound to a test key; requests are
 * cleared between tests. `api` uses the default time-out so a slow machine
 * does not fail ordinary tests; `quickApi` is for tests that wait on a time-out.
 * Suites run once per transport (`describe.each(HTTP_CLIENTS)`), since both
 * must keep the same promises (src/upstream/transport.ts).
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  createUpstreamClient,
  DEFAULT_RESILIENCE,
  type HttpClientName,
  type PaymentsApi,
  type ResilienceOptions,
  type UpstreamClient,
  NO_OPERATION,
} from '../../src/upstream/index.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

export const TEST_KEY = 'sk_sandbox_Zq8TESTKEYdoNotLeak123';
export const QUICK_TIMEOUT_MS = 300;

/**
 * These suites test what one attempt sends and how its answer is decoded, so
 * their clients never retry and never open a breaker; resilience.test.ts
 * tests retries and breakers with clients of its own.
 */
export const ONE_ATTEMPT: ResilienceOptions = {
  retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 },
  breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: Number.MAX_SAFE_INTEGER },
};

export interface Harness {
  /** The transport every client of this harness uses; pass it to clients a test makes itself. */
  readonly httpClient: HttpClientName;
  readonly upstream: FakeUpstream;
  readonly client: UpstreamClient;
  readonly api: PaymentsApi;
  readonly quickApi: PaymentsApi;
}

export function useUpstreamHarness(httpClient: HttpClientName = 'got'): Harness {
  let upstream: FakeUpstream | undefined;
  let client: UpstreamClient | undefined;
  let api: PaymentsApi | undefined;
  let quickClient: UpstreamClient | undefined;
  let quickApi: PaymentsApi | undefined;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    client = createUpstreamClient({ baseUrl: upstream.url, httpClient, resilience: ONE_ATTEMPT });
    api = client.forKey(TEST_KEY, NO_OPERATION);
    quickClient = createUpstreamClient({ baseUrl: upstream.url, httpClient, timeoutMs: QUICK_TIMEOUT_MS, resilience: ONE_ATTEMPT });
    quickApi = quickClient.forKey(TEST_KEY, NO_OPERATION);
  });
  beforeEach(() => {
    upstream?.requests.splice(0);
  });
  afterAll(async () => {
    client?.close();
    quickClient?.close();
    await upstream?.close();
  });

  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('harness used outside a test');
    return value;
  };
  return {
    httpClient,
    get upstream() {
      return ready(upstream);
    },
    get client() {
      return ready(client);
    },
    get api() {
      return ready(api);
    },
    get quickApi() {
      return ready(quickApi);
    },
  };
}
