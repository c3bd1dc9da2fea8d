import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { jsonPieces, sendReply, STREAM_FROM_CHARS } from '../../../../emulator/http/reply.js';
import { errorFromResponse, UpstreamResponseTooLargeError } from '../../../../src/upstream/errors.js';

/** A response that keeps what is written and drains only when told to, as a slow reader's socket. */
class FakeResponse extends Writable {
  status = 0;
  headers: Record<string, unknown> = {};
  readonly chunks: string[] = [];
  private pending: (() => void)[] = [];
  flowing = false;

  constructor() {
    super({ highWaterMark: 16 * 1024, decodeStrings: false });
  }

  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }

  override _write(chunk: string, _encoding: string, done: () => void): void {
    this.chunks.push(chunk);
    if (this.flowing) done();
    else this.pending.push(done);
  }

  flow(): void {
    this.flowing = true;
    for (const done of this.pending.splice(0)) done();
  }

  get text(): string {
    return this.chunks.join('');
  }
}

const send = (res: FakeResponse, body: unknown, heapShare = () => 0.1) => sendReply(res as unknown as ServerResponse, 200, body, { keepChars: 100, heapShare });
const heavyRow = (id: number) => ({ id, klass: 'v1/transaction', custom_metadata: { blob: 'x'.repeat(300 * 1024), id } });
const page = (rows: number) => ({ 'v1/transactions': Array.from({ length: rows }, (_, i) => heavyRow(i + 1)), meta: { current_page: 1, per_page: rows } });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('emulator answers on the wire', () => {
  it.each([
    ['a list', [1, 'two', { three: 3 }, null]],
    ['an enveloped page', { 'v1/transactions': [{ id: 1, amount: '1.5' }, { id: 2 }], meta: { current_page: 1, next_page: null } }],
    ['an empty list and object', { list: [], object: {} }],
    ['members JSON.stringify leaves out', { a: undefined, b: () => 1, c: 1, d: Symbol('s') }],
    ['the first member left out', { a: undefined, b: [1] }],
    ['list items JSON.stringify writes as null', [undefined, () => 1, 2]],
    ['an object with a toJSON', { when: new Date(0), list: [new Date(1)] }],
    ['a class instance at the top', new Date(2)],
    ['a primitive', 'text'],
    ['null', null],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { a: [1, 2] })],
    ['a page of heavy rows', page(3)],
  ])('writes %s exactly as JSON.stringify does', (_, body) => {
    expect([...jsonPieces(body)].join('')).toBe(JSON.stringify(body));
  });

  it('sends a small answer whole, with its length, and hands its text back', async () => {
    const res = new FakeResponse();
    res.flow();
    const body = page(1);
    const text = await send(res, body);
    expect(text).toBe(JSON.stringify(body));
    expect(res.headers['content-length']).toBe(Buffer.byteLength(text));
    expect(res.text).toBe(text);
  });

  it('streams a large answer as the reader takes it, holding about one row at a time', async () => {
    const res = new FakeResponse();
    const body = page(20);
    const whole = JSON.stringify(body);
    expect(whole.length).toBeGreaterThan(2 * STREAM_FROM_CHARS);
    const sent = send(res, body);
    for (let i = 0; i < 20; i++) await turn();
    // The reader has taken nothing: what was written (all of it still buffered) is a row or two, not the page.
    const written = res.writableLength;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(2 * JSON.stringify(heavyRow(1)).length);
    res.flow();
    const kept = await sent;
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.text).toBe(whole);
    // Its start, one past what the log keeps, so the log marks it cut.
    expect(kept).toBe(whole.slice(0, 101));
  });

  it('refuses a large answer with a size code while its heap is nearly full, which the gateway charges to the key', async () => {
    const res = new FakeResponse();
    res.flow();
    const text = await send(res, page(20), () => 0.95);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(text)).toMatchObject({ code: 'page_too_large', errors: { per_page: ['ask for fewer rows'] } });
    expect(res.text).toBe(text);
    expect(errorFromResponse(503, text, '1', { route: 'GET /v1/transactions' }, '')).toBeInstanceOf(UpstreamResponseTooLargeError);
    // With room, the same page is served.
    const served = new FakeResponse();
    served.flow();
    await send(served, page(20), () => 0.5);
    expect(served.status).toBe(200);
  });

  it('stops writing when the reader goes away', async () => {
    const res = new FakeResponse();
    const sent = send(res, page(20));
    for (let i = 0; i < 5; i++) await turn();
    const written = res.writableLength;
    res.destroy();
    await sent;
    expect(res.writableLength).toBe(written);
    expect(written).toBeLessThan(JSON.stringify(page(20)).length / 2);
  });
});
