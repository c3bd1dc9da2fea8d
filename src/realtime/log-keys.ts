/**
 * Where the event log and the delivery ledger live in Redis. The log is partitioned by account, and every key one
 * script touches carries its partition's hash tag, so that script runs on one node once Redis is a Cluster.
 */

/** Fixed: every instance must map an account to the same partition (docs/realtime.md, The event log). */
export const LOG_PARTITIONS = 16;

export const partitionOf = (accountId: number, partitions = LOG_PARTITIONS): number => ((accountId % partitions) + partitions) % partitions;

/** Ledger keys are per object (`objectKey`: the account first); anything else lands in partition 0. */
const partitionOfObject = (objectKey: string, partitions: number): number => {
  const account = Number.parseInt(objectKey, 10);
  return Number.isSafeInteger(account) ? partitionOf(account, partitions) : 0;
};

export interface LogKeys {
  partitions: number;
  stream(partition: number): string;
  /** The partition's last sequence number, carried by each entry. */
  sequence(partition: number): string;
  claim(accountId: number, eventId: number): string;
  last(objectKey: string): string;
  /** Made once per Redis by the first instance to find none: another (or none) means the log started over. */
  epoch(): string;
}

export function logKeys(prefix: string, partitions = LOG_PARTITIONS): LogKeys {
  const tag = (partition: number) => `${prefix}{events:${partition}}:`;
  return {
    partitions,
    stream: (partition) => `${tag(partition)}log`,
    sequence: (partition) => `${tag(partition)}seq`,
    claim: (accountId, eventId) => `${tag(partitionOf(accountId, partitions))}event:${accountId}:${eventId}`,
    last: (objectKey) => `${tag(partitionOfObject(objectKey, partitions))}last:${objectKey}`,
    epoch: () => `${tag(0)}epoch`,
  };
}
