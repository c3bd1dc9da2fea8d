/**
 * The event log's read on a Redis Cluster, until the reader reads per partition: each stream is its own slot, and
 * one XREAD over several is refused (CROSSSLOT), so each stream is read alone. Not blocking: a blocking read would
 * hold its node's one connection for the others; when every stream came back empty it waits a moment instead.
 */
import type { RedisClient } from '../redis.js';

type Entries = [string, [string, string[]][]][];

const POLL_MS = 50;

export async function readEachStream(reader: RedisClient, count: number, streams: readonly string[], positions: readonly string[]): Promise<Entries | null> {
  const replies = (await Promise.all(streams.map((stream, p) => reader.xread('COUNT', count, 'STREAMS', stream, positions[p]!)))) as (Entries | null)[];
  const found = replies.flatMap((reply) => reply ?? []);
  if (found.length > 0) return found;
  await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  return null;
}
