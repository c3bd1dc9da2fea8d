/**
 * Who the client is, for the per-address limits: the socket's peer, or, when
 * that peer is a proxy named in TRUSTED_PROXIES, the nearest address in
 * X-Forwarded-For that is not a trusted proxy (proxy-addr, as Express does).
 * Without trusted proxies the header is ignored: anyone can write it.
 */
import type http from 'node:http';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: http.IncomingMessage) => string;

export function clientAddress(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = proxyaddr.compile([...trustedProxies]);
  return (req) => (req.socket.remoteAddress ? proxyaddr(req, trust) : 'unknown');
}
