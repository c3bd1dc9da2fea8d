/**
 * graphql-jit against graphql-js: the same operations, sent to two gateways over one
 * emulator and one account, one running queries compiled by graphql-jit (the default),
 * the other with GRAPHQL_JIT=false. Every answer must be the same bytes, with the same
 * status and Cache-Control. The operations: a set written for what a compiler may get
 * wrong (custom scalars, the union, fragments, @skip/@include, aliases, errors with
 * partial data, variables refused), the explorer's examples, and the query operations the
 * other test files write as one whole string literal, with variables from one bag (plus
 * the simplest value of any required built-in scalar it lacks). Left out, counted and
 * printed: documents built with `${...}`, those reading request logs, and operations
 * requiring a variable of an input type. The example app has no query (two mutations
 * and a subscription).
 * No trusted-documents manifest is kept in the repository (the suite writes its own).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { isObjectType, Kind, parse, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { exampleTabs } from '../../src/explorer/examples.js';
import { factories, type RestObject } from '../support/factories.js';
import { emulatorAdmin, newKey, startGatewayOver, type GatewayOnly } from '../support/harness.js';
import { jit } from '../support/jit-spy.js';

// Counts what graphql-jit compiled and ran, so the comparison cannot pass by both gateways running graphql-js.
vi.mock('graphql-jit', (real) => import('../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));

/** The corpus's size, and how many of it graphql-jit runs: a little under today's (150 operations, 108 compiled), to catch a corpus cut short. */
const MIN_CORPUS = 145;
const MIN_COMPILED_RUNS = 100;

interface Answer {
  status: number;
  cacheControl: string | null;
  text: string;
}

async function post(gateway: GatewayOnly, key: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(gateway.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  // Each answer's request id is its own: the one part of the text that must differ.
  const text = (await res.text()).replace(/"requestId":"[0-9a-f-]{36}"/g, '"requestId":"…"');
  return { status: res.status, cacheControl: res.headers.get('cache-control'), text };
}

/** What the other test files send: the documents, and how many were left out, by reason. */
interface SuiteDocuments {
  documents: string[];
  /** Template literals with `${...}` in them: their text is only known when the test runs. */
  templated: number;
  /** Documents reading request logs, which grow with every upstream call (two gateways in turn read two lists). */
  readingLogs: number;
}

/** Every GraphQL document written as one string literal (quotes, or a template without `${...}`) in the other test files. */
function documentsOfTheSuite(): SuiteDocuments {
  const root = new URL('..', import.meta.url).pathname;
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      // Only the project's own tests: test/routers installs third-party packages beside them.
      if (name === 'node_modules') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts') && !name.startsWith('jit-differential')) files.push(path);
    }
  };
  walk(root);
  const looksLikeGraphql = (text: string) => /^\s*(?:query\b|fragment\b|\{\s*[a-z_])/.test(text);
  const documents = new Set<string>();
  const left = { templated: new Set<string>(), readingLogs: new Set<string>() };
  for (const file of files) {
    // TypeScript's own parser finds each literal whole, whatever quotes are inside it.
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      if (ts.isTemplateExpression(node)) {
        if (looksLikeGraphql(node.head.text)) left.templated.add(node.getText(source));
      } else if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && looksLikeGraphql(node.text)) {
        try {
          parse(node.text);
          if (/\blogs?\s*[({]/.test(node.text)) left.readingLogs.add(node.text);
          else documents.add(node.text);
        } catch {
          // Not GraphQL, or not whole: a piece of a larger document.
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { documents: [...documents], templated: left.templated.size, readingLogs: left.readingLogs.size };
}

/**
 * Values for the variables an operation declares that `bag` lacks: the simplest of each required
 * built-in scalar; null when one is required of another type (an input object, an enum, a custom
 * scalar), which the operation is then left out for.
 */
function variablesFor(operation: OperationDefinitionNode, bag: Record<string, unknown>, id: string): Record<string, unknown> | null {
  const simplest: Record<string, unknown> = { ID: id, String: id, Int: 1, Float: 1, Boolean: true };
  const own: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (name in bag || definition.type.kind !== Kind.NON_NULL_TYPE || definition.defaultValue) continue;
    const type = definition.type.type;
    if (type.kind !== Kind.NAMED_TYPE || !(type.name.value in simplest)) return null;
    own[name] = simplest[type.name.value];
  }
  return { ...bag, ...own };
}

/** Each object field's resolver (undefined for the default one), by `Type.field`. */
function resolversOf(schema: GraphQLSchema): Map<string, unknown> {
  const resolvers = new Map<string, unknown>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) resolvers.set(`${type.name}.${field.name}`, field.resolve);
  }
  return resolvers;
}

/** The mark Apollo leaves on a schema whose resolvers it wrapped (its enablePluginsForSchemaResolvers). */
function wrappedByApollo(schema: GraphQLSchema): boolean {
  return Object.getOwnPropertySymbols(schema).some((symbol) => symbol.description === 'apolloServerPluginsEnabled');
}

function operationsOf(text: string): OperationDefinitionNode[] {
  return parse(text).definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
}

describe('queries compiled by graphql-jit answer as graphql-js does', () => {
  let emulator: RunningEmulator;
  let jitGateway: GatewayOnly;
  let jsGateway: GatewayOnly;
  const key = newKey('jit');
  let customer: RestObject;
  let transaction: RestObject;
  let canceled: RestObject;
  let variables: Record<string, unknown>;

  /** Sends to the compiled side first, then graphql-js, and checks the two answers are the same bytes. */
  async function same(query: string, vars: Record<string, unknown> = variables, extra: Record<string, unknown> = {}): Promise<Answer> {
    const body = { query, variables: vars, ...extra };
    const compiled = await post(jitGateway, key, body);
    const interpreted = await post(jsGateway, key, body);
    expect(compiled, query).toEqual(interpreted);
    return compiled;
  }

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    jitGateway = await startGatewayOver(emulator.url);
    jsGateway = await startGatewayOver(emulator.url, { GRAPHQL_JIT: 'false' });
    const make = factories(emulator, key);
    customer = await make.customer({ firstname: 'Kofi', lastname: 'Annan' });
    transaction = await make.transaction({ amount: 2500, customer: { id: customer.id } });
    canceled = await make.transaction({ amount: 1234, customer: { id: customer.id } });
    await make.rest('PUT', `/v1/transactions/${canceled.id}`, { status: 'canceled' }).catch(() => undefined);
    await make.payout({ amount: 700, customer: { id: customer.id } });
    variables = { id: String(transaction.id), c: String(customer.id), first: 5, after: null, s: true, skip: false, more: true, i: true };
  });
  afterAll(async () => {
    await jitGateway?.stop();
    await jsGateway?.stop();
    await emulator?.stop();
  });

  // What a compiler may get wrong; each is a query of our own fields, so graphql-jit must run it.
  const caveats: [string, string, Record<string, unknown>?][] = [
    [
      'custom scalars: Decimal, DateTime, EmailAddress, CountryCode, JSONObject, enums',
      `query ($id: ID!) { transaction(id: $id) { id amount amountMoney { amount currencyIso } feesMoney { amount currencyIso }
        createdAt updatedAt status isPaid metadata callbackUrl
        customer { email fullName createdAt phoneNumber { number country } } currency { iso code modes default } } }`,
    ],
    [
      'the union of an event, with inline fragments on each member and __typename',
      `query { events(first: 10) { totalCount pageInfo { hasNextPage endCursor }
        nodes { id type objectId createdAt rawEntity entity { __typename
          ... on Transaction { id status amountMoney { amount currencyIso } }
          ... on Customer { id email } ... on Payout { id payoutStatus: status } ... on Currency { iso } } } } }`,
    ],
    [
      'named fragments, nested and repeated, and aliases',
      `fragment Money on PaymentsMoney { amount currencyIso }
      fragment Who on Customer { id fullName email }
      fragment Tx on Transaction { id amountMoney { ...Money } customer { ...Who } }
      query ($id: ID!, $c: ID!) { one: transaction(id: $id) { ...Tx } again: transaction(id: $id) { ...Tx status }
        buyer: customer(id: $c) { ...Who } page: transactions(first: 3) { nodes { ...Tx } } }`,
    ],
    [
      '@skip and @include, on fields, fragments and inline fragments, by variable and literal',
      `query ($id: ID!, $s: Boolean!, $skip: Boolean!) { transaction(id: $id) { id
        customer @include(if: $s) { email } currency @skip(if: $s) { iso }
        ... on Transaction @include(if: $skip) { status } ... @skip(if: false) { isPaid }
        amount @include(if: false) } }`,
    ],
    ['lists, pagination and a payout', `query ($first: Int) { payouts(first: $first) { totalCount edges { cursor node { id status amountMoney { amount currencyIso } customer { id } } } } currencies { iso name } }`],
    ['a final transaction, which may be kept (Cache-Control)', `query ($id: ID!) { transaction(id: $id) { id status amountMoney { amount currencyIso } } }`, { id: '' }],
    ['an unknown id: null, no error', `query { transaction(id: "999999999") { id } customer(id: "999999999") { id } }`],
    ['__typename alone', `{ __typename }`],
  ];

  it.each(caveats)('%s', async (_label, query, override) => {
    const vars = override ? { ...variables, id: String(canceled.id) } : variables;
    const runs = jit.runs;
    const answer = await same(query, vars);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text).errors).toBeUndefined();
    expect(jit.runs).toBe(runs + 1);
  });

  // Names every object inherits (`__proto__`, `constructor`, `toString`...) where a caller names things:
  // variables (given, absent, undeclared), arguments, input fields, aliases, fragments and operations.
  // Variables are built from JSON text, as a request's are, so that `__proto__` is a key like any other.
  const specialNames: [string, string, (ids: { id: string; c: string }) => string, string?][] = [
    ['a variable named __proto__', 'query ($__proto__: ID!) { transaction(id: $__proto__) { id status } }', ({ id }) => `{"__proto__": "${id}"}`],
    [
      'variables named constructor, toString, hasOwnProperty and valueOf',
      `query ($constructor: ID!, $toString: ID!, $hasOwnProperty: ID!, $valueOf: Int) {
        a: transaction(id: $constructor) { id } b: customer(id: $toString) { id } c: transaction(id: $hasOwnProperty) { status }
        transactions(first: $valueOf) { totalCount } }`,
      ({ id, c }) => `{"constructor": "${id}", "toString": "${c}", "hasOwnProperty": "${id}", "valueOf": 2}`,
    ],
    ['optional variables named constructor and toString, absent', 'query ($constructor: Int, $toString: Int) { transactions(first: $constructor) { totalCount } payouts(first: $toString) { totalCount } }', () => '{}'],
    ['a required variable named __proto__, absent', 'query ($__proto__: ID!) { transaction(id: $__proto__) { id } }', () => '{}'],
    ['an undeclared variable named __proto__', 'query ($id: ID!) { transaction(id: $id) { id } }', ({ id }) => `{"id": "${id}", "__proto__": {"polluted": true}}`],
    [
      'aliases named __proto__, constructor, toString, hasOwnProperty and valueOf',
      'query ($id: ID!) { __proto__: transaction(id: $id) { constructor: id toString: status hasOwnProperty: __typename valueOf: amount } constructor: currencies { __proto__: iso } }',
      ({ id }) => `{"id": "${id}"}`,
    ],
    [
      'fragments named __proto__, constructor and toString',
      `fragment __proto__ on Transaction { id } fragment constructor on Transaction { status } fragment toString on Customer { email }
      query ($id: ID!) { transaction(id: $id) { ...__proto__ ...constructor customer { ...toString } } }`,
      ({ id }) => `{"id": "${id}"}`,
    ],
    ['operations named __proto__ and constructor', 'query __proto__ { currencies { iso } } query constructor { currencies { name } }', () => '{}', '__proto__'],
    ['an argument named constructor (refused by validation)', 'query ($id: ID!) { transaction(id: $id, constructor: 1) { id } }', ({ id }) => `{"id": "${id}"}`],
    ['an input field named __proto__ (refused by validation)', 'query { customers(filter: { __proto__: "x" }) { totalCount } }', () => '{}'],
  ];

  it.each(specialNames)('answers %s as graphql-js does', async (_label, query, json, operationName) => {
    const vars = JSON.parse(json({ id: String(transaction.id), c: String(customer.id) })) as Record<string, unknown>;
    const answer = await same(query, vars, operationName ? { operationName } : {});
    expect(answer.text).not.toContain('INTERNAL_SERVER_ERROR');
  });

  it('compiles a document once, then runs it as compiled', async () => {
    const query = 'query Twice($id: ID!) { transaction(id: $id) { id status } }';
    const compiled = jit.compiled;
    const runs = jit.runs;
    for (let i = 0; i < 3; i++) await same(query);
    expect(jit.compiled).toBe(compiled + 1);
    expect(jit.runs).toBe(runs + 3);
  });

  it('writes each scalar by its own serializer (Decimal as a string, dates in ISO form)', async () => {
    const answer = await same(`query ($id: ID!) { transaction(id: $id) { amountMoney { amount } createdAt customer { phoneNumber { country } } } }`);
    const { transaction: tx } = JSON.parse(answer.text).data;
    expect(tx.amountMoney.amount).toBe('2500');
    expect(tx.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(tx.customer.phoneNumber.country).toBe('BJ');
  });

  it('gives errors the same path, code and partial data, with the relation that failed null', async () => {
    const admin = emulatorAdmin(emulator.url);
    // A customer neither gateway has read (and kept) yet.
    const make = factories(emulator, key);
    const unread = await make.transaction({ customer: { id: (await make.customer()).id } });
    await admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 500 });
    try {
      const runs = jit.runs;
      const answer = await same(`query ($id: ID!) { transaction(id: $id) { id customer { email } currency { iso } } }`, { id: String(unread.id) });
      expect(jit.runs).toBe(runs + 1);
      const body = JSON.parse(answer.text);
      expect(body.data.transaction.customer).toBeNull();
      expect(body.errors[0]).toMatchObject({ path: ['transaction', 'customer'], extensions: { code: 'UPSTREAM_ERROR' } });
    } finally {
      await admin('DELETE', '/_emulator/faults');
    }
  });

  // The last column: compiled runs. The two bad variables are refused by the compiled query, and graphql-js then
  // says why; the page and the argument are refused by resolvers inside it; the unknown field by validation.
  it.each([
    ['a variable of the wrong type', `query ($id: ID!) { transaction(id: $id) { id } }`, { id: { not: 'an id' } }, 1],
    ['a required variable missing', `query ($id: ID!) { transaction(id: $id) { id } }`, {}, 1],
    ['a page too large', `query ($first: Int) { transactions(first: $first) { nodes { id } } }`, { first: 1000 }, 1],
    ['an argument the scalar refuses', `query { customers(filter: { email: "not-an-email" }) { nodes { id } } }`, {}, 1],
    ['a field that does not exist', `query { transaction(id: "1") { nope } }`, {}, 0],
  ])('refuses %s with the same coded error', async (_label, query, vars, compiledRuns) => {
    const runs = jit.runs;
    const answer = await same(query, vars);
    expect(JSON.parse(answer.text).errors?.[0]?.extensions?.code).toMatch(/^[A-Z_]+$/);
    expect(jit.runs).toBe(runs + compiledRuns);
  });

  it('leaves _entities, _service and introspection to graphql-js, with the same answers', async () => {
    const compiled = jit.compiled;
    await same(`query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Transaction { id status } } }`, {
      r: [{ __typename: 'Transaction', id: String(transaction.id) }],
    });
    await same(`{ _service { sdl } }`);
    await same(`{ __schema { queryType { name } } __type(name: "Transaction") { name } }`);
    expect(jit.compiled).toBe(compiled);
  });

  it('leaves a query whose federated trace a router asks for to graphql-js, so the trace has every field', async () => {
    const query = 'query Traced($id: ID!) { transaction(id: $id) { id description customer { fullName } } }';
    const send = (headers: Record<string, string>) =>
      fetch(jitGateway.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
        body: JSON.stringify({ query, variables }),
      }).then((res) => res.json() as Promise<{ data: unknown; extensions: { ftv1?: string } }>);
    // Compiled first, before Apollo wraps the schema's resolvers to time them: a compiled query would not see them.
    const runs = jit.runs;
    await send({});
    expect(jit.runs).toBe(runs + 1);
    const body = await send({ 'apollo-federation-include-trace': 'ftv1' });
    expect(body.data).toEqual({ transaction: { id: String(transaction.id), description: 'Order', customer: { fullName: 'Kofi Annan' } } });
    // The trace is protobuf: each field's response name is in it as text.
    const trace = Buffer.from(body.extensions.ftv1!, 'base64').toString('latin1');
    for (const field of ['transaction', 'description', 'customer', 'fullName']) expect(trace).toContain(field);
    expect(jit.runs).toBe(runs + 1);
  });

  it("compiles later documents over resolvers Apollo did not wrap for a trace, and they answer the same", async () => {
    await same('query BeforeTrace($id: ID!) { transaction(id: $id) { id } }');
    const before = resolversOf(jit.schema!);
    expect(before.size).toBeGreaterThan(50);
    expect(wrappedByApollo(jit.schema!)).toBe(false);
    // Apollo wraps the resolvers of the schema it holds, in place, on the first request asking for a trace.
    const traced = await fetch(jitGateway.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'apollo-federation-include-trace': 'ftv1' },
      body: JSON.stringify({ query: '{ currencies { iso } }' }),
    }).then((res) => res.json() as Promise<{ extensions?: { ftv1?: string } }>);
    expect(traced.extensions?.ftv1).toBeTruthy();
    const compiled = jit.compiled;
    const runs = jit.runs;
    await same('query AfterTrace($id: ID!, $c: ID!) { transaction(id: $id) { id status customer { email } } customer(id: $c) { fullName } currencies { iso } }');
    expect(jit.compiled).toBe(compiled + 1);
    expect(jit.runs).toBe(runs + 1);
    expect(wrappedByApollo(jit.schema!)).toBe(false);
    const after = resolversOf(jit.schema!);
    expect([...after].filter(([field, resolve]) => before.get(field) !== resolve).map(([field]) => field)).toEqual([]);
  });

  it("leaves mutations to graphql-js (the explorer's and the example app's are all mutations or subscriptions)", async () => {
    const compiled = jit.compiled;
    const answer = await post(jitGateway, key, {
      query: 'mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "jit" }) { transaction { id description } userErrors { code } } }',
      variables: { id: String(transaction.id) },
    });
    expect(JSON.parse(answer.text).data.updateTransaction.transaction.description).toBe('jit');
    expect(jit.compiled).toBe(compiled);
  });

  it("answers the explorer's example queries the same", async () => {
    const queries = exampleTabs(String(transaction.id)).filter((tab) => operationsOf(tab.query).every((op) => op.operation === 'query'));
    expect(queries.length).toBeGreaterThanOrEqual(2);
    const runs = jit.runs;
    for (const tab of queries) await same(tab.query, tab.variables ? JSON.parse(tab.variables) : {});
    expect(jit.runs).toBe(runs + queries.length);
  });

  it('answers every query the other test files send the same', async () => {
    const suite = documentsOfTheSuite();
    let unfillable = 0;
    const corpus = suite.documents.flatMap((text) =>
      operationsOf(text)
        .filter((op) => op.operation === 'query')
        .flatMap((op) => {
          const vars = variablesFor(op, variables, String(transaction.id));
          if (!vars) unfillable += 1;
          return vars ? [{ text, vars, operationName: op.name?.value }] : [];
        }),
    );
    expect(corpus.length).toBeGreaterThanOrEqual(MIN_CORPUS);
    const runs = jit.runs;
    for (const { text, vars, operationName } of corpus) await same(text, vars, operationName ? { operationName } : {});
    console.info(
      `jit differential corpus: ${corpus.length} query operations from ${suite.documents.length} documents, ${jit.runs - runs} run compiled; ` +
        `left out: ${suite.templated} templates with \${...}, ${suite.readingLogs} reading request logs, ${unfillable} needing variables of an input type`,
    );
    // Most are plain queries the compiler runs; the rest are introspection, federation or refused before running.
    expect(jit.runs - runs).toBeGreaterThanOrEqual(MIN_COMPILED_RUNS);
  });
});
