/**
 * The schema check (scripts/schema-check/), in process: changes planted in a
 * copy of the released SDL are each named by coordinate and level, a break
 * fails until supergraph/accepted-changes.json-style entries accept it, safe
 * changes pass, the composers refuse a changed key or a dropped @shareable,
 * and a removed field names the shipped documents that select it.
 */
import { describe, expect, it } from 'vitest';
import { decide, parseAccepted } from '../../../../scripts/schema-check/acceptance.js';
import { parseSdl, schemaChanges, type SchemaChange } from '../../../../scripts/schema-check/changes.js';
import { runCheck } from '../../../../scripts/schema-check/check.js';
import { compose } from '../../../../scripts/schema-check/composition.js';
import { knownDocuments, markdownBlocks } from '../../../../scripts/schema-check/documents.js';
import { acceptedChanges, releasedSdl, workingTreeSdl } from '../../../../scripts/schema-check/inputs.js';
import { checkOperations } from '../../../../scripts/schema-check/operations.js';

const RELEASED = releasedSdl();

/** A copy of the released SDL with `from` (which must occur exactly once) replaced by `to`. */
function plant(from: string, to: string, sdl = RELEASED): string {
  const parts = sdl.split(from);
  if (parts.length !== 2) throw new Error(`the plant's text occurs ${parts.length - 1} times, not once: ${from}`);
  return parts.join(to);
}

const CACHE_CONTROL = `
enum CacheControlScope { PUBLIC PRIVATE }
directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
`;
const CURRENCIES = 'currencies: [Currency]! @listSize(assumedSize: 10)';
const withCacheControl = (maxAge: number) => plant(CURRENCIES, `${CURRENCIES} @cacheControl(maxAge: ${maxAge})`) + CACHE_CONTROL;

async function changesFrom(next: string, before = RELEASED): Promise<SchemaChange[]> {
  return schemaChanges(parseSdl(before), parseSdl(next));
}

const BREAKING_PLANTS: { name: string; next: () => string; coordinate: string; before?: () => string }[] = [
  {
    name: 'a field removed',
    next: () => plant('  """Whether SSL verification is enabled when posting to the receiver."""\n  sslVerify: Boolean\n', ''),
    coordinate: 'Webhook.sslVerify',
  },
  {
    name: "a field's type changed",
    next: () => plant('  """Whether the webhook is active."""\n  enabled: Boolean\n', '  """Whether the webhook is active."""\n  enabled: String\n'),
    coordinate: 'Webhook.enabled',
  },
  {
    name: 'a non-null output field made nullable',
    next: () => plant('  """Receiver URL the events are posted to."""\n  url: URL!\n', '  """Receiver URL the events are posted to."""\n  url: URL\n'),
    coordinate: 'Webhook.url',
  },
  {
    name: 'an argument made required',
    next: () => plant('Number of customers to return: 20 when omitted, at most 100 (more is a `BAD_USER_INPUT` error).\n    """\n    first: Int\n', 'Number of customers to return.\n    """\n    first: Int!\n'),
    coordinate: 'Query.customers(first:)',
  },
  {
    name: 'an enum value removed',
    next: () => plant('  """Not paid in time. Reported by the API family but unconfirmed."""\n  EXPIRED\n', ''),
    coordinate: 'TransactionStatus.EXPIRED',
  },
  {
    name: "an entity's @key changed",
    next: () => plant('type Webhook\n  @key(fields: "id")', 'type Webhook\n  @key(fields: "url")'),
    coordinate: 'Webhook @key(fields: "id")',
  },
  { name: '@shareable removed', next: () => plant('type PageInfo\n  @shareable\n', 'type PageInfo\n'), coordinate: 'PageInfo @shareable' },
  { name: 'a @cost weight changed', next: () => plant('  id: ID! @cost(weight: 1)', '  id: ID! @cost(weight: 2)'), coordinate: 'StartPayoutInput.id @cost(weight:)' },
  {
    name: 'a @listSize argument changed',
    next: () => plant(CURRENCIES, 'currencies: [Currency]! @listSize(assumedSize: 12)'),
    coordinate: 'Query.currencies @listSize(assumedSize:)',
  },
  // The SDL carries no @cacheControl: one is planted added, and one planted on both sides with its maxAge changed.
  { name: 'a @cacheControl added', next: () => withCacheControl(60), coordinate: 'Query.currencies @cacheControl' },
  { name: 'a @cacheControl changed', before: () => withCacheControl(60), next: () => withCacheControl(30), coordinate: 'Query.currencies @cacheControl(maxAge:)' },
];

describe('schema check: planted changes, each named by coordinate', () => {
  it.each(BREAKING_PLANTS)('names $name as breaking at $coordinate, and fails until it is accepted', async ({ next, before, coordinate }) => {
    const changes = await changesFrom(next(), before?.());
    expect(changes.filter((c) => c.level === 'breaking').map((c) => c.coordinate)).toContain(coordinate);
    expect(decide(changes, []).unaccepted.map((c) => c.coordinate)).toContain(coordinate);
    const accepted = decide(changes, [{ coordinate, reason: 'planted by the test, accepted by the test' }]);
    expect(accepted.unaccepted.map((c) => c.coordinate)).not.toContain(coordinate);
  });

  it('says what changed in a directive argument, from and to', async () => {
    const [change] = await changesFrom(plant('  id: ID! @cost(weight: 1)', '  id: ID! @cost(weight: 3)'));
    expect(change).toMatchObject({ level: 'breaking', source: 'directive rule', coordinate: 'StartPayoutInput.id @cost(weight:)' });
    expect(change?.message).toContain('from 1 to 3');
  });

  it("names a repeatable directive's argument change with the instance it is on", async () => {
    const changes = await changesFrom(plant('  @key(fields: "iso")\n', '  @key(fields: "iso", resolvable: false)\n'));
    expect(changes).toEqual([expect.objectContaining({ level: 'breaking', coordinate: 'Currency @key(fields: "iso", resolvable:)' })]);
    expect(changes[0]?.message).toContain('from true to false');
  });

  it('names an enum value added as dangerous, which does not fail', async () => {
    const changes = await changesFrom(plant('  """Not paid in time. Reported by the API family but unconfirmed."""\n  EXPIRED\n', '  """Not paid in time. Reported by the API family but unconfirmed."""\n  EXPIRED\n\n  DISPUTED\n'));
    expect(changes).toEqual([expect.objectContaining({ level: 'dangerous', coordinate: 'TransactionStatus.DISPUTED' })]);
    expect(decide(changes, []).unaccepted).toEqual([]);
  });

  it('passes a field added, a description changed and a new optional argument as safe', async () => {
    let next = plant('  """Whether the webhook is active."""\n  enabled: Boolean\n', '  """Whether the webhook is active."""\n  enabled: Boolean\n\n  """A note."""\n  note: String\n');
    next = plant('"""Whether the webhook is active."""', '"""Whether the webhook is active now."""', next);
    next = plant('webhooks: [Webhook]! @listSize(assumedSize: 10)', 'webhooks(enabled: Boolean): [Webhook]! @listSize(assumedSize: 10)', next);
    const changes = await changesFrom(next);
    // graphql-inspector calls a new optional argument dangerous (a resolver may act on it): reported, not failing.
    expect([...new Set(changes.map((c) => `${c.level} ${c.coordinate}`))].sort()).toEqual(['dangerous Query.webhooks(enabled:)', 'safe Webhook.enabled', 'safe Webhook.note']);
    const result = await runCheck({ released: RELEASED, current: next, accepted: [], documents: knownDocuments() });
    expect(result.passed).toBe(true);
  });
});

describe('schema check: acceptance of breaking changes', () => {
  it('reads entries with a reason and refuses one without', () => {
    expect(parseAccepted('{"accepted":[{"coordinate":"Webhook.url","reason":"no client reads it yet"}]}', 'f.json')).toHaveLength(1);
    expect(() => parseAccepted('{"accepted":[{"coordinate":"Webhook.url","reason":""}]}', 'f.json')).toThrow(/f\.json is malformed: accepted\.0\.reason/);
    expect(() => parseAccepted('{"accepted":[{"coordinate":"Webhook.url"}]}', 'f.json')).toThrow(/reason/);
  });

  it('reports an entry that matches no breaking change as stale', () => {
    const decision = decide([], [{ coordinate: 'Webhook.url', reason: 'reverted since, entry left behind' }]);
    expect(decision.stale.map((e) => e.coordinate)).toEqual(['Webhook.url']);
  });

  it('the committed file is well formed and accepts nothing the working tree does not break', async () => {
    const changes = await changesFrom(await workingTreeSdl());
    expect(decide(changes, acceptedChanges()).stale).toEqual([]);
  });
});

describe('schema check: composition by both composers', () => {
  const released = parseSdl(RELEASED);

  it('composes the released SDL beside the stand-ins with neither composer complaining', () => {
    expect(compose(released, released).findings).toEqual([]);
  });

  it("refuses an entity whose key another subgraph references went, in both composers", () => {
    const { findings } = compose(released, parseSdl(plant('type Webhook\n  @key(fields: "id")', 'type Webhook\n  @key(fields: "url")')));
    expect(new Set(findings.filter((f) => f.kind === 'error').map((f) => f.composer))).toEqual(new Set(['@apollo/composition', '@theguild/federation-composition']));
    expect(findings.every((f) => f.message.includes('Webhook.id'))).toBe(true);
  });

  it('refuses a second key no longer resolvable, though the first still is (each key position has a stand-in of its own)', () => {
    const { findings } = compose(released, parseSdl(plant('  @key(fields: "iso")\n', '  @key(fields: "iso", resolvable: false)\n')));
    const errors = findings.filter((f) => f.kind === 'error');
    expect(new Set(errors.map((f) => f.composer))).toEqual(new Set(['@apollo/composition', '@theguild/federation-composition']));
    expect(errors.every((f) => f.message.startsWith('SATISFIABILITY_ERROR') && f.message.includes('ref2Currency'))).toBe(true);
  });

  it('refuses PageInfo without @shareable beside a subgraph that shares it, in both composers', () => {
    const { findings } = compose(released, parseSdl(plant('type PageInfo\n  @shareable\n', 'type PageInfo\n')));
    expect(new Set(findings.filter((f) => f.kind === 'error').map((f) => f.composer))).toEqual(new Set(['@apollo/composition', '@theguild/federation-composition']));
    expect(findings.some((f) => f.message.startsWith('INVALID_FIELD_SHARING') && f.message.includes('PageInfo.'))).toBe(true);
  });

  it("lists an Apollo hint the released SDL did not give, without failing", () => {
    const { findings } = compose(released, parseSdl(plant('  """Whether a page follows this one."""\n  hasNextPage: Boolean!\n', '  """Whether a page follows this one."""\n  hasNextPage: Boolean\n')));
    expect(findings).toEqual([expect.objectContaining({ kind: 'hint added', composer: '@apollo/composition', message: expect.stringMatching(/^INCONSISTENT_BUT_COMPATIBLE_FIELD_TYPE: .*PageInfo\.hasNextPage/) })]);
  });
});

describe('schema check: the operations the project ships', () => {
  it('names each document that selects a removed field', () => {
    const next = parseSdl(plant('  """Time the transaction was approved."""\n  approvedAt: DateTime\n', ''));
    const result = checkOperations(knownDocuments(), next.schema, parseSdl(RELEASED).schema);
    expect(result.findings.map((f) => f.document).sort()).toEqual([
      'README.md, graphql block 1 at line 110 (subscription Updates)',
      'docs/realtime.md, graphql block 1 at line 12 (subscription (anonymous))',
      'src/explorer/examples.ts, tab 4 (query Check)',
      'src/explorer/examples.ts, tab 5 (subscription Updates)',
    ].sort());
    expect(result.findings.every((f) => f.kind === 'invalid' && f.message.includes('Cannot query field "approvedAt" on type "Transaction"'))).toBe(true);
  });

  it("names the checkout example's document whose argument went", () => {
    const next = parseSdl(plant('    id: ID\n  ): Transaction!\n}', '    key: ID\n  ): Transaction!\n}'));
    const result = checkOperations(knownDocuments(), next.schema, parseSdl(RELEASED).schema);
    expect(result.findings.map((f) => f.document)).toContain('examples/checkout/src/operations.ts, line 22 (subscription CheckoutStatus)');
  });

  it('tells SDL blocks, fragment blocks, mixed and unparsable blocks apart', () => {
    const markdown = [
      '```graphql\ntype Thing { id: ID! }\n```',
      '```graphql\nfragment Row on Webhook { id url }\n```',
      '```graphql\ntype Thing { id: ID! }\nquery { webhooks { id } }\n```',
      '```graphql\nquery { webhooks { id }\n```',
      '```graphql\nfragment Row on Webhook { id nope }\n```',
    ].join('\n\n');
    const blocks = markdownBlocks('x.md', markdown);
    expect(blocks.map((b) => b.name)).toEqual([1, 5, 9, 14, 18].map((line, i) => `x.md, graphql block ${i + 1} at line ${line}`));
    const schema = parseSdl(RELEASED).schema;
    const result = checkOperations(blocks, schema, schema);
    expect(result.sdlBlocks).toEqual(['x.md, graphql block 1 at line 1']);
    expect(result.validated).toBe(2);
    expect(result.findings.map((f) => [f.document, f.kind])).toEqual([
      ['x.md, graphql block 3 at line 9', 'mixed'],
      ['x.md, graphql block 4 at line 14', 'unparsable'],
      ['x.md, graphql block 5 at line 18 (fragment Row)', 'invalid at release too'],
    ]);
    expect(result.findings[2]?.message).toMatch(/Cannot query field "nope" on type "Webhook".*\(file line 19\)/);
  });
});

describe("schema check: a supergraph team's own subgraphs and operations", () => {
  const LOYALTY = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
type Query { topCustomers: [Customer!]! }
type Customer @key(fields: "id") { id: ID! points: Int! }
`;
  const team = { accepted: [], documents: [], subgraphs: [{ name: 'loyalty', sdl: LOYALTY }], supergraphDocuments: [{ name: 'ops/top.graphql', source: 'query Top { topCustomers { points email } }' }] };

  it('validates its operations against the composed API schema, and names the one a removed field breaks', async () => {
    const unchanged = await runCheck({ ...team, released: RELEASED, current: RELEASED });
    expect(unchanged.passed).toBe(true);
    expect(unchanged.operations.validated).toBe(1);

    const next = plant('  """E-mail address."""\n  email: EmailAddress\n\n', '');
    const result = await runCheck({ ...team, released: RELEASED, current: next });
    expect(result.passed).toBe(false);
    expect(result.decision.unaccepted.map((c) => c.coordinate)).toEqual(['Customer.email']);
    expect(result.operations.findings).toEqual([
      { document: 'ops/top.graphql (query Top)', kind: 'invalid', message: expect.stringContaining('Cannot query field "email" on type "Customer"') },
    ]);
  });
});

describe('schema check: the working tree', () => {
  it('passes against the released SDL: what npm run schema:check runs in CI', async () => {
    const result = await runCheck({ released: RELEASED, current: await workingTreeSdl(), accepted: acceptedChanges(), documents: knownDocuments() });
    expect(result.composition).toEqual([]);
    expect(result.operations.findings).toEqual([]);
    expect(result.passed).toBe(true);
  });

});
