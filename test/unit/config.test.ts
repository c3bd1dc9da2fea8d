import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTING_NAMES, settingLookalikes } from '../../src/config.js';

describe('loadConfig', () => {
  it('defaults to the embedded emulator in sandbox on port 4000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 4000, paymentsApiUrl: null, paymentsEnv: 'sandbox', logLevel: 'info' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('listens on loopback outside production unless HOST says otherwise, and on every interface in production', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '' }).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ NODE_ENV: 'production', PAYMENTS_API_URL: 'https://api.example.com' }).host).toBe('0.0.0.0');
    expect(loadConfig({ PAYMENTS_ENV: 'live', PAYMENTS_API_URL: 'https://api.example.com', HOST: '10.0.0.5' }).host).toBe('10.0.0.5');
  });

  it('treats an empty PAYMENTS_API_URL as unset', () => {
    expect(loadConfig({ PAYMENTS_API_URL: '' }).paymentsApiUrl).toBeNull();
  });

  it('reads SUBSCRIPTION_CALLBACK_URLS as URL prefixes ending in "/", off when unset, and refuses entries a prefix check could be fooled by', () => {
    expect(loadConfig({}).graphql.subscriptionCallbacks).toEqual({ allowed: [], timeoutMs: 5000, max: 10_000 });
    const config = loadConfig({ SUBSCRIPTION_CALLBACK_URLS: 'http://Router.internal:4000/callback, https://r2.example:443', SUBSCRIPTION_CALLBACK_TIMEOUT_MS: '2000', SUBSCRIPTION_CALLBACK_MAX: '7' });
    expect(config.graphql.subscriptionCallbacks).toEqual({ allowed: ['http://router.internal:4000/callback/', 'https://r2.example/'], timeoutMs: 2000, max: 7 });
    for (const bad of ['ftp://router/callback', 'http://user:pw@router/callback', 'http://router/callback?x=1', 'http://router/callback#x', 'router/callback']) {
      expect(() => loadConfig({ SUBSCRIPTION_CALLBACK_URLS: bad }), bad).toThrow(/SUBSCRIPTION_CALLBACK_URLS/);
    }
    expect(() => loadConfig({ SUBSCRIPTION_CALLBACK_TIMEOUT_MS: '50' })).toThrow(/SUBSCRIPTION_CALLBACK_TIMEOUT_MS/);
    expect(() => loadConfig({ SUBSCRIPTION_CALLBACK_MAX: '0' })).toThrow(/SUBSCRIPTION_CALLBACK_MAX/);
  });

  it('splits WEBHOOK_SECRETS on commas', () => {
    expect(loadConfig({ WEBHOOK_SECRETS: 'whsec_a, whsec_b,,' }).webhookSecrets).toEqual(['whsec_a', 'whsec_b']);
  });

  it('names every problem at once, without echoing values', () => {
    const env = { PORT: 'eighty', PAYMENTS_ENV: 'prod', PAYMENTS_API_URL: 'ftp://secret-host', LOG_LEVEL: 'loud', REDIS_URL: 'http://x' };
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.map((p) => p.split(':')[0]);
    expect(problems.sort()).toEqual(['LOG_LEVEL', 'PAYMENTS_API_URL', 'PAYMENTS_ENV', 'PORT', 'REDIS_URL']);
    expect((error as ConfigError).message).not.toContain('secret-host');
  });

  it('refuses a numeric setting below its floor, above its ceiling, or with decimals where it counts whole things, naming each', () => {
    const env = { UPSTREAM_MAX_ATTEMPTS: '11', MAX_PAGE_SIZE: '0', RATE_LIMIT_PER_MINUTE: '1.5', UPSTREAM_RETRY_BUDGET_RATIO: '1.5', UPSTREAM_CALLER_SHARE: '0' };
    const problems = (() => {
      try {
        loadConfig(env);
        return [];
      } catch (e) {
        return (e as ConfigError).problems.map((p) => p.split(':')[0]);
      }
    })();
    expect(problems.sort()).toEqual(Object.keys(env).sort());
    // Ratios take decimals; bounds are inclusive.
    const config = loadConfig({ UPSTREAM_RETRY_BUDGET_RATIO: '0.5', UPSTREAM_CALLER_SHARE: '1', UPSTREAM_MAX_ATTEMPTS: '10', MAX_PAGE_SIZE: '1', DEFAULT_PAGE_SIZE: '1' });
    expect(config.upstreamResilience).toMatchObject({ retry: { budgetRatio: 0.5, maxAttempts: 10 }, breaker: { callerShare: 1 } });
  });

  it('names a cross-field problem together with the others', () => {
    expect(() => loadConfig({ PORT: 'eighty', PAYMENTS_ENV: 'live', DEFAULT_PAGE_SIZE: '50', MAX_PAGE_SIZE: '10' })).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(/^PORT:/),
          expect.stringMatching(/^PAYMENTS_API_URL: is required when PAYMENTS_ENV=live/),
          expect.stringMatching(/^DEFAULT_PAGE_SIZE: must not exceed MAX_PAGE_SIZE/),
        ],
      }),
    );
  });

  it('requires PAYMENTS_API_URL for the live environment', () => {
    expect(() => loadConfig({ PAYMENTS_ENV: 'live' })).toThrow(/PAYMENTS_API_URL: is required when PAYMENTS_ENV=live/);
  });

  it('serves the bundled GraphiQL explorer unless told otherwise, and none in production', () => {
    expect(loadConfig({}).explorer).toBe('graphiql');
    const production = { NODE_ENV: 'production', PAYMENTS_API_URL: 'https://api.example.com' };
    expect(loadConfig(production).explorer).toBe('off');
    expect(loadConfig({ ...production, GRAPHQL_EXPLORER: 'sandbox' }).explorer).toBe('sandbox');
    expect(loadConfig({ GRAPHQL_EXPLORER: 'off' }).explorer).toBe('off');
    expect(loadConfig({ GRAPHQL_EXPLORER: '' }).explorer).toBe('graphiql');
    expect(() => loadConfig({ GRAPHQL_EXPLORER: 'playground' })).toThrow(/GRAPHQL_EXPLORER/);
  });
});

describe('reconciliation settings', () => {
  it('re-reads after 2 s, backs off to 30 s with 20 % jitter, at most 20 reads per second, by default', () => {
    expect(loadConfig({}).reconcile).toEqual({ initialMs: 2_000, maxMs: 30_000, jitter: 0.2, readsPerSecond: 20 });
  });

  it('takes each setting from the environment, 0 reads per second turning it off', () => {
    const env = { RECONCILE_INITIAL_MS: '100', RECONCILE_MAX_MS: '400', RECONCILE_JITTER: '0', RECONCILE_READS_PER_SECOND: '0' };
    expect(loadConfig(env).reconcile).toEqual({ initialMs: 100, maxMs: 400, jitter: 0, readsPerSecond: 0 });
  });

  it('refuses a first wait longer than the cap, a jitter that could cancel the wait, and negative rates, naming each', () => {
    const env = { RECONCILE_INITIAL_MS: '5000', RECONCILE_MAX_MS: '1000', RECONCILE_JITTER: '1', RECONCILE_READS_PER_SECOND: '-1' };
    expect(() => loadConfig(env)).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(/^RECONCILE_JITTER:/),
          expect.stringMatching(/^RECONCILE_READS_PER_SECOND:/),
          expect.stringMatching(/^RECONCILE_INITIAL_MS: must not exceed RECONCILE_MAX_MS/),
        ],
      }),
    );
  });
});

describe('event log setting', () => {
  it('keeps about 100,000 events by default, and takes a bound from 1,000 to 100,000,000', () => {
    expect(loadConfig({}).eventLogMaxEvents).toBe(100_000);
    expect(loadConfig({ EVENT_LOG_MAX_EVENTS: '1000' }).eventLogMaxEvents).toBe(1000);
    expect(loadConfig({ EVENT_LOG_MAX_EVENTS: '100000000' }).eventLogMaxEvents).toBe(100_000_000);
  });

  it.each(['999', '100000001', '1.5', 'lots'])('refuses EVENT_LOG_MAX_EVENTS=%s, naming it', (value) => {
    expect(() => loadConfig({ EVENT_LOG_MAX_EVENTS: value })).toThrow(expect.objectContaining({ problems: [expect.stringMatching(/^EVENT_LOG_MAX_EVENTS:/)] }));
  });
});

describe('entity cache settings', () => {
  it('is on by default, with a TTL for customers and a longer one for final objects', () => {
    expect(loadConfig({}).entityCache).toEqual({ enabled: true, maxObjects: 50_000, maxBytes: 64 * 1024 * 1024, maxEntryBytes: 256 * 1024, customerTtlMs: 60_000, finalTtlMs: 3_600_000, pendingMaxAgeMs: 5_000, decodedItems: 2_000 });
  });

  it('can be turned off, sized, and a TTL of 0 keeps a kind out', () => {
    const config = loadConfig({
      ENTITY_CACHE: 'false',
      ENTITY_CACHE_MAX_OBJECTS: '10',
      ENTITY_CACHE_MAX_BYTES: '1048576',
      ENTITY_CACHE_MAX_ENTRY_BYTES: '4096',
      CUSTOMER_CACHE_TTL_MS: '0',
      FINAL_OBJECT_CACHE_TTL_MS: '5000',
      PENDING_OBJECT_MAX_AGE_MS: '0',
    });
    expect(config.entityCache).toEqual({ enabled: false, maxObjects: 10, maxBytes: 1_048_576, maxEntryBytes: 4096, customerTtlMs: 0, finalTtlMs: 5000, pendingMaxAgeMs: 0, decodedItems: 0 });
  });

  it('names each bad value', () => {
    expect(() => loadConfig({ ENTITY_CACHE: 'maybe', ENTITY_CACHE_MAX_OBJECTS: '0', CUSTOMER_CACHE_TTL_MS: '-1', PENDING_OBJECT_MAX_AGE_MS: '60001' })).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(/^ENTITY_CACHE:/),
          expect.stringMatching(/^ENTITY_CACHE_MAX_OBJECTS:/),
          expect.stringMatching(/^CUSTOMER_CACHE_TTL_MS:/),
          expect.stringMatching(/^PENDING_OBJECT_MAX_AGE_MS:/),
        ],
      }),
    );
  });
});

describe('trusted proxies', () => {
  it('trusts none by default, takes a list, and names a malformed entry', () => {
    expect(loadConfig({}).limits.trustedProxies).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: 'loopback, 10.0.0.0/8' }).limits.trustedProxies).toEqual(['loopback', '10.0.0.0/8']);
    expect(() => loadConfig({ TRUSTED_PROXIES: 'the-proxy' })).toThrow(/TRUSTED_PROXIES/);
  });
});

describe('production mode', () => {
  it('NODE_ENV=production without PAYMENTS_API_URL refuses to start, naming the variable', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PAYMENTS_API_URL: is required when NODE_ENV=production/);
  });

  it('an explicit EMBEDDED_EMULATOR=true runs the sandbox emulator in production on purpose', () => {
    expect(loadConfig({ NODE_ENV: 'production', EMBEDDED_EMULATOR: 'true' })).toMatchObject({ production: true, embeddedEmulator: true });
  });

  it('turns introspection and suggestions off in production, on elsewhere, and both can be set', () => {
    const url = 'https://api.example.com';
    expect(loadConfig({ NODE_ENV: 'production', PAYMENTS_API_URL: url }).graphql).toMatchObject({ introspection: false, suggestions: false });
    expect(loadConfig({ PAYMENTS_ENV: 'live', PAYMENTS_API_URL: url }).graphql).toMatchObject({ introspection: false, suggestions: false });
    expect(loadConfig({}).graphql).toMatchObject({ introspection: true, suggestions: true });
    expect(loadConfig({ NODE_ENV: 'production', PAYMENTS_API_URL: url, GRAPHQL_INTROSPECTION: 'true' }).graphql.introspection).toBe(true);
  });
});

describe('observability settings', () => {
  it('serves metrics on the main port by default, on METRICS_PORT alone when set, or not at all', () => {
    expect(loadConfig({}).observability.metrics).toEqual({ enabled: true, port: null, host: '127.0.0.1' });
    expect(loadConfig({ HOST: '0.0.0.0' }).observability.metrics.host).toBe('0.0.0.0');
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).observability.metrics).toEqual({ enabled: true, port: 9464, host: '10.0.0.5' });
    expect(loadConfig({ METRICS_ENABLED: 'false' }).observability.metrics.enabled).toBe(false);
    expect(() => loadConfig({ METRICS_PORT: 'ninety' })).toThrow(/METRICS_PORT/);
  });

  it('traces only when the OTEL_* variables ask for it, with the specification’s endpoint rules', () => {
    expect(loadConfig({}).observability.tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).observability.tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'payments-graphql-gateway',
    });
    // The signal-specific URL is used as it is, and wins.
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom', OTEL_SERVICE_NAME: 'gw-eu' }).observability.tracing,
    ).toEqual({ url: 'http://b:4318/custom', serviceName: 'gw-eu' });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).observability.tracing?.url).toBe('http://localhost:4318/v1/traces');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).observability.tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' }).observability.tracing).toBeNull();
  });

  it('refuses an OTLP protocol other than http/json, and an exporter it does not have', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: expected "http\/json" \(OTLP over HTTP, JSON encoded: the only protocol supported\), got "grpc"/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).observability.tracing).toBeNull();
  });

  it('reports usage to Apollo itself only when asked, and then needs the key and the graph', () => {
    expect(loadConfig({}).observability.apollo).toBeNull();
    expect(loadConfig({ APOLLO_KEY: 'service:g:abc', APOLLO_GRAPH_REF: 'payments@prod' }).observability.apollo).toEqual({
      key: 'service:g:abc',
      graphRef: 'payments@prod',
      usageReporting: false,
    });
    expect(loadConfig({ APOLLO_KEY: 'service:g:abc', APOLLO_GRAPH_REF: 'payments@prod', APOLLO_USAGE_REPORTING: 'true' }).observability.apollo?.usageReporting).toBe(true);
    let error: unknown;
    try {
      loadConfig({ APOLLO_KEY: 'service:g:secret-value', APOLLO_USAGE_REPORTING: 'true' });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual(['APOLLO_USAGE_REPORTING: needs APOLLO_KEY and APOLLO_GRAPH_REF']);
    expect((error as ConfigError).message).not.toContain('secret-value');
  });
});

describe('upstream HTTP client', () => {
  it('is got unless UPSTREAM_HTTP_CLIENT says node; an empty value counts as unset', () => {
    expect(loadConfig({}).upstreamHttpClient).toBe('got');
    expect(loadConfig({ UPSTREAM_HTTP_CLIENT: '' }).upstreamHttpClient).toBe('got');
    expect(loadConfig({ UPSTREAM_HTTP_CLIENT: 'got' }).upstreamHttpClient).toBe('got');
    expect(loadConfig({ UPSTREAM_HTTP_CLIENT: 'node' }).upstreamHttpClient).toBe('node');
  });

  it('caps an answer at 128 MiB unless UPSTREAM_MAX_RESPONSE_BYTES says otherwise, within 1 KiB to 256 MiB', () => {
    expect(loadConfig({}).upstreamMaxResponseBytes).toBe(128 * 1024 * 1024);
    expect(loadConfig({ UPSTREAM_MAX_RESPONSE_BYTES: '1048576' }).upstreamMaxResponseBytes).toBe(1_048_576);
    for (const bad of ['1023', String(256 * 1024 * 1024 + 1), 'lots']) {
      expect(() => loadConfig({ UPSTREAM_MAX_RESPONSE_BYTES: bad })).toThrow(expect.objectContaining({ problems: [expect.stringMatching(/^UPSTREAM_MAX_RESPONSE_BYTES:/)] }));
    }
  });

  it('bounds upstream answer bytes in flight at 256 MiB in total and 128 MiB per key, each at least the per-answer cap', () => {
    expect(loadConfig({}).upstreamBytesInFlight).toEqual({ totalBytes: 256 * 1024 * 1024, perKeyBytes: 128 * 1024 * 1024 });
    expect(loadConfig({ UPSTREAM_MAX_RESPONSE_BYTES: '1048576', UPSTREAM_BYTES_IN_FLIGHT_PER_KEY: '2097152', UPSTREAM_BYTES_IN_FLIGHT: '4194304' }).upstreamBytesInFlight).toEqual({ totalBytes: 4_194_304, perKeyBytes: 2_097_152 });
    const named = { problems: [expect.stringMatching(/^UPSTREAM_BYTES_IN_FLIGHT_PER_KEY: must be at least UPSTREAM_MAX_RESPONSE_BYTES/)] };
    // A key's share below the per-answer cap would refuse an answer the cap allows, every time.
    expect(() => loadConfig({ UPSTREAM_BYTES_IN_FLIGHT_PER_KEY: String(64 * 1024 * 1024) })).toThrow(expect.objectContaining(named));
    expect(() => loadConfig({ UPSTREAM_BYTES_IN_FLIGHT: String(64 * 1024 * 1024) })).toThrow(expect.objectContaining(named));
  });

  it('refuses any other value, naming the variable', () => {
    expect(() => loadConfig({ UPSTREAM_HTTP_CLIENT: 'undici' })).toThrow(
      expect.objectContaining({ problems: [expect.stringMatching(/^UPSTREAM_HTTP_CLIENT: .*"got".*"node"/)] }),
    );
  });
});

/** The problems loadConfig names for `env`, in order; none when it loads. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    return (e as ConfigError).problems;
  }
}

describe('messages written for a person', () => {
  it('names the variable, what was given and what is expected, for each kind of setting', () => {
    expect(problemsOf({ PORT: 'abc' })).toEqual(['PORT: expected a port number 0-65535, got "abc"']);
    expect(problemsOf({ METRICS_PORT: '70000' })).toEqual(['METRICS_PORT: expected a port number 0-65535, got "70000"']);
    expect(problemsOf({ MAX_PAGE_SIZE: '0' })).toEqual(['MAX_PAGE_SIZE: expected a whole number from 1 to 100, got "0"']);
    expect(problemsOf({ RATE_LIMIT_PER_MINUTE: '1.5' })).toEqual(['RATE_LIMIT_PER_MINUTE: expected a whole number 0 or more, got "1.5"']);
    expect(problemsOf({ UPSTREAM_RETRY_BUDGET_RATIO: 'half' })).toEqual(['UPSTREAM_RETRY_BUDGET_RATIO: expected a number from 0 to 1, got "half"']);
    expect(problemsOf({ UPSTREAM_TIMEOUT_MS: '0' })).toEqual(['UPSTREAM_TIMEOUT_MS: expected a whole number of milliseconds, 1 or more, got "0"']);
    expect(problemsOf({ ENTITY_CACHE: 'maybe' })).toEqual(['ENTITY_CACHE: expected true, false, 1 or 0, got "maybe"']);
    expect(problemsOf({ PAYMENTS_ENV: 'prod' })).toEqual(['PAYMENTS_ENV: expected "sandbox" or "live", got "prod"']);
    expect(problemsOf({ TRUSTED_PROXIES: '10.0.0.0/8, the-proxy' })).toEqual([
      'TRUSTED_PROXIES: expected comma-separated IP addresses, CIDR ranges or loopback/linklocal/uniquelocal, got "the-proxy" (entry 2 of 2)',
    ]);
    expect(problemsOf({ APOLLO_GRAPH_REF: 'a b' })).toEqual(['APOLLO_GRAPH_REF: expected <graph id>@<variant>, got "a b"']);
    expect(problemsOf({ DEFAULT_PAGE_SIZE: '50', MAX_PAGE_SIZE: '10' })).toEqual(['DEFAULT_PAGE_SIZE: must not exceed MAX_PAGE_SIZE, got DEFAULT_PAGE_SIZE=50, MAX_PAGE_SIZE=10']);
    // No validator's own wording is left.
    const all = problemsOf({ PORT: 'x', MAX_QUERY_DEPTH: '-1', GRAPHQL_JIT: 'yes', LOG_LEVEL: 'loud', REDIS_URL: 'x', OPS_TOKEN: 'x', SHUTDOWN_GRACE_MS: '1.5' });
    expect(all).toHaveLength(7);
    for (const problem of all) expect(problem).toMatch(/^[A-Z_]+: expected .+, got .+/);
    expect(all.join('\n')).not.toMatch(/Invalid input|received|Too small|Too big/);
  });

  it('never shows a secret, a URL (which may hold a password) or a value that looks like a key', () => {
    expect(problemsOf({ OPS_TOKEN: 'opsshort', ROUTER_SHARED_SECRET: 'rtrshort', ROUTER_INVALIDATION_URL: 'https://r', ROUTER_INVALIDATION_KEY: 'keyshort' })).toEqual([
      'ROUTER_SHARED_SECRET: expected 16 characters or more, got 8',
      'ROUTER_INVALIDATION_KEY: expected 16 characters or more, got 8',
      'OPS_TOKEN: expected 16 characters or more, got 8',
    ]);
    expect(problemsOf({ REDIS_URL: 'http://user:hunter2@cache:6379' })).toEqual(['REDIS_URL: expected a redis:// or rediss:// URL, got an http:// URL']);
    expect(problemsOf({ PAYMENTS_API_URL: 'not a url sk_live_secret' })).toEqual(['PAYMENTS_API_URL: expected an http:// or https:// URL, got a value that is not a URL']);
    expect(problemsOf({ SUBSCRIPTION_CALLBACK_URLS: 'http://router/cb, http://user:hunter2@router/cb' })).toEqual([
      'SUBSCRIPTION_CALLBACK_URLS: expected comma-separated http(s) URLs without credentials, query or fragment, got one that is not (entry 2 of 2)',
    ]);
    // A key pasted into the wrong variable, or a long value, is described by its length.
    expect(problemsOf({ PORT: 'sk_live_0123', LOG_LEVEL: 'x'.repeat(41) })).toEqual([
      'PORT: expected a port number 0-65535, got a value of 12 characters (not shown)',
      `LOG_LEVEL: expected "fatal", "error", "warn", "info", "debug", "trace" or "silent", got a value of 41 characters (not shown)`,
    ]);
  });
});

describe('webhook secrets in live', () => {
  const live = { PAYMENTS_ENV: 'live', PAYMENTS_API_URL: 'https://api.example.com' };

  it('refuses one shorter than 16 characters, naming its place and length, never its value', () => {
    const problems = problemsOf({ ...live, WEBHOOK_SECRETS: 'whsec_0123456789abcdef, abc' });
    expect(problems).toEqual(['WEBHOOK_SECRETS: expected every secret to be 16 characters or more when PAYMENTS_ENV=live, got one of 3 (secret 2 of 2)']);
    expect(problems.join('')).not.toContain('abc');
    expect(problemsOf({ ...live, WEBHOOK_SECRETS: '0123456789abcde' })).toHaveLength(1);
  });

  it('takes 16 characters and more in live, and short ones in sandbox, where tests and demos use them', () => {
    expect(loadConfig({ ...live, WEBHOOK_SECRETS: '0123456789abcdef' }).webhookSecrets).toEqual(['0123456789abcdef']);
    expect(loadConfig({ ...live }).webhookSecrets).toEqual([]);
    expect(loadConfig({ WEBHOOK_SECRETS: 'abc' }).webhookSecrets).toEqual(['abc']);
  });
});

describe('variables that look like a setting', () => {
  it('names a near miss with "did you mean", case, a swap and a unit left off included', () => {
    expect(settingLookalikes({ WEBHOOK_SECRET: 'x', PAYMENTS_EVN: 'live', port: '5', SHUTDOWN_GRACE: '1', REDIS_URI: 'redis://r' })).toEqual([
      'WEBHOOK_SECRET is not a setting: did you mean WEBHOOK_SECRETS? (it is ignored)',
      'PAYMENTS_EVN is not a setting: did you mean PAYMENTS_ENV? (it is ignored)',
      'port is not a setting: did you mean PORT? (it is ignored)',
      'SHUTDOWN_GRACE is not a setting: did you mean SHUTDOWN_GRACE_MS? (it is ignored)',
      'REDIS_URI is not a setting: did you mean REDIS_URL? (it is ignored)',
    ]);
  });

  it("leaves the rest of the environment alone: a shell's, Kubernetes' service variables, the OpenTelemetry SDK's, and every setting", () => {
    const neighbours = ['HOME', 'PATH', 'PWD', 'TERM', 'HOSTNAME', 'NODE_PATH', 'NODE_OPTIONS', 'LANG', 'USER', 'SHELL', 'CI', 'PAYMENTS_API_PORT', 'PAYMENTS_API_SERVICE_HOST', 'REDIS_PORT', 'KUBERNETES_PORT', 'npm_config_cache', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_EXPORTER_OTLP_HEADERS'];
    expect(settingLookalikes(Object.fromEntries([...neighbours, ...SETTING_NAMES].map((n) => [n, 'x'])))).toEqual([]);
  });

  it("knows the emulator's variables when given them, and names a near miss of one", () => {
    expect(settingLookalikes({ EMULATOR_SETTLE_MS: '5' }, ['EMULATOR_SETTLE_MS'])).toEqual([]);
    expect(settingLookalikes({ EMULATOR_SETLE_MS: '5' }, ['EMULATOR_SETTLE_MS'])).toEqual(['EMULATOR_SETLE_MS is not a setting: did you mean EMULATOR_SETTLE_MS? (it is ignored)']);
  });
});
