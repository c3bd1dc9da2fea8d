/**
 * The catch-up read of `paymentEvent(after:)` (src/realtime/resume.ts) over
 * pages that move while they are read: events created meanwhile push older
 * ones down, so the top of page 2 repeats the bottom of page 1.
 */
import { describe, expect, it } from 'vitest';
import { resumeAfter } from '../../../src/realtime/resume.js';
import type { EventModel } from '../../../src/upstream/models.js';

const event = (id: number) => ({ id, type: 'transaction.approved', object_id: id }) as unknown as EventModel;
const ids = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

async function* nothingLive(): AsyncGenerator<number> {}

describe('resuming over pages that move while they are read', () => {
  it('replays each missed event once, oldest first', async () => {
    // Page 1 as read: 150..51. Then two events are created, so page 2 starts at 52 instead of 50.
    const pages: Record<number, number[]> = { 1: ids(150, 51), 2: ids(52, 1) };
    const stream = await resumeAfter(nothingLive(), {
      afterId: 40,
      listPage: async (page) => ({ items: (pages[page] ?? []).map(event), meta: { currentPage: page, perPage: 100, totalPages: 2, totalCount: 152, nextPage: page < 2 ? page + 1 : null } }),
      toValue: (e) => e.id,
      idOf: (id) => id,
      tooFarBack: () => new Error('too far back'),
    });
    const replayed: number[] = [];
    for await (const id of stream) replayed.push(id);
    expect(replayed).toEqual(ids(150, 41).reverse());
  });
});
