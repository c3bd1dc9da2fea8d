/**
 * `npm start` with no HOST listens on loopback alone, the gateway and its
 * embedded emulator both, and says so; HOST=0.0.0.0 opens both, and the
 * banner says that too. Reachability is tried, not read from the banner: on
 * Linux every 127.x address reaches this machine, but a socket bound to
 * 127.0.0.1 answers on that one alone, so 127.0.0.2 stands in for "from
 * another address" without needing a second interface.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const started = (out: string) => {
  const found = welcomePrinted(out);
  const emulator = /Emulator\s+(http:\/\/\S+)/.exec(out)?.[1];
  return found && emulator ? { ...found, emulator } : null;
};

/** The two ports, and whether each is reached on 127.0.0.1 and on 127.0.0.2. */
async function reachability(gateway: GatewayProcess) {
  const ports = [Number(new URL(gateway.found.url!).port), Number(new URL(gateway.found.emulator!).port)];
  return Promise.all(ports.map(async (port) => ({ loopback: await accepts('127.0.0.1', port), other: await accepts('127.0.0.2', port) })));
}

describe.skipIf(process.platform !== 'linux')('npm start, local unless asked', () => {
  it('listens on 127.0.0.1 alone without HOST, the gateway and the embedded emulator, and the banner says so', async () => {
    // An empty HOST counts as unset; EMULATOR_PORT=0 keeps port 4010 free for whoever uses it.
    const gateway = await spawnMain({ HOST: '', EMULATOR_PORT: '0' }, started);
    try {
      expect(await reachability(gateway)).toEqual([
        { loopback: true, other: false },
        { loopback: true, other: false },
      ]);
      expect(gateway.output()).toContain('The gateway and the emulator listen on 127.0.0.1 (loopback): only this machine reaches them; HOST=0.0.0.0 opens them to the network.');
      expect(gateway.output()).not.toContain('every interface');
    } finally {
      await gateway.stop();
    }
  }, 30_000);

  it('opens both with HOST=0.0.0.0, as the container image sets it, and the banner says they are reachable from the network', async () => {
    const gateway = await spawnMain({ HOST: '0.0.0.0', EMULATOR_PORT: '0' }, started);
    try {
      expect(await reachability(gateway)).toEqual([
        { loopback: true, other: true },
        { loopback: true, other: true },
      ]);
      expect(gateway.output()).toContain('The gateway and the emulator listen on 0.0.0.0 (every interface): reachable from the network.');
      expect(gateway.output()).not.toContain('loopback');
    } finally {
      await gateway.stop();
    }
  }, 30_000);
});
