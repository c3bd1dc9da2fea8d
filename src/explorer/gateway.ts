/** Which explorer a browser gets at GET /graphql (GRAPHQL_EXPLORER): bundled GraphiQL, Apollo Sandbox (CDN), or none. */
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { explorerHandler, type ExplorerHandler, type ExplorerOptions } from './index.js';

export type { ExplorerOptions };

export type ExplorerMode = 'graphiql' | 'sandbox' | 'off';

export interface GatewayExplorer {
  handle: ExplorerHandler;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Apollo plugins are generic in the context type
  apolloPlugins: ApolloServerPlugin<any>[];
}

const NOTHING: ExplorerHandler = () => false;

export function gatewayExplorer(mode: ExplorerMode, options: ExplorerOptions): GatewayExplorer {
  switch (mode) {
    case 'graphiql':
      return { handle: explorerHandler(options), apolloPlugins: [ApolloServerPluginLandingPageDisabled()] };
    case 'sandbox':
      // Explicit, so GRAPHQL_EXPLORER=sandbox also works with NODE_ENV=production.
      return { handle: NOTHING, apolloPlugins: [ApolloServerPluginLandingPageLocalDefault({ embed: true })] };
    case 'off':
      return { handle: NOTHING, apolloPlugins: [ApolloServerPluginLandingPageDisabled()] };
  }
}
