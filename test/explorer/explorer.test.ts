/**
 * GET /graphql from a browser answers the bundled GraphiQL page; everything
 * it loads comes from the gateway (no CDN, no font host), under a strict
 * Content-Security-Policy. GraphQL clients on the same path are unaffected.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Kind, parse, print, type DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EXAMPLE_OPERATIONS } from '../../src/explorer/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient } from '../../src/upstream/index.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';

/**
 * URLs the bundle contains as plain strings and never loads: XML namespace
 * names (React DOM, SVG), React's error-decoder link in minified error
 * messages, graphql-js's descriptions of Float and String and its hint about
 * duplicate modules, and two links a user may click in the GraphiQL UI
 * (its logo, CodeMirror's key map manual). markdown-it has a bare "http://"
 * prefix for links it auto-detects.
 */
const HARMLESS_HOSTS = new Set(['www.w3.org', 'react.dev', 'en.wikipedia.org', 'commonmark.org', 'yarnpkg.com', 'github.com', 'codemirror.net']);

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

interface Running {
  emulator: RunningEmulator;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

async function start(env: Record<string, string>, explorer?: { defaultHeaders: Record<string, string> }): Promise<Running> {
  const emulator = await startEmulator({ port: 0 });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', ...env });
  const upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent'), ...(explorer ? { explorer } : {}) });
  return {
    emulator,
    gateway,
    async stop() {
      await gateway.stop();
      upstream.close();
      await emulator.stop();
    },
  };
}

/** Every http(s) URL's host in `text`, and whether a bare scheme-only "http://" occurs. */
function hostsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/https?:\/\/([a-zA-Z0-9.-]+)/g)].map((m) => m[1]!));
}

describe('the bundled explorer (GRAPHQL_EXPLORER=graphiql, the default)', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start({}, { defaultHeaders: { Authorization: 'Bearer sk_sandbox_demo' } });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('answers a browser with the GraphiQL page, under a self-only Content-Security-Policy', async () => {
    const res = await fetch(running.gateway.url, { headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    const html = await res.text();
    expect(html).toContain('<div id="graphiql">');
    expect(html).toContain('Bearer sk_sandbox_demo');
    // No inline script: the only <script> without src is the JSON configuration block.
    const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].map((m) => m[0]);
    expect(inline).toEqual(['<script type="application/json" id="explorer-config">']);
  });

  it('loads nothing from another host: the page and every asset it reaches', async () => {
    const origin = new URL(running.gateway.url).origin;
    const html = await (await fetch(running.gateway.url, { headers: HTML })).text();
    expect([...hostsIn(html)]).toEqual([]);

    // Follow the page's links and every chunk the scripts import, as a browser could.
    const pending = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => new URL(m[1]!, origin).href);
    const seen = new Set<string>();
    const foreign = new Map<string, string[]>();
    while (pending.length > 0) {
      const url = pending.pop()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      const body = await res.text();
      for (const m of body.matchAll(/["'`(]\.\/([\w.-]+\.(?:js|css))/g)) pending.push(new URL(m[1]!, url).href);
      const hosts = [...hostsIn(body)].filter((host) => !HARMLESS_HOSTS.has(host));
      if (hosts.length > 0) foreign.set(url, hosts);
      // No stylesheet fetches fonts or images from anywhere: they are inlined.
      if (url.endsWith('.css')) expect([...body.matchAll(/url\((?!data:)[^)]*\)/g)].map((m) => m[0])).toEqual([]);
    }
    expect(Object.fromEntries(foreign)).toEqual({});
    // Every built file was reached from the page, so the scan covered the whole bundle.
    const built = readdirSync(new URL('../../explorer/assets/', import.meta.url)).filter((f) => /\.(js|css)$/.test(f));
    expect([...seen].map((u) => u.split('/').pop()).sort()).toEqual(built.sort());
  });

  it('leaves GraphQL clients alone on the same path: POST, and GET with ?query=', async () => {
    const post = await fetch(running.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    // extensions.cost as on every priced answer: __typename reads nothing.
    const answer = { data: { __typename: 'Query' }, extensions: { cost: { requestedQueryCost: 0, actualQueryCost: 0, maximumAvailable: 1000 } } };
    expect(await post.json()).toEqual(answer);
    const get = await fetch(`${running.gateway.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { ...HTML, 'apollo-require-preflight': 'true' },
    });
    expect(await get.json()).toEqual(answer);
  });

  it('answers 404 for an unknown asset', async () => {
    const res = await fetch(new URL('/graphql/explorer/nope.js', running.gateway.url));
    expect(res.status).toBe(404);
  });
});

describe('GRAPHQL_EXPLORER', () => {
  it('sandbox: Apollo Sandbox, from Apollo\'s CDN', async () => {
    const running = await start({ GRAPHQL_EXPLORER: 'sandbox' });
    try {
      const html = await (await fetch(running.gateway.url, { headers: HTML })).text();
      expect(html).toContain('apollographql.com');
      expect(html).not.toContain('id="graphiql"');
    } finally {
      await running.stop();
    }
  });

  it('off: no page at all', async () => {
    const running = await start({ GRAPHQL_EXPLORER: 'off' });
    try {
      const res = await fetch(running.gateway.url, { headers: HTML });
      expect(res.status).toBe(400);
      expect(await res.text()).not.toMatch(/<html/i);
    } finally {
      await running.stop();
    }
  });
});

describe('the example tabs', () => {
  it('are the README\'s example operations', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const documented = new Set<string>();
    for (const block of readme.matchAll(/```graphql\n([\s\S]*?)```/g)) operationsOf(parse(block[1]!)).forEach((op) => documented.add(op));
    for (const curl of readme.matchAll(/"query":("(?:[^"\\]|\\.)*")/g)) operationsOf(parse(JSON.parse(curl[1]!) as string)).forEach((op) => documented.add(op));
    for (const tab of EXAMPLE_OPERATIONS) {
      for (const op of operationsOf(parse(tab.query))) expect(documented, op).toContain(op);
    }
  });
});

/**
 * Each operation's selections, printed, without its name, and with a variable
 * and a string literal alike (the README's subscription names an id, the tab a $id).
 */
function operationsOf(document: DocumentNode): string[] {
  return document.definitions.flatMap((def) =>
    def.kind === Kind.OPERATION_DEFINITION ? [`${def.operation} ${print(def.selectionSet).replace(/: (\$\w+|"[^"]*")/g, ': _')}`] : [],
  );
}
