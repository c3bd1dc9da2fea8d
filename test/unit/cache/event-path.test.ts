/** Whether pending objects may be kept (src/cache/event-path.ts): webhook secrets set, and with Redis every role of the event path up. */
import { describe, expect, it } from 'vitest';
import { EVENT_PATH_ROLES, hearsChanges } from '../../../src/cache/event-path.js';
import type { RedisRole } from '../../../src/redis.js';
import { singleServer } from '../../../src/redis-target.js';

const links = (state: Partial<Record<RedisRole, boolean>>) => ({ state: () => state });
const allUp = Object.fromEntries(EVENT_PATH_ROLES.map((role) => [role, true]));

describe('hearing the changes of pending objects', () => {
  it('never without a webhook secret, Redis or not', () => {
    expect(hearsChanges([], null, links({}))()).toBe(false);
    expect(hearsChanges([], singleServer('redis://127.0.0.1:6379'), links(allUp))()).toBe(false);
  });

  it('always with a secret and no Redis: one instance hears its own webhooks', () => {
    expect(hearsChanges(['whsec_x'], null, links({}))()).toBe(true);
  });

  it('with Redis, only while the entity cache and bus connections are all up, asked on each read', () => {
    const state: Partial<Record<RedisRole, boolean>> = { ...allUp, limits: false, idempotency: false };
    const hears = hearsChanges(['whsec_x'], singleServer('redis://127.0.0.1:6379'), links(state));
    expect(EVENT_PATH_ROLES).toEqual(['entity-cache', 'bus-publisher', 'bus-subscriber']);
    expect(hears()).toBe(true);
    for (const role of EVENT_PATH_ROLES) {
      state[role] = false;
      expect(hears()).toBe(false);
      state[role] = true;
      expect(hears()).toBe(true);
    }
    // A connection not opened yet is not a connection up.
    delete state['bus-subscriber'];
    expect(hears()).toBe(false);
  });
});
