/**
 * The events loader behind `statusHistory` (src/loaders/index.ts): one events
 * read per object, batched, where each object's history stands or fails on
 * its own events only.
 */
import { describe, expect, it } from 'vitest';
import { uncached } from '../../../src/cache/index.js';
import { createLoaders } from '../../../src/loaders/index.js';
import type { ListItem, PaymentsApi } from '../../../src/upstream/api.js';
import { UpstreamInvalidResponseError } from '../../../src/upstream/errors.js';
import type { EventModel } from '../../../src/upstream/models.js';

const event = (id: number, objectId: number, type = 'transaction.approved') => ({ id, type, object_id: objectId, created_at: '2024-05-01T10:00:00.000Z' }) as unknown as EventModel;
const malformed = () => new UpstreamInvalidResponseError({ route: 'GET /v1/events', detail: 'event failed validation' });

/** An events API whose pages are given per object id (or one page for every id, as an upstream ignoring the filter). */
function eventsApi(pageFor: (objectId: number) => ListItem<EventModel>[]): PaymentsApi {
  return {
    events: {
      list: async (params: { objectId?: number }) => ({ items: pageFor(params.objectId!), meta: null }),
    },
  } as unknown as PaymentsApi;
}

describe('statusHistory events, per object', () => {
  it('fails only the history whose own events are malformed; the rest of the batch stands', async () => {
    const loaders = createLoaders(eventsApi((objectId) => (objectId === 1 ? [event(10, 1), malformed()] : [event(20, objectId)])), uncached);
    const [one, two, three] = await Promise.allSettled([1, 2, 3].map((id) => loaders.transactionEvents.load(id)));
    expect(one?.status).toBe('rejected');
    expect(two).toEqual({ status: 'fulfilled', value: [event(20, 2)] });
    expect(three).toEqual({ status: 'fulfilled', value: [event(20, 3)] });
  });

  it('keeps each object to its own events when the upstream ignores the filter, leaving out a malformed event that may be anyone\'s', async () => {
    const accountPage = [event(30, 2), malformed(), event(29, 1), event(28, 1, 'payout.sent')];
    const loaders = createLoaders(eventsApi(() => accountPage), uncached);
    await expect(loaders.transactionEvents.load(1)).resolves.toEqual([event(29, 1)]);
    await expect(loaders.transactionEvents.load(2)).resolves.toEqual([event(30, 2)]);
    await expect(loaders.payoutEvents.load(1)).resolves.toEqual([event(28, 1, 'payout.sent')]);
  });
});
