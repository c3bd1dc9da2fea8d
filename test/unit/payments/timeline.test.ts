import { describe, expect, it } from 'vitest';
import { buildTimeline } from '../../../src/payments/timeline.js';
import type { EventModel } from '../../../src/upstream/models.js';

const event = (id: number, type: string, at: string): EventModel => ({ id, type, object_id: 1, created_at: at });

describe('buildTimeline', () => {
  const t = {
    status: 'refunded',
    created_at: '2024-05-01T10:00:00Z',
    updated_at: '2024-05-01T12:00:00Z',
    approved_at: '2024-05-01T11:00:00Z',
    refunded_at: '2024-05-01T12:00:00Z',
  };

  it('orders status events oldest first, whatever order the upstream lists them in, and skips non-status events', () => {
    const events = [
      event(4, 'transaction.refunded', '2024-05-01T12:00:00Z'),
      event(3, 'transaction.updated', '2024-05-01T11:30:00Z'),
      event(2, 'transaction.approved', '2024-05-01T11:00:00Z'),
      event(1, 'transaction.created', '2024-05-01T10:00:00Z'),
    ];
    expect(buildTimeline('transaction', t, events).map((e) => [e.status, e.at, e.event?.id ?? null])).toEqual([
      ['pending', '2024-05-01T10:00:00Z', 1],
      ['approved', '2024-05-01T11:00:00Z', 2],
      ['refunded', '2024-05-01T12:00:00Z', 4],
    ]);
  });

  it('falls back on the object timestamps when events are missing, with no event', () => {
    expect(buildTimeline('transaction', t, []).map((e) => [e.status, e.at, e.event])).toEqual([
      ['pending', '2024-05-01T10:00:00Z', null],
      ['approved', '2024-05-01T11:00:00Z', null],
      ['refunded', '2024-05-01T12:00:00Z', null],
    ]);
  });

  it('ends with the current status even when nothing stamped it', () => {
    const p = { status: 'processing', created_at: '2024-05-01T10:00:00Z', updated_at: '2024-05-01T10:05:00Z' };
    expect(buildTimeline('payout', p, []).map((e) => [e.status, e.at])).toEqual([
      ['pending', '2024-05-01T10:00:00Z'],
      ['processing', '2024-05-01T10:05:00Z'],
    ]);
  });
});
