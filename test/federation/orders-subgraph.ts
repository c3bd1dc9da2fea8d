/**
 * A small second subgraph for composition tests: orders that reference the
 * payments subgraph's Transaction and Customer by id, and add a field
 * (`orderCount`) to Customer. Served by Apollo Server's standalone server.
 * Its SDL is a module of its own (orders-sdl.ts): the schema check composes
 * it without loading a server.
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createLogger } from '../../src/logger.js';
import { ORDERS_SDL } from './orders-sdl.js';

export { ORDERS_SDL };

export interface OrderRow {
  id: string;
  reference: string;
  transactionId: string;
  customerId: string;
}

export interface RunningOrders {
  url: string;
  stop(): Promise<void>;
}

export async function startOrdersSubgraph(orders: readonly OrderRow[]): Promise<RunningOrders> {
  const resolvers = {
    Query: { orders: () => orders },
    Order: {
      transaction: (o: OrderRow) => ({ __typename: 'Transaction', id: o.transactionId }),
      customer: (o: OrderRow) => ({ __typename: 'Customer', id: o.customerId }),
    },
    Customer: {
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      orderCount: (c: { id: string }) => orders.filter((o) => o.customerId === c.id).length,
    },
  };
  const server = new ApolloServer({ logger: createLogger('silent'), schema: buildSubgraphSchema({ typeDefs: parse(ORDERS_SDL), resolvers }) });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  return { url, stop: () => server.stop() };
}

