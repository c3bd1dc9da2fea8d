/**
 * A TCP proxy in front of a server (redis-server here) that can stop forwarding without closing anything, as a
 * network that drops packets would: bytes wait in the sockets until it forwards again. A server that dies behind
 * it closes the client's side too, so clients reconnect through it.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Stops forwarding in both directions, on open and new connections alike. */
  stall(): void;
  /** Forwards again, what waited first. */
  resume(): void;
  close(): Promise<void>;
}

interface Pair {
  sockets: [net.Socket, net.Socket];
  /** What arrived while stalled, per direction, in order. */
  held: [Buffer[], Buffer[]];
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let stalled = false;
  const flush = (pair: Pair) => {
    pair.held.forEach((chunks, from) => {
      for (const chunk of chunks.splice(0)) pair.sockets[1 - from]!.write(chunk);
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair: Pair = { sockets: [client, upstream], held: [[], []] };
    pairs.add(pair);
    pair.sockets.forEach((socket, from) =>
      socket.on('data', (chunk: Buffer) => {
        if (stalled) pair.held[from]!.push(chunk);
        else pair.sockets[1 - from]!.write(chunk);
      }),
    );
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair.sockets) socket.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const pair of pairs) flush(pair);
    },
    async close() {
      for (const { sockets } of pairs) for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
