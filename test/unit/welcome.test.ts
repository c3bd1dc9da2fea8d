/** What `npm start` prints: who can reach each listener, said from the address bound, and the README's first query. */
import { describe, expect, it } from 'vitest';
import { FIRST_QUERY, reach, welcome, type Welcome } from '../../src/welcome.js';

const base: Welcome = {
  graphqlUrl: 'http://127.0.0.1:4000/graphql',
  gatewayAddress: '127.0.0.1',
  emulatorUrl: 'http://127.0.0.1:4010',
  emulatorAddress: '127.0.0.1',
  key: 'sk_sandbox_demo',
  adminToken: 'token-0123456789',
  explorer: 'graphiql',
  metrics: 'http://127.0.0.1:4000/metrics',
  consolePortTaken: null,
};

describe('reach', () => {
  it('says a loopback address is this machine alone and how to open it, for IPv4 and IPv6', () => {
    expect(reach('The gateway', '127.0.0.1')).toBe('The gateway listens on 127.0.0.1 (loopback): only this machine reaches it; HOST=0.0.0.0 opens it to the network.');
    expect(reach('The gateway and the emulator', '::1')).toBe('The gateway and the emulator listen on ::1 (loopback): only this machine reaches them; HOST=0.0.0.0 opens them to the network.');
  });

  it('says every interface is reachable from the network, and names any other address as it is', () => {
    for (const address of ['0.0.0.0', '::']) expect(reach('The gateway', address)).toBe(`The gateway listens on ${address} (every interface): reachable from the network.`);
    expect(reach('The gateway', '10.0.0.5')).toBe('The gateway listens on 10.0.0.5 only.');
  });
});

describe('welcome', () => {
  it('says in one line who reaches both when they share an address, in two when they do not', () => {
    expect(welcome(base)).toContain('\nThe gateway and the emulator listen on 127.0.0.1 (loopback)');
    const split = welcome({ ...base, gatewayAddress: '0.0.0.0' });
    expect(split).toContain('\nThe gateway listens on 0.0.0.0 (every interface): reachable from the network.\nThe emulator listens on 127.0.0.1 (loopback)');
  });

  it('ends with the first query as a curl command for the printed URL and key', () => {
    expect(welcome(base)).toContain(`  curl -s http://127.0.0.1:4000/graphql \\\n    -H 'content-type: application/json' \\\n    -H 'authorization: Bearer sk_sandbox_demo' \\\n    -d '{"query":"${FIRST_QUERY}"}'\n`);
  });

  it('names the metrics URL as Prometheus, and says why when it is closed', () => {
    expect(welcome(base)).toContain('  Metrics     http://127.0.0.1:4000/metrics   (Prometheus)');
    expect(welcome({ ...base, metrics: 'closed until OPS_TOKEN is set' })).toContain('  Metrics     closed until OPS_TOKEN is set\n');
    expect(welcome({ ...base, metrics: null })).not.toContain('Metrics');
  });
});
