/** Reading a request body within its bound, and the JSON answer every route writes. */
import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyTooLarge, isClientAbort, readBody, sendJson } from '../../../src/http/body.js';

/** A request as readBody sees it: a readable stream with headers. */
function request(headers: Record<string, string> = {}): PassThrough & { headers: Record<string, string> } {
  return Object.assign(new PassThrough(), { headers });
}

describe('readBody', () => {
  it('reads every chunk of a body within the bound', async () => {
    const req = request();
    const body = readBody(req as unknown as http.IncomingMessage, 10);
    req.write('{"a":');
    req.end('1}');
    expect((await body).toString()).toBe('{"a":1}');
  });

  it('refuses a body whose Content-Length is over the bound before reading any of it', async () => {
    const req = request({ 'content-length': '11' });
    const result = await readBody(req as unknown as http.IncomingMessage, 10);
    expect(result).toBeInstanceOf(BodyTooLarge);
    expect((result as BodyTooLarge).maxBytes).toBe(10);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('refuses at the chunk that crosses the bound, stops reading and pauses the stream', async () => {
    const req = request({ 'content-length': 'not a number' });
    const body = readBody(req as unknown as http.IncomingMessage, 10);
    req.write('12345');
    req.write('678901');
    const result = await body;
    expect(result).toBeInstanceOf(BodyTooLarge);
    expect(req.isPaused()).toBe(true);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('takes exactly the bound, and rejects on a stream error', async () => {
    const req = request({ 'content-length': '10' });
    const body = readBody(req as unknown as http.IncomingMessage, 10);
    req.end('1234567890');
    expect((await body).toString()).toBe('1234567890');
    const failing = request();
    const failed = readBody(failing as unknown as http.IncomingMessage, 10);
    failing.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await expect(failed).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});

describe('isClientAbort', () => {
  it('knows a client that went away, and nothing else', () => {
    for (const code of ['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']) expect(isClientAbort(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isClientAbort(new Error('aborted'))).toBe(true);
    for (const other of [new Error('boom'), Object.assign(new Error('x'), { code: 'EPIPE' }), null, undefined, 'aborted', { message: 'aborted' }]) expect(isClientAbort(other)).toBe(false);
  });
});

describe('sendJson', () => {
  it('writes the status, a JSON content type, the byte length and the text', () => {
    const written: { status?: number; headers?: Record<string, unknown>; text?: string } = {};
    const res = {
      writeHead(status: number, headers: Record<string, unknown>) {
        Object.assign(written, { status, headers });
      },
      end(text: string) {
        written.text = text;
      },
    } as unknown as http.ServerResponse;
    sendJson(res, 201, { name: 'Kwamé' });
    expect(written).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength('{"name":"Kwamé"}') },
      text: '{"name":"Kwamé"}',
    });
    expect(written.headers!['content-length']).toBe(17);
  });
});
