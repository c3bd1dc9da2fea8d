import DataLoader from 'dataloader';
import { buildSchema, execute, parse, type GraphQLFieldResolver } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import type { Loaders } from '../../src/loaders/index.js';
import { connectionField, lookingAhead } from '../../src/resolvers/connections.js';
import { paymentRelations } from '../../src/resolvers/payment-fields.js';
import { currencyRelation, customerRelation } from '../../src/resolvers/support.js';
import type { TransactionModel } from '../../src/upstream/models.js';

const schema = buildSchema(`
  type Query { payments(first: Int): PaymentConnection }
  type PaymentConnection { nodes: [Payment] edges: [PaymentEdge] }
  type PaymentEdge { node: Payment }
  type Payment { id: ID! customer: Customer currency: Currency }
  type Customer { id: ID! email: String }
  type Currency { id: ID! iso: String }
`);

const payments = [
  { id: 1, customer_id: 10, currency_id: 1 },
  { id: 2, customer_id: 11, currency_id: 1 },
  { id: 3, customer_id: 10, currency_id: null },
  { id: 4, customer_id: 12, currency_id: 1 },
] as unknown as TransactionModel[];

/** Runs `query` with real DataLoaders; records each batch and whether each relation answered at once or with a promise. */
async function run(query: string) {
  const batches: string[] = [];
  const answers: ('value' | 'promise' | 'throw')[] = [];
  const loader = <V>(name: string, value: (id: number) => V) =>
    new DataLoader<number, V>(async (ids) => {
      batches.push(`${name} ${ids.join(',')}`);
      return ids.map((id) => (id === 12 ? new Error('customer 12 is unreadable') : value(id)));
    });
  const loaders = {
    customer: loader('customer', (id) => ({ id, email: `c${id}@example.com` })),
    currencyById: loader('currency', (id) => ({ id, iso: 'XOF' })),
    transaction: { prime: () => undefined },
  } as unknown as Loaders;
  const context = { api: {}, loaders, pagination: { defaultFirst: 20, maxFirst: 100 } } as unknown as Context;
  const watched = (relation: typeof customerRelation, key: 'customer_id' | 'currency_id'): GraphQLFieldResolver<TransactionModel, Context> => (payment, _args, ctx, info) => {
    try {
      const answer = relation(payment[key] as number | null, info, ctx.loaders);
      answers.push(answer instanceof Promise ? 'promise' : 'value');
      return answer;
    } catch (error) {
      answers.push('throw');
      throw error;
    }
  };
  const field = lookingAhead(connectionField({ read: async () => ({ items: payments, meta: null }), loader: (l) => l.transaction }), paymentRelations());
  const result = await execute({
    schema,
    document: parse(query),
    contextValue: context,
    fieldResolver: (source, args, ctx, info) => {
      if (info.parentType.name === 'Query') return field(source, args, ctx as Context, info);
      if (info.parentType.name === 'Payment' && info.fieldName === 'customer') return watched(customerRelation, 'customer_id')(source as TransactionModel, args, ctx as Context, info);
      if (info.parentType.name === 'Payment' && info.fieldName === 'currency') return watched(currencyRelation, 'currency_id')(source as TransactionModel, args, ctx as Context, info);
      return (source as Record<string, unknown>)[info.fieldName];
    },
  });
  return { result, batches, answers };
}

describe('look-ahead of a connection\'s relations', () => {
  it('reads the selected relations in one batch each once the nodes are known, and each node answers them at once', async () => {
    const { result, batches, answers } = await run('{ payments { nodes { id customer { email } currency { iso } } } }');

    expect(batches).toEqual(['customer 10,11,12', 'currency 1']);
    // Node 3 has no currency: null at once, as before; the others answer from what the look-ahead read.
    expect(answers).toEqual(['value', 'value', 'value', 'value', 'value', 'value', 'throw', 'value']);
    const nodes = (result.data as { payments: { nodes: { customer: { email: string } | null; currency: unknown }[] } }).payments.nodes;
    expect(nodes.map((n) => n.customer?.email ?? null)).toEqual(['c10@example.com', 'c11@example.com', 'c10@example.com', null]);
    // The failed read is the same error, at the same path, as without the look-ahead.
    expect(result.errors?.map((e) => [e.message, e.path])).toEqual([['customer 12 is unreadable', ['payments', 'nodes', 3, 'customer']]]);
  });

  it('reads nothing ahead for a relation of which only the id is selected, nor one that is not selected', async () => {
    const { result, batches, answers } = await run('{ payments { nodes { id customer { id } } } }');

    expect(result.errors).toBeUndefined();
    expect(batches).toEqual([]);
    expect(answers).toEqual(['value', 'value', 'value', 'value']);
  });

  it('reads ahead through edges { node }, fragments and aliases, and leaves out what @skip drops', async () => {
    const { batches, answers } = await run(`
      query { payments { edges { node { ...P } } } }
      fragment P on Payment { c: customer { id } d: customer { email } currency @skip(if: true) { iso } }
    `);

    expect(batches).toEqual(['customer 10,11,12']);
    expect(answers.filter((a) => a === 'promise')).toEqual([]);
  });
});
