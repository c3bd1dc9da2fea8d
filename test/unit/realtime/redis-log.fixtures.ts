/** What the Redis event log's suites append and read back: an approval webhook, and a log line as parsed. */
import type { PaymentEvent } from '../../../src/realtime/events.js';

/** A `transaction.approved` webhook of `accountId`, about transaction `objectId` (none when null), updated `at`. */
export const approvedWebhook = (accountId: number, id: number, objectId: number | null, at: string): Omit<PaymentEvent, 'current'> => ({
  id,
  type: 'transaction.approved',
  object: objectId === null ? null : 'transaction',
  objectId,
  accountId,
  entity: objectId === null ? null : { id: objectId, status: 'approved', updated_at: at },
  createdAt: at,
});

export interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}
