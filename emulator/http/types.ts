import type { IncomingHttpHeaders } from 'node:http';
import type { Engine } from '../engine.js';
import type { AccountRow } from '../store.js';
import type { Router } from './router.js';

export interface RequestContext {
  engine: Engine;
  account: AccountRow;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: IncomingHttpHeaders;
}

export interface Reply {
  status: number;
  body: unknown;
}

export type Handler = (ctx: RequestContext) => Reply;
export type ApiRouter = Router<Handler>;

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
