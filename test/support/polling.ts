/** Frontends polling one payment's status, as a checkout page does: used by the polling suites and bench. */

export const STATUS_QUERY = 'query ($id: ID!) { transaction(id: $id) { id status description } }';

export interface StatusAnswer {
  /** `null` when the transaction was not found for this key, or the answer had errors. */
  status: string | null;
  description: string | null;
  found: boolean;
  errors: unknown[] | undefined;
  cacheControl: string | null;
}

/** One poll; `url` is a gateway's `/graphql`. */
export async function readStatus(url: string, key: string, id: number): Promise<StatusAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: STATUS_QUERY, variables: { id: String(id) } }),
  });
  const body = (await res.json()) as { data?: { transaction: { status: string; description: string | null } | null }; errors?: unknown[] };
  const transaction = body.data?.transaction ?? null;
  return { status: transaction?.status ?? null, description: transaction?.description ?? null, found: transaction !== null, errors: body.errors, cacheControl: res.headers.get('cache-control') };
}

export interface PollersOptions {
  /** One gateway, or several: poller i polls `urls[i % urls.length]`. */
  url: string | readonly string[];
  key: string;
  id: number;
  count: number;
  intervalMs: number;
  durationMs: number;
  /** Each answer, with when its poll started (epoch ms). */
  onAnswer?: (status: string | null, startedAt: number, answeredAt: number) => void;
}

export interface PollersRun {
  polls: number;
  statuses: Set<string | null>;
  cacheControl: Set<string | null>;
  errors: unknown[];
}

/** `count` pollers, each polling every `intervalMs` (from the start of its last poll) for `durationMs`. */
export async function pollers(o: PollersOptions): Promise<PollersRun> {
  const urls = typeof o.url === 'string' ? [o.url] : o.url;
  const run: PollersRun = { polls: 0, statuses: new Set(), cacheControl: new Set(), errors: [] };
  const until = Date.now() + o.durationMs;
  const poller = async (n: number) => {
    // Spread over the interval, as pages opened at different moments are.
    await new Promise((r) => setTimeout(r, (o.intervalMs * n) / o.count));
    while (Date.now() < until) {
      const startedAt = Date.now();
      try {
        const answer = await readStatus(urls[n % urls.length]!, o.key, o.id);
        run.polls += 1;
        run.statuses.add(answer.status);
        run.cacheControl.add(answer.cacheControl);
        if (answer.errors) run.errors.push(...answer.errors);
        o.onAnswer?.(answer.status, startedAt, Date.now());
      } catch (error) {
        run.errors.push(error instanceof Error ? error.message : String(error));
      }
      await new Promise((r) => setTimeout(r, Math.max(0, startedAt + o.intervalMs - Date.now())));
    }
  };
  await Promise.all(Array.from({ length: o.count }, (_, n) => poller(n)));
  return run;
}

/** Polls until the status is `wanted`: when the first poll that showed it was answered (epoch ms). */
export async function pollFor(url: string, key: string, id: number, wanted: string, o: { intervalMs: number; timeoutMs: number }): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const startedAt = Date.now();
    const answer = await readStatus(url, key, id);
    if (answer.status === wanted) return Date.now();
    if (Date.now() > deadline) throw new Error(`status still ${answer.status} after ${o.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + o.intervalMs - Date.now())));
  }
}
