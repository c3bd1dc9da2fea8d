/** The idempotency record contract over a real redis-server. */
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';
import { recordTests } from './store.records.contract.js';

describeWith('redis-server', 'Redis idempotency records', () => {
  const client = redisClientsForSuite();
  let stores = 0;
  recordTests(() => new RedisIdempotencyStore(client(), `records-${++stores}:`));
});
