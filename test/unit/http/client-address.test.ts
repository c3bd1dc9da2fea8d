/** The address per-address limits count: X-Forwarded-For only from a trusted proxy, never from anyone. */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../../src/http/client-address.js';

const request = (remoteAddress: string | undefined, forwardedFor?: string) =>
  ({ socket: { remoteAddress }, connection: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as http.IncomingMessage;

describe('clientAddress', () => {
  it('without trusted proxies reads the socket and ignores X-Forwarded-For', () => {
    const of = clientAddress([]);
    expect(of(request('203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
    expect(of(request(undefined))).toBe('unknown');
  });

  it('behind a trusted proxy reads the client it forwards for', () => {
    const of = clientAddress(['10.0.0.0/8']);
    expect(of(request('10.1.2.3', '198.51.100.1'))).toBe('198.51.100.1');
    // The nearest untrusted hop is the client: what it wrote further left is its own claim.
    expect(of(request('10.1.2.3', '192.0.2.99, 198.51.100.1'))).toBe('198.51.100.1');
  });

  it('from an address that is not a trusted proxy keeps the socket\'s address, whatever the header says', () => {
    const of = clientAddress(['10.0.0.0/8']);
    expect(of(request('203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
    expect(of(request(undefined, '198.51.100.1'))).toBe('unknown');
  });
});
