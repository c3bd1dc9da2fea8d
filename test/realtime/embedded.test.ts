/**
 * `npm start` with no configuration, driven the way a frontend drives it:
 * Apollo Client, queries and mutations over HTTP, subscriptions over the
 * graphql-ws link. The emulator settles the payment and delivers its signed
 * webhook to the gateway, which pushes the approved transaction out.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from './processes.js';

describe('npm start, end to end with Apollo Client', () => {
  let started: GatewayProcess;
  let client: ApolloClient;
  let wsClient: ReturnType<typeof createClient>;

  beforeAll(async () => {
    started = await spawnMain({ LOG_LEVEL: 'warn' }, welcomePrinted);
    const { url, key } = started.found as { url: string; key: string };
    const authorization = `Bearer ${key}`;
    wsClient = createClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization },
      retryAttempts: 0,
    });
    const isSubscription = (op: ApolloLink.Operation) =>
      op.query.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === OperationTypeNode.SUBSCRIPTION);
    client = new ApolloClient({
      cache: new InMemoryCache(),
      link: ApolloLink.split(isSubscription, new GraphQLWsLink(wsClient), new HttpLink({ uri: url, headers: { authorization } })),
    });
  }, 30_000);

  afterAll(async () => {
    client?.stop();
    await wsClient?.dispose();
    await started?.stop();
  });

  it('pushes the approved transaction with its customer to a transactionUpdated subscriber within about a second', async () => {
    const created = await client.mutate<{ createTransaction: { transaction: { id: string; status: string } } }>({
      mutation: gql`
        mutation {
          createTransaction(input: { amount: 2500, description: "Basket", currency: { iso: "XOF" },
            customer: { firstname: "Kofi", lastname: "Annan", email: "kofi.e2e@example.com", phoneNumber: { number: "64000001", country: "BJ" } } }) {
            transaction { id status }
          }
        }
      `,
    });
    const id = created.data!.createTransaction.transaction.id;
    expect(created.data!.createTransaction.transaction.status).toBe('PENDING');

    type Update = { transactionUpdated: { id: string; status: string; approvedAt: string | null; customer: { email: string } | null } };
    const received: { value: Update['transactionUpdated']; at: number }[] = [];
    const approved = new Promise<{ value: Update['transactionUpdated']; at: number }>((resolve, reject) => {
      const sub = client
        .subscribe<Update>({
          query: gql`
            subscription ($id: ID!) { transactionUpdated(id: $id) { id status approvedAt customer { email } } }
          `,
          variables: { id },
        })
        .subscribe({
          next: (result) => {
            if (result.error) return reject(result.error);
            const value = result.data!.transactionUpdated;
            received.push({ value, at: Date.now() });
            if (value.status === 'APPROVED') {
              sub.unsubscribe();
              resolve({ value, at: Date.now() });
            }
          },
          error: reject,
        });
    });
    // The subscription is live once the server acknowledged the connection and took the subscribe message.
    await new Promise((r) => setTimeout(r, 200));

    const sent = await client.mutate<{ sendTransaction: { userErrors: unknown[] } }>({
      mutation: gql`
        mutation ($id: ID!) { sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) { userErrors { code } } }
      `,
      variables: { id },
    });
    expect(sent.data!.sendTransaction.userErrors).toEqual([]);

    const { value, at } = await withTimeout(approved, 8000);
    expect(value).toMatchObject({ id, status: 'APPROVED', customer: { email: 'kofi.e2e@example.com' } });
    // From the upstream approving it to the subscriber holding it.
    expect(at - Date.parse(value.approvedAt!)).toBeLessThan(1000);
  }, 20_000);
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`nothing within ${ms} ms`)), ms))]);
}
