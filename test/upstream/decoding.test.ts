import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/upstream/decimal.js';
import { HTTP_CLIENTS, everyItem, UpstreamInvalidResponseError, UpstreamNotFoundError } from '../../src/upstream/index.js';
import {
  aCurrency,
  aCustomer,
  aLog,
  aPageMeta,
  aPaymentIntent,
  aPayout,
  aTransaction,
  aWebhook,
  anAccount,
  anEvent,
  enveloped,
} from './fixtures.js';
import { useUpstreamHarness } from './harness.js';

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  const h = useUpstreamHarness(httpClient);

  describe('single resources', () => {
    it.each([
      ['enveloped under v1/transaction', enveloped('transaction', aTransaction())],
      ['bare', aTransaction()],
      ['an array of one', [aTransaction()]],
      ['an enveloped list of one', enveloped('transactions', [aTransaction()])],
    ])('decodes a transaction sent %s', async (_shape, json) => {
      h.upstream.replyWith({ json });

      const trx = await h.api.transactions.retrieve(101);

      expect(trx).toMatchObject({ id: 101, status: 'pending', custom_metadata: { order: 42 } });
      expect(String(trx.amount)).toBe('2500');
    });

    it.each([
      ['as the spec shows it, an array of one', [aCurrency({ id: 4 })]],
      ['enveloped under v1/currency', enveloped('currency', aCurrency({ id: 4 }))],
    ])('reads a currency by id through GET /v1/currencies/{id}, sent %s', async (_shape, json) => {
      h.upstream.replyWith({ json });

      await expect(h.api.currencies.retrieve(4)).resolves.toMatchObject({ id: 4, iso: 'XOF' });
      expect(h.upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/currencies/4']);
    });

    it('takes the element with the requested id when an array of several is returned for one id', async () => {
      h.upstream.replyWith({ json: [aWebhook({ id: 11 }), aWebhook({ id: 12 })] });
      await expect(h.api.webhooks.retrieve(12)).resolves.toMatchObject({ id: 12 });

      h.upstream.replyWith({ json: [aWebhook({ id: 11 }), aWebhook({ id: 12 })] });
      await expect(h.api.webhooks.retrieve(11)).resolves.toMatchObject({ id: 11 });
    });

    it('reads the spec\'s array answers of events and logs by id, the same id written as a decimal token included', async () => {
      h.upstream.replyWith({ json: [anEvent({ id: 30 }), anEvent({ id: 31 })] });
      await expect(h.api.events.retrieve(31)).resolves.toMatchObject({ id: 31 });

      h.upstream.replyWith({ text: JSON.stringify([aLog({ id: 41 }), aLog({ id: 40 })]).replace('"id":40', '"id":40.0') });
      await expect(h.api.logs.retrieve(40)).resolves.toMatchObject({ id: 40 });
    });

    it.each([
      ['an array of one other object', [aWebhook({ id: 12 })]],
      ['an array of others', [aWebhook({ id: 12 }), aWebhook({ id: 13 })]],
      ['another object, bare', aWebhook({ id: 12 })],
      ['another object, enveloped', enveloped('webhook', aWebhook({ id: 12 }))],
    ])('refuses %s as the answer to a read by id, naming no value', async (_shape, json) => {
      h.upstream.replyWith({ json });

      const error = await h.api.webhooks.retrieve(11).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
      expect(String((error as Error).message)).toMatch(/requested/);
      expect(String((error as Error).message)).not.toContain('12');
    });

    it.each([
      ['an empty array', []],
      ['an empty enveloped list', enveloped('webhooks', [])],
    ])('treats %s as not found', async (_shape, json) => {
      h.upstream.replyWith({ json });

      await expect(h.api.webhooks.retrieve(11)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    });

    it.each([
      ['enveloped under v1/account', enveloped('account', anAccount())],
      ['as a list v1/accounts of one', enveloped('accounts', [anAccount()])],
    ])('reads the current account %s', async (_shape, json) => {
      h.upstream.replyWith({ json });

      await expect(h.api.accounts.current()).resolves.toMatchObject({ id: 1, name: 'Demo shop' });
    });

    // Zoneless `YYYY-MM-DD HH:MM:SS` dates become RFC 3339 on every account-owned object (docs/graphql-contract.md, "Upstream values as sent").
    const zoneless = { account_id: 1, created_at: '2024-05-01 10:00:00', updated_at: '2024-05-02 11:00:00' };
    const normalised = { account_id: 1, created_at: '2024-05-01T10:00:00Z', updated_at: '2024-05-02T11:00:00Z' };
    it.each([
      ['customer', aCustomer({ ...zoneless, deleted_at: '2024-05-03 12:00:00' }), () => h.api.customers.retrieve(7), '2024-05-03T12:00:00Z'],
      ['event', anEvent({ ...zoneless, deleted_at: '2024-05-03 12:00:00' }), () => h.api.events.retrieve(31), '2024-05-03T12:00:00Z'],
      ['webhook', aWebhook(zoneless), () => h.api.webhooks.retrieve(11), undefined],
      ['log', aLog(zoneless), () => h.api.logs.retrieve(41), undefined],
    ])('normalises the dates every %s carries', async (_kind, json, read, deletedAt) => {
      h.upstream.replyWith({ json });

      const decoded = await read();

      expect(decoded).toMatchObject(normalised);
      expect((decoded as { deleted_at?: unknown }).deleted_at).toBe(deletedAt);
    });

    it('normalises the dates of each currency and refuses an account id that is not an integer', async () => {
      h.upstream.replyWith({ json: enveloped('currencies', [aCurrency(zoneless)]) });
      await expect(h.api.currencies.list()).resolves.toMatchObject([normalised]);

      // A malformed item fails only its own place in the list.
      h.upstream.replyWith({ json: enveloped('currencies', [aCurrency({ account_id: 'acct_1' })]) });
      const [bad] = await h.api.currencies.list();
      expect(bad).toBeInstanceOf(UpstreamInvalidResponseError);
    });

    it('keeps the id of a malformed list item when the id itself is sound, so pages can place it', async () => {
      h.upstream.replyWith({ json: enveloped('transactions', [aTransaction({ id: 7, status: 42 }), aTransaction({ id: 'x' }), aTransaction({ id: 5 })]) });
      const page = await h.api.transactions.list({ page: 1, perPage: 3 });
      expect(page.items.map((item) => (item instanceof UpstreamInvalidResponseError ? `bad:${item.itemId}` : item.id))).toEqual(['bad:7', 'bad:undefined', 5]);
    });

    it('reads the flat token response', async () => {
      h.upstream.replyWith({ json: { token: 'tok_1', url: 'https://checkout.example/tok_1' } });

      await expect(h.api.transactions.createToken(101)).resolves.toEqual({
        token: 'tok_1',
        url: 'https://checkout.example/tok_1',
      });
    });
  });

  describe('lists', () => {
    it('decodes an enveloped list and its meta into camelCase', async () => {
      h.upstream.replyWith({ json: enveloped('transactions', [aTransaction({ id: 1 }), aTransaction({ id: 2 })], { meta: aPageMeta() }) });

      const page = await h.api.transactions.list({ page: 2 });

      expect(everyItem(page.items).map((t) => t.id)).toEqual([1, 2]);
      expect(page.meta).toEqual({ currentPage: 2, perPage: 25, totalPages: 4, totalCount: 90, nextPage: 3 });
    });

    it('maps a missing next page to null', async () => {
      h.upstream.replyWith({ json: enveloped('payouts', [aPayout()], { meta: aPageMeta({ next_page: null, total_pages: 2 }) }) });

      const page = await h.api.payouts.search();

      expect(page.meta).toMatchObject({ nextPage: null, totalPages: 2 });
    });

    it.each([
      ['an enveloped list without meta', enveloped('transactions', [aTransaction()])],
      ['a bare array', [aTransaction()]],
    ])('decodes %s with null meta', async (_shape, json) => {
      h.upstream.replyWith({ json });

      const page = await h.api.transactions.search({ status: 'pending' });

      expect(page.items).toHaveLength(1);
      expect(page.meta).toBeNull();
    });

    it.each([
      ['enveloped without meta', enveloped('currencies', [aCurrency(), aCurrency({ id: 2, iso: 'EUR' })])],
      ['as a bare array', [aCurrency(), aCurrency({ id: 2, iso: 'EUR' })]],
    ])('lists currencies sent %s', async (_shape, json) => {
      h.upstream.replyWith({ json });

      const currencies = await h.api.currencies.list();

      expect(everyItem(currencies).map((c) => c.iso)).toEqual(['XOF', 'EUR']);
    });

    it('lists webhooks from an enveloped list', async () => {
      h.upstream.replyWith({ json: enveloped('webhooks', [aWebhook()]) });

      await expect(h.api.webhooks.list()).resolves.toMatchObject([{ id: 11, url: 'https://shop.example/hooks' }]);
    });

    it('keeps the other items of a page and puts a malformed item\'s error in its place, naming its index', async () => {
      h.upstream.replyWith({ json: enveloped('transactions', [aTransaction({ id: 1 }), aTransaction({ amount: 'lots' }), aTransaction({ id: 3 })]) });

      const page = await h.api.transactions.list();

      expect(page.items).toHaveLength(3);
      expect(page.items[0]).toMatchObject({ id: 1 });
      expect(page.items[1]).toBeInstanceOf(UpstreamInvalidResponseError);
      expect((page.items[1] as Error).message).toContain('[1].amount');
      expect((page.items[1] as Error).message).not.toContain('lots');
      expect(page.items[2]).toMatchObject({ id: 3 });
      expect(() => everyItem(page.items)).toThrow(UpstreamInvalidResponseError);
    });

    it('refuses an item nested thousands of levels deep in its place, the others standing', async () => {
      // Built as text: JSON.stringify itself overflows the stack on such a value.
      const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
      const items = [aTransaction({ id: 1 }), aTransaction({ id: 2, metadata: { deep: 'HERE' } }), aTransaction({ id: 3 })];
      h.upstream.replyWith({ text: JSON.stringify(enveloped('transactions', items)).replace('"HERE"', deep) });

      const page = await h.api.transactions.list();

      expect(page.items[0]).toMatchObject({ id: 1 });
      expect(page.items[1]).toBeInstanceOf(UpstreamInvalidResponseError);
      expect((page.items[1] as Error).message).toContain('[1] (nested deeper than 1000 levels)');
      expect((page.items[1] as UpstreamInvalidResponseError).itemId).toBe(2);
      expect(page.items[2]).toMatchObject({ id: 3 });

      h.upstream.replyWith({ text: JSON.stringify(enveloped('transaction', aTransaction({ id: 101, metadata: { deep: 'HERE' } }))).replace('"HERE"', deep) });
      await expect(h.api.transactions.retrieve(101)).rejects.toBeInstanceOf(UpstreamInvalidResponseError);
    });

    // The item is level 1 and its metadata level 2: metadata of 999 nested objects makes 1,000 levels, the most taken.
    it.each([
      ['JSON.parse', '2500'],
      ['lossless-json', '9007199254740993'],
    ])('takes an item nested 1,000 levels and refuses one of 1,001, whichever parser reads the body (%s), a number at the bottom not counting', async (_parser, amount) => {
      const nested = (objects: number) => `${'{"a":'.repeat(objects)}${amount}${'}'.repeat(objects)}`;
      const items = [aTransaction({ id: 1, metadata: { deep: 'AT' } }), aTransaction({ id: 2, metadata: { deep: 'OVER' } })];
      const text = JSON.stringify(enveloped('transactions', items), null, 0)
        .replace('{"deep":"AT"}', nested(999))
        .replace('{"deep":"OVER"}', nested(1000))
        .replaceAll('"amount":2500', `"amount":${amount}`);
      h.upstream.replyWith({ text });

      const page = await h.api.transactions.list();

      expect(page.items[0]).toMatchObject({ id: 1 });
      expect(String((page.items[0] as { amount: unknown }).amount)).toBe(amount);
      expect(page.items[1]).toBeInstanceOf(UpstreamInvalidResponseError);
      expect((page.items[1] as Error).message).toContain('(nested deeper than 1000 levels)');
    });

    it('reads a page meta beside an unknown field nested too deep, when lossless-json reads the body', async () => {
      const meta = '{"current_page":2,"per_page":1,"next_page":3,"x":' + `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}}`;
      const body = JSON.stringify(enveloped('transactions', [aTransaction({ id: 1 })])).replace('"amount":2500', '"amount":9007199254740993');
      h.upstream.replyWith({ text: body.replace(/}$/, `,"meta":${meta}}`) });

      const page = await h.api.transactions.list({ page: 2, perPage: 1 });

      expect(page.meta).toMatchObject({ currentPage: 2, perPage: 1, nextPage: 3 });
      expect(String((page.items[0] as { amount: unknown }).amount)).toBe('9007199254740993');
    });

    it('keeps the other items of a plain list (currencies) the same way', async () => {
      h.upstream.replyWith({ json: [aCurrency(), { id: 'x', iso: 'EUR' }] });

      const currencies = await h.api.currencies.list();

      expect(currencies[0]).toMatchObject({ iso: 'XOF' });
      expect(currencies[1]).toBeInstanceOf(UpstreamInvalidResponseError);
    });

    it("fails a write's answer as a whole when one item is malformed: what the upstream did must be known whole", async () => {
      h.upstream.replyWith({ json: enveloped('payouts', [aPayout({ status: 'started' }), aPayout({ id: 'x' })]) });

      await expect(h.api.payouts.start([{ id: 201 }, { id: 202 }])).rejects.toBeInstanceOf(UpstreamInvalidResponseError);
    });

    it('rejects an object where a page is expected', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await expect(h.api.transactions.list()).rejects.toBeInstanceOf(UpstreamInvalidResponseError);
    });
  });

  describe('array responses', () => {
    it.each([
      ['a bare array (spec)', [aPaymentIntent()]],
      ['a single flat object (some SDK versions)', aPaymentIntent()],
    ])('decodes the send response given as %s', async (_shape, json) => {
      h.upstream.replyWith({ json });

      const intents = await h.api.transactions.send('mtn', { token: 'tok_1' });

      expect(intents).toEqual([expect.objectContaining({ reference: 'pi_1', status: 'pending' })]);
    });

    it('decodes the started payouts from an enveloped list', async () => {
      h.upstream.replyWith({ json: enveloped('payouts', [aPayout({ status: 'started' }), aPayout({ id: 202, status: 'scheduled' })]) });

      const payouts = await h.api.payouts.start([{ id: 201 }, { id: 202, scheduledAt: '2030-01-01T00:00:00Z' }]);

      expect(payouts.map((p) => [p.id, p.status])).toEqual([
        [201, 'started'],
        [202, 'scheduled'],
      ]);
    });
  });

  describe('amounts, whichever parser reads the body', () => {
    it('keeps every digit of an amount token, exact or not for a JS number, beside strings that look like numbers', async () => {
      const token = fc
        .tuple(fc.stringMatching(/^(0|[1-9][0-9]{0,22})$/), fc.option(fc.stringMatching(/^[0-9]{1,22}$/), { nil: undefined }))
        .map(([int, frac]) => (frac === undefined ? int : `${int}.${frac}`));
      await fc.assert(
        fc.asyncProperty(token, token, async (amount, fees) => {
          // A time and a long digit run inside strings: neither is a number token.
          const body = JSON.stringify({ 'v1/transaction': aTransaction({ description: `at 10:07 ref:${amount}`, amount: 0, fees: 0 }) })
            .replace('"amount":0', `"amount":${amount}`)
            .replace('"fees":0', `"fees":${fees}`);
          h.upstream.replyWith({ text: body });
          const trx = await h.api.transactions.retrieve(101);
          expect(String(trx.amount)).toBe(Decimal.fromJsonNumber(amount).toString());
          expect(String(trx.fees)).toBe(Decimal.fromJsonNumber(fees).toString());
          expect(trx.description).toBe(`at 10:07 ref:${amount}`);
        }),
        { numRuns: 60 },
      );
    });
  });
});
