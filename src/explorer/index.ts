/** The bundled GraphiQL: every script, style and font comes from this gateway (explorer/assets), so it works offline. */
import { readFileSync, readdirSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export { EXAMPLE_OPERATIONS, exampleTabs } from './examples.js';

export interface ExplorerOptions {
  endpoint: string;
  /** The endpoint itself when omitted. */
  wsEndpoint?: string;
  defaultHeaders?: Record<string, string>;
  defaultQuery?: string;
  /** Opened on a browser's first visit (GraphiQL keeps tabs in localStorage after that). */
  tabs?: { query: string; variables?: string }[];
}

export type ExplorerHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

const ASSETS_DIR = fileURLToPath(new URL('../../explorer/assets/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** Self only; styles may be inline because GraphiQL's components set style attributes. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

interface Manifest {
  [source: string]: { file: string; isEntry?: boolean; css?: string[] };
}

export function explorerHandler(options: ExplorerOptions): ExplorerHandler {
  const endpoint = options.endpoint;
  const assetsPath = `${endpoint.replace(/\/+$/, '')}/explorer/`;
  // Read on the first asset request, not at start: a gateway no browser visits does not hold the bundle (1.8 MB).
  let files: Map<string, { body: Buffer; type: string }> | null = null;
  const assets = () => (files ??= readAssets());
  const html = renderPage(readManifest(), assetsPath, {
    endpoint,
    wsEndpoint: options.wsEndpoint ?? endpoint,
    ...(options.defaultHeaders ? { defaultHeaders: options.defaultHeaders } : {}),
    ...(options.defaultQuery ? { defaultQuery: options.defaultQuery } : {}),
    ...(options.tabs ? { tabs: options.tabs } : {}),
  });

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = new URL(req.url ?? '/', 'http://gateway').pathname;
    if (pathname === endpoint) {
      if (!wantsHtml(req)) return false;
      send(req, res, 200, html, 'text/html; charset=utf-8', 'no-cache');
      return true;
    }
    if (!pathname.startsWith(assetsPath)) return false;
    const file = assets().get(pathname.slice(assetsPath.length));
    if (!file) {
      send(req, res, 404, 'not found', 'text/plain; charset=utf-8', 'no-cache');
      return true;
    }
    // File names carry a content hash: cache for good.
    send(req, res, 200, file.body, file.type, 'public, max-age=31536000, immutable');
    return true;
  };
}

function readAssets(): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(ASSETS_DIR)) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (type) files.set(name, { body: readFileSync(path.join(ASSETS_DIR, name)), type });
  }
  return files;
}

function wantsHtml(req: http.IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('text/html')) return false;
  // A GET with ?query= is a GraphQL request even from a browser tab.
  return !new URL(req.url ?? '/', 'http://gateway').searchParams.has('query');
}

function readManifest(): Manifest {
  return JSON.parse(readFileSync(path.join(ASSETS_DIR, 'manifest.json'), 'utf8')) as Manifest;
}

function renderPage(manifest: Manifest, assetsPath: string, config: Record<string, unknown>): string {
  const entry = Object.values(manifest).find((chunk) => chunk.isEntry);
  if (!entry) throw new Error('explorer assets have no entry chunk: run `npm run build:explorer`');
  const styles = (entry.css ?? []).map((css) => `<link rel="stylesheet" href="${assetsPath}${css}">`).join('');
  // A JSON data block is not executed, so the CSP needs no 'unsafe-inline' script; `<` is escaped so no
  // string in it can close the element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payments GraphQL explorer</title>
<link rel="icon" href="data:,">
${styles}
<script type="module" src="${assetsPath}${entry.file}"></script>
</head>
<body>
<div id="graphiql">Loading the explorer…</div>
<script type="application/json" id="explorer-config">${json}</script>
</body>
</html>
`;
}

function send(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: string | Buffer, type: string, cache: string): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': cache,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
