/**
 * The browser side of the bundled explorer: GraphiQL, configured by the JSON
 * block the gateway writes into the page (no inline script, so the page's
 * Content-Security-Policy can stay at 'self').
 */
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher, type Fetcher } from '@graphiql/toolkit';
import { createClient } from 'graphql-ws';
import { Kind, parse, type DocumentNode } from 'graphql';
import 'graphiql/style.css';
import './page.css';

interface ExplorerConfig {
  endpoint: string;
  wsEndpoint: string;
  defaultHeaders?: Record<string, string>;
  defaultQuery?: string;
  tabs?: { query: string; variables?: string }[];
}

const config = JSON.parse(document.getElementById('explorer-config')?.textContent ?? '{}') as ExplorerConfig;
const httpUrl = new URL(config.endpoint, location.href).href;
const wsUrl = new URL(config.wsEndpoint, location.href);
wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';

/**
 * Subscriptions authenticate once per connection (connectionParams), not per
 * operation: one graphql-ws client per Authorization value typed in the
 * Headers tab, so changing the key there takes effect for the next subscription.
 */
const fetchers = new Map<string, Fetcher>();
function fetcherFor(authorization: string): Fetcher {
  let fetcher = fetchers.get(authorization);
  if (!fetcher) {
    const wsClient = createClient({ url: wsUrl.href, lazy: true, connectionParams: authorization ? { authorization } : {} });
    fetcher = createGraphiQLFetcher({ url: httpUrl, wsClient });
    fetchers.set(authorization, fetcher);
  }
  return fetcher;
}

/**
 * Right after a tab switch GraphiQL can pass the previous tab's operation name
 * and parsed document ("Unknown operation named Payouts"), and the toolkit's
 * fetcher picks graphql-ws for a subscription by that document. Both are taken
 * from the query actually sent: a name it does not define becomes the name of
 * its only operation.
 */
function ownOperation(query: string, name: string | null | undefined): { operationName?: string; documentAST?: DocumentNode } {
  let documentAST: DocumentNode;
  try {
    documentAST = parse(query);
  } catch {
    return name ? { operationName: name } : {}; // the server answers the parse error
  }
  const names = documentAST.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : []));
  const operationName = name && names.includes(name) ? name : names.length === 1 ? names[0] : undefined;
  return { documentAST, ...(operationName ? { operationName } : {}) };
}

const fetcher: Fetcher = (params, options) => {
  const headers = (options?.headers ?? {}) as Record<string, unknown>;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization');
  const { operationName, documentAST } = ownOperation(params.query, params.operationName);
  const own = { ...params, operationName: operationName ?? null };
  return fetcherFor(typeof entry?.[1] === 'string' ? entry[1] : '')(own, { ...options, ...(documentAST ? { documentAST } : {}) });
};

/**
 * GraphiQL writes the editors' text under their own keys at once and the tabs
 * half a second later; on load it looks for a tab holding exactly that text
 * and adds one when none does, so a reload or a second window opened in
 * between got a duplicate or an empty tab. Here the editors' text is read
 * from the stored tabs' active one, which the lookup always finds.
 */
const TABS_KEY = 'graphiql:tabState';
const ACTIVE_TAB_FIELDS: Record<string, 'query' | 'variables' | 'headers'> = {
  'graphiql:query': 'query',
  'graphiql:variables': 'variables',
  'graphiql:headers': 'headers',
};

function activeTabField(field: 'query' | 'variables' | 'headers'): string | null {
  try {
    const state = JSON.parse(localStorage.getItem(TABS_KEY) ?? 'null') as { activeTabIndex?: number; tabs?: Record<string, unknown>[] } | null;
    const value = state?.tabs?.[state.activeTabIndex ?? -1]?.[field];
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

const storage: Storage = {
  getItem: (key) => (key in ACTIVE_TAB_FIELDS ? activeTabField(ACTIVE_TAB_FIELDS[key]!) : localStorage.getItem(key)),
  setItem: (key, value) => {
    if (!(key in ACTIVE_TAB_FIELDS)) localStorage.setItem(key, value);
  },
  removeItem: (key) => localStorage.removeItem(key),
  clear: () => localStorage.clear(),
  key: (index) => localStorage.key(index),
  get length() {
    return localStorage.length;
  },
};

const defaultHeaders = config.defaultHeaders ? JSON.stringify(config.defaultHeaders, null, 2) : undefined;
const tabs = config.tabs?.map((tab) => ({ ...tab, headers: defaultHeaders ?? null }));

createRoot(document.getElementById('graphiql')!).render(
  <GraphiQL
    fetcher={fetcher}
    storage={storage}
    defaultHeaders={defaultHeaders}
    defaultQuery={config.defaultQuery}
    defaultTabs={tabs}
    defaultEditorToolsVisibility={defaultHeaders ? 'headers' : false}
  />,
);
