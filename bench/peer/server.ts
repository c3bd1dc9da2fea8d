/**
 * The hand-written alternative the gateway is measured against: what a team
 * would write with Apollo Server and `@apollo/datasource-rest` in an
 * afternoon. Same schema slice, same upstream, no DataLoader and no cache
 * across requests: `RESTDataSource` deduplicates identical GETs within one
 * request (its default), and that is all. Started by bench/peer.ts in a
 * child process of its own, so its CPU is measured alone.
 *
 *   PEER_PORT=4100 PAYMENTS_API_URL=http://127.0.0.1:4010 node --import tsx bench/peer/server.ts
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { RESTDataSource, type AugmentedRequest } from '@apollo/datasource-rest';

const typeDefs = `#graphql
  type Query {
    transaction(id: ID!): Transaction
    transactions(first: Int = 20): TransactionConnection!
  }
  type TransactionConnection { nodes: [Transaction!]! }
  type Transaction {
    id: ID!
    amount: Float!
    status: String!
    description: String
    customer: Customer
    currency: Currency
  }
  type Customer { id: ID! email: String fullName: String }
  type Currency { id: ID! iso: String! name: String }
`;

interface Transaction {
  id: number;
  amount: number;
  status: string;
  description: string | null;
  customer_id: number | null;
  currency_id: number | null;
}
interface Customer {
  id: number;
  email: string | null;
  full_name: string | null;
}
interface Currency {
  id: number;
  iso: string;
  name: string | null;
}

/** The upstream wraps every answer in `{"v1/<name>": …}`. */
const unwrap = <T>(body: Record<string, unknown>, name: string): T => body[`v1/${name}`] as T;

class PaymentsApi extends RESTDataSource {
  constructor(
    baseURL: string,
    private readonly apiKey: string,
  ) {
    super();
    this.baseURL = baseURL;
  }

  override willSendRequest(_path: string, request: AugmentedRequest): void {
    request.headers.authorization = `Bearer ${this.apiKey}`;
  }

  async transaction(id: string): Promise<Transaction> {
    return unwrap(await this.get(`v1/transactions/${encodeURIComponent(id)}`), 'transaction');
  }

  async transactions(perPage: number): Promise<Transaction[]> {
    return unwrap(await this.get('v1/transactions', { params: { per_page: String(perPage) } }), 'transactions');
  }

  async customer(id: number): Promise<Customer> {
    return unwrap(await this.get(`v1/customers/${id}`), 'customer');
  }

  async currencies(): Promise<Currency[]> {
    return unwrap(await this.get('v1/currencies'), 'currencies');
  }
}

interface Context {
  api: PaymentsApi;
}

const resolvers = {
  Query: {
    transaction: (_: unknown, { id }: { id: string }, { api }: Context) => api.transaction(id),
    transactions: async (_: unknown, { first }: { first: number }, { api }: Context) => ({ nodes: await api.transactions(Math.min(first, 100)) }),
  },
  Transaction: {
    status: (t: Transaction) => t.status.toUpperCase(),
    customer: (t: Transaction, _: unknown, { api }: Context) => (t.customer_id === null ? null : api.customer(t.customer_id)),
    currency: async (t: Transaction, _: unknown, { api }: Context) =>
      t.currency_id === null ? null : ((await api.currencies()).find((c) => c.id === t.currency_id) ?? null),
  },
  Customer: {
    fullName: (c: Customer) => c.full_name,
  },
};

const upstream = process.env.PAYMENTS_API_URL;
if (!upstream) throw new Error('PAYMENTS_API_URL is required');
const server = new ApolloServer<Context>({ typeDefs, resolvers });
const { url } = await startStandaloneServer(server, {
  listen: { port: Number(process.env.PEER_PORT ?? 4100), host: '127.0.0.1' },
  context: async ({ req }) => {
    const key = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    return { api: new PaymentsApi(`${upstream.replace(/\/+$/, '')}/`, key) };
  },
});
console.log(`peer ready at ${url}`);
