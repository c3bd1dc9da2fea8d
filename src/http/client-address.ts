/**
 * The client address for per-address limits: X-Forwarded-For is read only behind TRUSTED_PROXIES
 * (proxy-addr, as Express does), since anyone can write it.
 */
import type http from 'node:http';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: http.IncomingMessage) => string;

export function clientAddress(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = proxyaddr.compile([...trustedProxies]);
  return (req) => (req.socket.remoteAddress ? proxyaddr(req, trust) : 'unknown');
}
