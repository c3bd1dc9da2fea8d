/**
 * A body's text decoded chunk by chunk (transport.ts, `BodyText`): the same text as decoding the whole
 * body at once, however the chunks split it, a character across two chunks or bytes that are not UTF-8.
 */
import { describe, expect, it } from 'vitest';
import { BodyText } from '../../../src/upstream/transport.js';

function decoded(bytes: Buffer, cuts: number[]): string {
  const body = new BodyText();
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    body.add(bytes.subarray(from, cut));
    from = cut;
  }
  return body.text();
}

describe('BodyText', () => {
  const text = '{"description":"Café à Cotonou – 10 000 FCFA 💸","amount":"10000"}';
  const bytes = Buffer.from(text, 'utf8');

  it('gives the text of one chunk, and of none', () => {
    expect(decoded(bytes, [])).toBe(text);
    expect(new BodyText().text()).toBe('');
  });

  it('keeps a character whole when the chunks split it, at every cut', () => {
    for (let cut = 1; cut < bytes.length; cut++) expect(decoded(bytes, [cut])).toBe(text);
    // Every byte a chunk of its own.
    expect(decoded(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))).toBe(text);
  });

  it('replaces bytes that are not UTF-8 as decoding the whole body does, a truncated character at the end too', () => {
    const broken = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3]), Buffer.from('x"}'), Buffer.from([0xf0, 0x9f])]);
    for (let cut = 1; cut < broken.length; cut++) expect(decoded(broken, [cut])).toBe(broken.toString('utf8'));
  });
});
