/** What `npm start` prints once the gateway and its embedded emulator listen: where, who can reach them, a first query. */

const EXPLORER_HINT = {
  graphiql: '(open it in a browser: GraphiQL, key and examples prefilled)',
  sandbox: '(open it in a browser for Apollo Sandbox; needs the network)',
  off: '',
} as const;

/** The README's first query, word for word (test/docs/first-payment.test.ts holds the two together). */
export const FIRST_QUERY = '{ payouts(first: 5) { totalCount nodes { id amountMoney { amount currencyIso } status customer { fullName email } } } }';

export interface Welcome {
  graphqlUrl: string;
  /** Each listener's bound address, as the system reports it. */
  gatewayAddress: string;
  emulatorUrl: string;
  emulatorAddress: string;
  key: string;
  adminToken: string;
  explorer: keyof typeof EXPLORER_HINT;
  /** The metrics URL, or why it is closed. */
  metrics: string | null;
  consolePortTaken: number | null;
}

const EVERY_INTERFACE = new Set(['0.0.0.0', '::', '::ffff:0.0.0.0']);
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** Who can reach what listens on `address`, said from what is bound, not from what was asked. */
export function reach(subject: string, address: string): string {
  const [verb, them] = subject.includes(' and ') ? ['listen', 'them'] : ['listens', 'it'];
  if (EVERY_INTERFACE.has(address)) return `${subject} ${verb} on ${address} (every interface): reachable from the network.`;
  if (LOOPBACK.test(address)) return `${subject} ${verb} on ${address} (loopback): only this machine reaches ${them}; HOST=0.0.0.0 opens ${them} to the network.`;
  return `${subject} ${verb} on ${address} only.`;
}

export function welcome(w: Welcome): string {
  const moved = w.consolePortTaken
    ? `\n              port ${w.consolePortTaken} was taken, so this address changes on every start: free it, or set EMULATOR_PORT`
    : '';
  const metrics = w.metrics ? `\n  Metrics     ${w.metrics}${w.metrics.startsWith('http') ? '   (Prometheus)' : ''}` : '';
  // The gateway and the emulator share HOST: one line says who reaches both unless they differ.
  const reachLine =
    w.gatewayAddress === w.emulatorAddress
      ? reach('The gateway and the emulator', w.gatewayAddress)
      : `${reach('The gateway', w.gatewayAddress)}\n${reach('The emulator', w.emulatorAddress)}`;
  return `
Payments GraphQL gateway ready (embedded emulator, sandbox demo data)
${reachLine}

  GraphQL     ${w.graphqlUrl}   ${EXPLORER_HINT[w.explorer]}
  Emulator    ${w.emulatorUrl}   (admin API header x-emulator-admin-token: ${w.adminToken})
  Console     ${w.emulatorUrl}/_emulator/console#token=${w.adminToken}   (settle payments, see webhooks, switch faults)${moved}
  Sandbox key ${w.key}   (holds the demo data; any other sk_sandbox_… key is a new, empty account)${metrics}

Set this header in your client:
  Authorization: Bearer ${w.key}

A first query:
  curl -s ${w.graphqlUrl} \\
    -H 'content-type: application/json' \\
    -H 'authorization: Bearer ${w.key}' \\
    -d '{"query":"${FIRST_QUERY}"}'
`;
}
