/**
 * Where the Redis idempotency store keeps a caller's records. One server: the layout every version has used, so an
 * upgrade reads the records written before it. A cluster: callers fall into partitions, and a record, its caller's
 * index and its partition's continuity marker share the partition's hash tag, so each script stays on one node
 * (docs/deployment.md, What each role needs).
 */
import { createHash } from 'node:crypto';

/** Fixed: every instance must map a caller to the same partition, and each partition's marker is checked for loss. */
export const IDEMPOTENCY_PARTITIONS = 16;

export interface IdempotencyKeys {
  /** Every continuity marker, in partition order (one on a single server). */
  markers: readonly string[];
  /** The marker a caller's records move on: its index in `markers`. */
  partitionOf(caller: string): number;
  record(caller: string, recordKey: string): string;
  callerIndex(caller: string): string;
}

/** `partitions` null: one server's layout, one marker. */
export function idempotencyKeys(prefix: string, partitions: number | null): IdempotencyKeys {
  if (partitions === null) {
    return {
      markers: Object.freeze([`${prefix}continuity`]),
      partitionOf: () => 0,
      record: (_caller, recordKey) => prefix + recordKey,
      callerIndex: (caller) => `${prefix}caller:${caller}`,
    };
  }
  const tag = (partition: number) => `${prefix}{idem:${partition}}:`;
  // A digest, not the caller id's own characters: ids that differ only at their end still spread over partitions.
  const partitionOf = (caller: string) => createHash('sha256').update(caller).digest().readUInt32BE(0) % partitions;
  return {
    markers: Object.freeze(Array.from({ length: partitions }, (_, p) => `${tag(p)}continuity`)),
    partitionOf,
    record: (caller, recordKey) => `${tag(partitionOf(caller))}${recordKey}`,
    callerIndex: (caller) => `${tag(partitionOf(caller))}caller:${caller}`,
  };
}
