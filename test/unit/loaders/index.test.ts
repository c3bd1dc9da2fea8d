/**
 * One operation's loaders (src/loaders) are made on first read, and each is
 * made once: none before, and a second read is the same DataLoader, so an id
 * asked twice in an operation is read once.
 */
import { describe, expect, it, vi } from 'vitest';
import { uncached } from '../../../src/cache/index.js';
import { UpstreamNotFoundError } from '../../../src/upstream/errors.js';
import { createLoaders, type Loaders } from '../../../src/loaders/index.js';
import type { PaymentsApi } from '../../../src/upstream/api.js';

// Every DataLoader made, counted: the real class, one counter.
const made = vi.hoisted(() => ({ loaders: 0 }));
vi.mock('dataloader', async (importOriginal) => {
  const Real = (await importOriginal<{ default: typeof import('dataloader') }>()).default;
  class Counted<K, V, C = K> extends Real<K, V, C> {
    constructor(...args: ConstructorParameters<typeof Real<K, V, C>>) {
      super(...args);
      made.loaders += 1;
    }
  }
  return { default: Counted };
});

describe('operation loaders', () => {
  it('each loader is one instance for the whole operation, and touches the API only when it loads', async () => {
    const touched: string[] = [];
    const reads: unknown[] = [];
    const api = new Proxy({} as PaymentsApi, {
      get: (_target, resource) => {
        touched.push(String(resource));
        return { retrieve: async (id: unknown) => (reads.push(id), { id, email: 'a@b.c' }) };
      },
    });
    const loaders = createLoaders(api, uncached);
    expect(made.loaders).toBe(0);
    void loaders.customer;
    expect(made.loaders).toBe(1);
    const names: (keyof Loaders)[] = ['transaction', 'payout', 'customer', 'webhook', 'event', 'log', 'currencyById', 'currencyByIso', 'currencies', 'transactionEvents', 'payoutEvents'];
    for (const name of names) expect(loaders[name]).toBe(loaders[name]);
    expect(made.loaders).toBe(names.length);
    expect(touched).toEqual([]);
    await Promise.all([loaders.customer.load(7), loaders.customer.load(7)]);
    await loaders.customer.load(7);
    expect(reads).toEqual([7]);
    expect(touched).toEqual(['customers']);
  });

  it('with no entity cache, an unknown id is null and a failed read its error, in place, beside the others', async () => {
    const failure = new Error('upstream down');
    const api = {
      transactions: {
        retrieve: async (id: number) => {
          if (id === 1) throw new UpstreamNotFoundError({ route: 'GET /v1/transactions/:id' });
          if (id === 2) throw failure;
          return { id, status: 'pending' };
        },
      },
    } as unknown as PaymentsApi;
    const loaders = createLoaders(api, uncached);
    expect(await loaders.transaction.loadMany([1, 2, 3])).toEqual([null, failure, { id: 3, status: 'pending' }]);
  });
});
