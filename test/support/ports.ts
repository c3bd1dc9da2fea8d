/** Ports for servers started as child processes, by tests and benches alike. */
import net from 'node:net';

/** A port free on 127.0.0.1 right now, for a server started as a child process. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
