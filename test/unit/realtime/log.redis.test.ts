/** The Redis event log production appends through, on a real redis-server: the log contract. */
import { describe } from 'vitest';
import { describeWith } from '../../support/tools.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { logTests, redisLogUnderTest } from './log.contract.js';

const ACCOUNT = 41;

describeWith('redis-server', 'the Redis event log', () => {
  const client = redisClientsForSuite();
  let n = 0;
  describe('one instance', () => {
    logTests(() => redisLogUnderTest(`redis://127.0.0.1:${client().options.port}`, `log-contract-${(n += 1)}:`, ACCOUNT), ACCOUNT);
  });
});
