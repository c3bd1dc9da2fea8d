/**
 * An operation's logger (src/observability/operation.ts) is built the first
 * time something logs: a pino child costs a serialisation of its bindings,
 * and most operations log nothing. Built or not, every line carries the
 * operation's request id.
 */
import { Writable } from 'node:stream';
import { ApolloServer } from '@apollo/server';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createContext, type Context, type ContextDeps } from '../../../src/context.js';
import { KeyStatus } from '../../../src/access/key-status.js';
import { createLogger } from '../../../src/logger.js';
import { Observability } from '../../../src/observability/index.js';

function setUp(level: string) {
  const { lines, child, observability } = parts(level);
  const operation = observability.startOperation({ transport: 'http', headers: { 'x-request-id': 'req-42' } });
  operation.named('Page', 'query');
  operation.answered({ ok: true }, undefined);
  return { lines, child, operation };
}

function parts(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger(level, { destination });
  const child = vi.spyOn(logger, 'child');
  const config = loadConfig({ METRICS_ENABLED: 'false' });
  const observability = new Observability(config.observability, logger);
  return { lines, child, logger, config, observability };
}

describe('operation logger', () => {
  it('is not built for an operation that logs nothing', () => {
    const { lines, child, operation } = setUp('info');
    operation.end();
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('is built once, on first use, and its lines carry the request id', () => {
    const { lines, child, operation } = setUp('info');
    operation.logger.warn('first');
    operation.logger.warn('second');
    operation.end();
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
      ['first', 'req-42'],
      ['second', 'req-42'],
    ]);
  });

  it('at debug level, writes the operation\'s end with its request id', () => {
    const { lines, operation } = setUp('debug');
    operation.end();
    expect(lines).toEqual([expect.objectContaining({ msg: 'operation finished', requestId: 'req-42', operation: 'Page', outcome: 'ok' })]);
  });

  it('stays unbuilt through Apollo Server, which copies the context of every operation, and is there when a resolver logs', async () => {
    const { lines, child, logger, config, observability } = parts('info');
    const apollo = new ApolloServer<Context>({
      typeDefs: 'type Query { quiet: Boolean, loud: Boolean }',
      resolvers: { Query: { quiet: () => true, loud: (_p: unknown, _a: unknown, ctx: Context) => (ctx.logger.warn('from a resolver'), true) } },
    });
    const deps = { config, logger, observability, keys: new KeyStatus({ rejectedTtlMs: 0, revalidateMs: 60_000 }) } as unknown as ContextDeps;
    const contextFor = () => createContext(deps, { caller: null, deadlineAt: Date.now() + 1_000, telemetry: observability.startOperation({ transport: 'http', headers: { 'x-request-id': 'req-7' } }) });
    const quiet = await apollo.executeOperation({ query: '{ quiet }' }, { contextValue: contextFor() });
    expect(quiet.body).toMatchObject({ kind: 'single', singleResult: { data: { quiet: true } } });
    expect(child).not.toHaveBeenCalled();
    await apollo.executeOperation({ query: '{ loud }' }, { contextValue: contextFor() });
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([expect.objectContaining({ msg: 'from a resolver', requestId: 'req-7' })]);
  });
});
