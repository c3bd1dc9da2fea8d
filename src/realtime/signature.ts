/**
 * `X-FEDAPAY-SIGNATURE: t=<unix s>,s=<hex HMAC-SHA256(secret, "<t>.<body>")>`; several `s` (the upstream rolling its
 * secret) and several secrets (us rolling ours): any pair that matches verifies.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-fedapay-signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type SignatureCheck =
  | { ok: true }
  | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' | 'stale' | 'no-secret-configured' };

export interface VerifyOptions {
  secrets: readonly string[];
  nowSeconds?: number;
  toleranceSeconds?: number;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

export type SignatureHeader = { ok: true; timestamp: string; signatures: Buffer[] } | Extract<SignatureCheck, { ok: false }>;

/** No secret, or a malformed header: refused without reading the body or computing any HMAC. */
export function readSignatureHeader(header: string | undefined, secrets: readonly string[]): SignatureHeader {
  if (secrets.length === 0) return { ok: false, reason: 'no-secret-configured' };
  if (!header) return { ok: false, reason: 'missing' };
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return { ok: false, reason: 'malformed' };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return { ok: false, reason: 'malformed' };
      timestamp = value;
    } else if (key === 's') {
      if (!HEX_SHA256.test(value)) return { ok: false, reason: 'malformed' };
      signatures.push(Buffer.from(value, 'hex'));
    }
    // Unknown keys are ignored, as Stripe-style schemes add them over time.
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed' };
  return { ok: true, timestamp, signatures };
}

export function verifySignature(header: string | undefined, rawBody: Buffer, options: VerifyOptions): SignatureCheck {
  const read = readSignatureHeader(header, options.secrets);
  if (!read.ok) return read;
  const { timestamp, signatures } = read;
  let matched = false;
  for (const secret of options.secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
    // No early exit: every secret and every candidate is compared, in constant time each.
    for (const candidate of signatures) matched = timingSafeEqual(expected, candidate) || matched;
  }
  if (!matched) return { ok: false, reason: 'mismatch' };

  // Checked after the HMAC, so a forged header learns nothing about our clock.
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(timestamp)) > tolerance) return { ok: false, reason: 'stale' };
  return { ok: true };
}
