/** One instance's event log (ledgerLog) over the memory ledger and the disk ledger: the log contract. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe } from 'vitest';
import { DiskLedger } from '../../../src/realtime/disk-ledger.js';
import { memoryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLogUnderTest, logTests } from './log.contract.js';

const ACCOUNT = 41;

describe('the event log over the memory ledger', () => {
  logTests(() => ledgerLogUnderTest(memoryLedger(), ACCOUNT), ACCOUNT);
});

describe('the event log over the disk ledger', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'log-disk-'));
  const opened: DiskLedger[] = [];
  let n = 0;
  afterAll(async () => {
    for (const ledger of opened) await ledger.close();
    rmSync(root, { recursive: true, force: true });
  });
  logTests(() => {
    const ledger = DiskLedger.open(path.join(root, `d${(n += 1)}`), { maxBytes: 1024 * 1024, accountMaxBytes: 1024 * 1024 });
    opened.push(ledger);
    return ledgerLogUnderTest(ledger, ACCOUNT);
  }, ACCOUNT);
});
