/**
 * The architecture as import rules (docs/architecture.md draws the same
 * rooms and lists these rules). `npm run depcheck` fails on a cycle or on an
 * import against the allowed directions below. Read each rule as
 * "<from> may not import <to>". An arrow means "may import":
 *
 *  main.ts ──> server/ ──> http/ ──> context.ts ──> loaders/ ──> cache/ ──> upstream/
 *    │           │             │          │                                        ▲
 *    │           │             │          ├──> observability/ (fills the hooks) ───┤
 *    │           │             │          └──> access/ ──> limits/ ────────────────┤
 *    │           │             └──> realtime/ (event side) ────────────────────────┤
 *    │           ├──> explorer/                                                    │
 *    │           └──> schema.ts ──> resolvers/ ──> payments/ ──────────────────────┤
 *    │                                └──> idempotency/ ───────────────────────────┘
 *    └──> emulator/ (stands alone: imports nothing of the gateway)
 *
 *  graphql/ (the selection walker) imports nothing. config.ts, logger.ts, errors.ts,
 *  naming.ts, pagination.ts, redis.ts and __generated__/ are shared modules: every
 *  room may use them except upstream/, loaders/, graphql/ and emulator/.
 */
const GATEWAY_SHARED = '^src/(config|config-types|logger|errors|naming|pagination|redis)\\.ts$|^src/__generated__/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Rooms depend one way; a cycle means two of them are one room or a type is in the wrong place.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'emulator-stands-alone',
      severity: 'error',
      comment: 'The emulator is a separate product: it imports nothing of the gateway.',
      from: { path: '^emulator/' },
      to: { path: '^src/', pathNot: '^emulator/' },
    },
    {
      name: 'only-main-starts-the-emulator',
      severity: 'error',
      comment: 'The gateway reaches the emulator over HTTP like any upstream; only the entry point starts it.',
      from: { path: '^src/', pathNot: '^src/main\\.ts$' },
      to: { path: '^emulator/' },
    },
    {
      name: 'emulator-through-its-entry',
      severity: 'error',
      comment: 'The emulator is a product of its own: the gateway starts it through emulator/index.ts only.',
      from: { path: '^src/' },
      to: { path: '^emulator/', pathNot: '^emulator/index\\.ts$' },
    },
    {
      name: 'upstream-knows-no-gateway',
      severity: 'error',
      comment: 'The REST client is usable on its own: it imports nothing of the GraphQL side.',
      from: { path: '^src/upstream/' },
      to: { path: '^src/', pathNot: '^src/upstream/' },
    },
    {
      name: 'upstream-holds-no-policy',
      severity: 'error',
      comment: "The operation's budget, key guard and rates wrap the client from outside (access/upstream-budget.ts): the client calls no policy hook.",
      from: { path: '^src/upstream/' },
      to: { path: '^src/(access|limits)/' },
    },
    {
      name: 'upstream-through-its-index',
      severity: 'error',
      comment: 'The REST client is entered by its public surface; its modules can change shape without touching the gateway.',
      from: { path: '^src/', pathNot: '^src/upstream/' },
      to: { path: '^src/upstream/', pathNot: '^src/upstream/index\\.ts$' },
    },
    {
      name: 'loaders-sit-on-upstream',
      severity: 'error',
      comment: 'DataLoaders batch upstream reads (through the entity cache); they know nothing of GraphQL resolvers or transports.',
      from: { path: '^src/loaders/' },
      to: { path: '^src/', pathNot: ['^src/loaders/', '^src/upstream/', '^src/cache/'] },
    },
    {
      name: 'cache-sits-on-upstream',
      severity: 'error',
      comment: 'The entity cache stores upstream objects by the payment rules; it knows no loader, resolver, transport or event side (server/ wires webhooks to it).',
      from: { path: '^src/cache/' },
      to: { path: '^src/', pathNot: ['^src/cache/', '^src/upstream/', '^src/payments/', GATEWAY_SHARED] },
    },
    {
      name: 'payment-rules-are-pure',
      severity: 'error',
      comment: 'Payment rules read the schema enums and upstream constants, nothing that runs an operation.',
      from: { path: '^src/payments/' },
      to: { path: '^src/', pathNot: ['^src/payments/', '^src/upstream/', GATEWAY_SHARED] },
    },
    {
      name: 'selection-is-graphql-only',
      severity: 'error',
      from: { path: '^src/graphql/' },
      to: { path: '^src/', pathNot: '^src/graphql/' },
    },
    {
      name: 'realtime-is-the-event-side',
      severity: 'error',
      comment: 'Bus, ledger, receiver logic and streams; transports (http/) and resolvers use it, never the reverse. The disk ledger sits on the fair cache.',
      from: { path: '^src/realtime/' },
      to: { path: '^src/', pathNot: ['^src/realtime/', '^src/upstream/', '^src/graphql/fair-cache\\.ts$', GATEWAY_SHARED] },
    },
    {
      name: 'idempotency-below-resolvers',
      severity: 'error',
      from: { path: '^src/idempotency/' },
      to: { path: '^src/(http|resolvers|realtime|loaders|server|context|schema)' },
    },
    {
      name: 'resolvers-never-see-transports',
      severity: 'error',
      comment: 'A resolver works the same over HTTP and WebSocket: it imports no transport.',
      from: { path: '^src/(resolvers|schema)' },
      to: { path: '^src/(http/|server/|main\\.ts)' },
    },
    {
      name: 'observability-fills-hooks',
      comment: 'Metrics and traces implement the hooks other rooms expose (upstream observer, loader stats, idempotency and webhook outcomes); they run no operation themselves.',
      severity: 'error',
      from: { path: '^src/observability/' },
      to: { path: '^src/', pathNot: ['^src/observability/', '^src/upstream/', '^src/loaders/', '^src/idempotency/', GATEWAY_SHARED] },
    },
    {
      name: 'one-way-in',
      severity: 'error',
      comment: 'A transport (src/http/) learns who the caller is and whether it may go on only from the admission module: keys, rates, documents and revocation are checked one way for HTTP, WebSocket and SSE.',
      from: { path: '^src/http/' },
      to: { path: ['^src/access/', '^src/limits/'], pathNot: '^src/access/admission\\.ts$' },
    },
    {
      name: 'limits-below-access',
      severity: 'error',
      comment: 'Document limits judge documents; the door (access/) applies them and the upstream gate, never the reverse: what limits need of the gate is a shape of their own.',
      from: { path: '^src/limits/' },
      to: { path: '^src/access/' },
    },
    {
      name: 'only-the-server-assembles-transports',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/http/', '^src/server/'] },
      to: { path: '^src/http/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The explorer's browser source and its built bundle are not gateway code.
    exclude: { path: '^explorer/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
