/**
 * HTTP connections shared fairly: a cap per address so idle sockets cannot take every slot (trusted proxies
 * exempt: they carry many clients), idle ones closed under pressure, and the drain at shutdown.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import proxyaddr from 'proxy-addr';

/** The share of MAX_HTTP_CONNECTIONS past which idle connections are closed. */
export const PRESSURE_SHARE = 0.8;
/** Under pressure, a connection idle this long is closed; also its keep-alive time-out then. */
export const PRESSURE_IDLE_MS = 1_000;
const SWEEP_EVERY_MS = 1_000;

export interface ConnectionLimits {
  maxConnections: number;
  perAddress: number;
  trustedProxies: readonly string[];
}

export interface ConnectionGuard {
  stats(): { open: number; idle: number; requests: number; refusedPerAddress: number; closedIdle: number };
  /** Resolves with how many requests were cut unanswered when `graceMs` ran out. */
  drain(graceMs: number): Promise<number>;
}

export function guardConnections(server: http.Server, limits: ConnectionLimits): ConnectionGuard {
  const trusted = limits.trustedProxies.length > 0 ? proxyaddr.compile([...limits.trustedProxies]) : null;
  const perAddress = new Map<string, number>();
  const busy = new Map<Socket, number>();
  /** Open connections with no request in progress, and since when. */
  const idleSince = new Map<Socket, number>();
  /** Connections of trusted proxies: a load balancer's keep-alive pool, never swept (closing one races its next request into a 502). */
  const proxied = new WeakSet<Socket>();
  const normalKeepAlive = server.keepAliveTimeout;
  const threshold = Math.floor(limits.maxConnections * PRESSURE_SHARE);
  let refusedPerAddress = 0;
  let closedIdle = 0;
  let requests = 0;
  let draining = false;
  /** Called when the last request in progress is answered while draining. */
  let drained: (() => void) | null = null;

  const onPressure = () => {
    const pressed = busy.size > threshold;
    server.keepAliveTimeout = pressed ? Math.min(normalKeepAlive, PRESSURE_IDLE_MS) : normalKeepAlive;
    if (!pressed) return;
    const before = Date.now() - PRESSURE_IDLE_MS;
    for (const [socket, since] of idleSince) {
      if (since > before || proxied.has(socket)) continue;
      idleSince.delete(socket);
      closedIdle += 1;
      socket.destroy();
    }
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const counted = !(trusted && socket.remoteAddress && trusted(socket.remoteAddress, 0));
    if (!counted) proxied.add(socket);
    if (counted) {
      const held = perAddress.get(address) ?? 0;
      if (held >= limits.perAddress) {
        refusedPerAddress += 1;
        socket.destroy();
        return;
      }
      perAddress.set(address, held + 1);
    }
    busy.set(socket, 0);
    idleSince.set(socket, Date.now());
    socket.once('close', () => {
      busy.delete(socket);
      idleSince.delete(socket);
      if (!counted) return;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
    if (busy.size > threshold) onPressure();
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    if (!busy.has(socket)) return;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    idleSince.delete(socket);
    requests += 1;
    res.once('close', () => {
      requests -= 1;
      if (requests === 0) drained?.();
      if (!busy.has(socket)) return;
      const left = (busy.get(socket) ?? 1) - 1;
      busy.set(socket, left);
      if (left > 0 || socket.destroyed) return;
      // Draining, a connection with nothing left to answer has no reason to stay.
      if (draining) socket.destroy();
      else idleSince.set(socket, Date.now());
    });
  });

  // An upgraded socket is a WebSocket now, with caps of its own: never an idle HTTP connection.
  server.on('upgrade', (req: http.IncomingMessage) => idleSince.delete(req.socket));

  const sweep = setInterval(onPressure, SWEEP_EVERY_MS).unref();
  server.once('close', () => clearInterval(sweep));

  return {
    stats: () => ({ open: busy.size, idle: idleSince.size, requests, refusedPerAddress, closedIdle }),
    async drain(graceMs) {
      draining = true;
      clearInterval(sweep);
      server.close();
      server.closeIdleConnections();
      if (requests > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const cut = requests;
      // Upgraded sockets are not among them: the WebSocket side closes its own.
      server.closeAllConnections();
      return cut;
    },
  };
}
