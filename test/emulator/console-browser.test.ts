/**
 * The emulator console in a real headless Chromium, against `npm start`
 * (embedded emulator): a transaction created through the gateway shows up as
 * waiting, its Approve button settles it, a transactionUpdated subscriber on
 * the gateway receives APPROVED, and the console lists the signed webhook
 * delivery that carried it; clicked with a person's timing across the
 * page's refreshes, no press is lost.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { disposeLive, subscribeLive, wsClient } from '../realtime/support.js';
import { describeWith, launchChromium } from '../support/tools.js';

/** Presses of the click test, one per payment. */
const CLICKS = 40;
const HOSTILE = '<img src=x onerror="globalThis.hostileRan=true">';

const consolePrinted = (out: string) => {
  const welcome = welcomePrinted(out);
  const consoleUrl = /Console\s+(http:\/\/\S+\/_emulator\/console#token=\S+)/.exec(out)?.[1];
  return welcome && consoleUrl ? { ...welcome, consoleUrl } : null;
};

describeWith('chromium', 'the emulator console in a browser', () => {
  let started: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    started = await spawnMain({ LOG_LEVEL: 'warn', EMULATOR_PORT: '0' }, consolePrinted);
    browser = await launchChromium();
  }, 40_000);

  afterAll(async () => {
    await browser?.close();
    await started?.stop();
  });

  it('approves a waiting transaction with one click, and the gateway subscriber sees APPROVED', async () => {
    const { url, key, consoleUrl } = started.found as { url: string; key: string; consoleUrl: string };
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        // Hostile text in a description must show as text, never run in the console page.
        query:
          'mutation ($d: String!) { createTransaction(input: { amountDecimal: "1500", description: $d, currency: { iso: "XOF" }, customer: { firstname: "Kofi", lastname: "Boateng", email: "kofi.console@example.com" } }) { transaction { id status } } }',
        variables: { d: HOSTILE },
      }),
    });
    const created = (await res.json()) as { data: { createTransaction: { transaction: { id: string; status: string } } } };
    const { id, status } = created.data.createTransaction.transaction;
    expect(status).toBe('PENDING');

    const { client } = wsClient(url.replace(/^http/, 'ws'), key);
    const sub = await subscribeLive<{ transactionUpdated: { id: string; status: string } }>(url, client, 'subscription ($id: ID) { transactionUpdated(id: $id) { id status } }', { id });

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(consoleUrl);
    const approve = page.locator(`#transactions button[data-action="approved"][data-id="${id}"]`);
    await approve.waitFor({ timeout: 10_000 });
    expect(await page.locator('#transactions').innerText()).toContain(HOSTILE);
    expect(await page.evaluate(() => (globalThis as { hostileRan?: boolean }).hostileRan)).toBeUndefined();
    await approve.click();

    // The subscription starts with the current state (PENDING); the click brings APPROVED next.
    expect((await sub.nth(1, 10_000)).transactionUpdated).toEqual({ id, status: 'PENDING' });
    expect((await sub.nth(2, 10_000)).transactionUpdated).toEqual({ id, status: 'APPROVED' });
    // Settled, so no longer listed as waiting; the webhook that carried it is listed with its signature header.
    await expect.poll(() => page.locator(`#transactions button[data-id="${id}"]`).count(), { timeout: 5_000 }).toBe(0);
    await expect.poll(() => page.locator('#deliveries').innerText(), { timeout: 5_000 }).toMatch(/transaction\.approved[\s\S]*t=\d+,s=[0-9a-f]{64}/);
    expect(await page.locator('#problem').innerText()).toBe('');
    expect(problems).toEqual([]);
    if (process.env.CONSOLE_SCREENSHOT) await page.screenshot({ path: process.env.CONSOLE_SCREENSHOT, fullPage: true });
    await disposeLive(url, client);
  });

  it('a double click on Approve settles that one payment: its row stays with the outcome, and the next row does not move', async () => {
    const { url, key, consoleUrl } = started.found as { url: string; key: string; consoleUrl: string };
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query, variables }) });
      return ((await res.json()) as { data: Record<string, { id: string; status: string; transaction: { id: string; status: string } }> }).data;
    };
    const create = async (description: string) =>
      (await gql('mutation ($d: String!) { createTransaction(input: { amountDecimal: "900", description: $d, currency: { iso: "XOF" } }) { transaction { id status } } }', { d: description }))
        .createTransaction!.transaction.id;
    const first = await create('double click, first');
    const second = await create('double click, second');

    const page = await browser.newPage();
    await page.goto(consoleUrl);
    const approveFirst = page.locator(`#transactions button[data-action="approved"][data-id="${first}"]`);
    const approveSecond = page.locator(`#transactions button[data-action="approved"][data-id="${second}"]`);
    await approveSecond.waitFor({ timeout: 10_000 });
    const before = await approveSecond.boundingBox();
    // The table refreshes every second: a box read during a refresh is null, so read it once it is there.
    let target: { x: number; y: number; width: number; height: number } | null = null;
    await expect.poll(async () => (target = await approveFirst.boundingBox()), { timeout: 10_000 }).not.toBeNull();
    target = target!;
    // Two clicks at one spot, as a double click lands them.
    await page.mouse.dblclick(target.x + target.width / 2, target.y + target.height / 2);

    const firstRow = page.locator(`#transactions tr[data-id="${first}"]`);
    await expect.poll(() => firstRow.innerText(), { timeout: 5_000 }).toContain('approved');
    // Refreshes come every second: the row must outlive them.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await firstRow.innerText()).toContain('approved');
    // Polled: a box read while the table refreshes is null.
    await expect.poll(() => approveSecond.boundingBox(), { timeout: 5_000 }).toEqual(before);
    const status = async (id: string) => (await gql('query ($id: ID!) { transaction(id: $id) { id status } }', { id })).transaction!.status;
    expect(await status(first)).toBe('APPROVED');
    expect(await status(second)).toBe('PENDING');
    expect(await page.locator('#problem').innerText()).toBe('');
    await page.close();
  });

  it("keeps every click pressed with a person's timing across the page's refreshes: each one settles its payment", async () => {
    const { url, key, consoleUrl } = started.found as { url: string; key: string; consoleUrl: string };
    const emulator = new URL(consoleUrl).origin;
    const adminToken = new URLSearchParams(new URL(consoleUrl).hash.slice(1)).get('token')!;
    const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${emulator}/_emulator/${path}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-emulator-admin-token': adminToken },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as T;
    };
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query, variables }) });
      return ((await res.json()) as { data: Record<string, { status: string; transaction: { id: string } }> }).data;
    };
    const ACTIONS = ['approved', 'declined', 'canceled'] as const;
    const ids: string[] = [];
    for (let i = 0; i < CLICKS; i++) {
      const made = await gql('mutation ($d: String!) { createTransaction(input: { amountDecimal: "700", description: $d, currency: { iso: "XOF" } }) { transaction { id } } }', { d: `click ${i}` });
      ids.push(made.createTransaction!.transaction.id);
    }

    const page = await browser.newPage({ viewport: { width: 1280, height: 3200 } });
    // The test's own watch on the page's clock: when each refresh is due, and when each one's answer arrives.
    await page.addInitScript(() => {
      // In the page (no DOM types here), on the page's own clock: when each refresh fires (setInterval
      // wrapped), when each refresh's list of waiting payments is answered (fetch wrapped), and each press.
      type Press = { down: number; up: number };
      const scope = globalThis as unknown as {
        setInterval: (fn: () => void, ms: number) => unknown;
        fetch: (input: string, init?: unknown) => Promise<unknown>;
        addEventListener: (type: string, fn: () => void, capture: boolean) => void;
        refreshTicks: number[];
        pressesAcrossRefresh: () => number;
      };
      const every = scope.setInterval.bind(scope);
      const fetchIt = scope.fetch.bind(scope);
      const ticks: number[] = (scope.refreshTicks = []);
      const answers: number[] = [];
      const presses: Press[] = [];
      scope.setInterval = (fn, ms) => every(() => (ticks.push(Date.now()), fn()), ms);
      scope.fetch = (input, init) => {
        const answered = fetchIt(input, init);
        if (String(input).endsWith('/pending')) void answered.then(() => answers.push(Date.now()), () => undefined);
        return answered;
      };
      scope.addEventListener('mousedown', () => presses.push({ down: Date.now(), up: Infinity }), true);
      scope.addEventListener('mouseup', () => (presses.at(-1)!.up = Date.now()), true);
      scope.pressesAcrossRefresh = () => presses.filter((p) => answers.some((t) => t > p.down && t < p.up)).length;
    });
    await page.goto(consoleUrl);
    const button = (id: string, action: string) => page.locator(`#transactions button[data-action="${action}"][data-id="${id}"]`);
    await button(ids.at(-1)!, 'approved').waitFor({ timeout: 10_000 });

    // A person's press: on the button, down, 80 to 150 ms, up; timed to start just before a refresh is due.
    const press = async (target: { x: number; y: number; width: number; height: number }) => {
      const ticks = await page.evaluate(() => (globalThis as unknown as { refreshTicks: number[] }).refreshTicks.slice(-1));
      const due = ticks[0]! + 1000;
      let at = due - 10 - Math.random() * 40;
      while (at < Date.now() + 20) at += 1000;
      await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2);
      await new Promise((resolve) => setTimeout(resolve, at - Date.now()));
      await page.mouse.down();
      await new Promise((resolve) => setTimeout(resolve, 80 + Math.random() * 70));
      await page.mouse.up();
    };
    const box = async (locator: ReturnType<typeof button>) => {
      // Polled: the switches lie below the fold, and a box read while a refresh replaces the element is null.
      let found: { x: number; y: number; width: number; height: number } | null = null;
      const read = async () => {
        await locator.scrollIntoViewIfNeeded({ timeout: 1_000 }).catch(() => undefined);
        return (found = await locator.boundingBox());
      };
      await expect.poll(read, { timeout: 10_000 }).not.toBeNull();
      return found!;
    };

    for (const [i, id] of ids.entries()) await press(await box(button(id, ACTIONS[i % 3]!)));
    // Every press counted by the emulator: none of the payments is waiting any more, each in the state its button asked for.
    const waiting = () => admin<{ transactions: { id: number }[] }>('GET', 'pending').then((w) => w.transactions.map((t) => String(t.id)).filter((id) => ids.includes(id)));
    await expect.poll(waiting, { timeout: 5_000 }).toEqual([]);
    const statuses: string[] = [];
    for (const id of ids) statuses.push((await gql('query ($id: ID!) { transaction(id: $id) { status } }', { id })).transaction!.status);
    expect(statuses).toEqual(ids.map((_, i) => ACTIONS[i % 3]!.toUpperCase()));
    // Four presses of one fault switch: on, off, on, off, each seen by the admin API before the next.
    const flaky = page.locator('#switches button[data-fault="flaky"]');
    const faults = () => admin<{ faults: { route: string; probability?: number }[] }>('GET', 'faults').then((f) => f.faults.filter((x) => x.probability === 0.5).length);
    for (const on of [1, 0, 1, 0]) {
      await expect.poll(() => flaky.getAttribute('aria-pressed'), { timeout: 5_000 }).toBe(on ? 'false' : 'true');
      await press(await box(flaky));
      await expect.poll(faults, { timeout: 5_000 }).toBe(on);
    }

    // The test did what it says: half the presses or more had a refresh answered between press and release.
    const straddled = await page.evaluate(() => (globalThis as unknown as { pressesAcrossRefresh: () => number }).pressesAcrossRefresh());
    expect(straddled).toBeGreaterThanOrEqual(CLICKS / 2);
    expect(await page.locator('#problem').innerText()).toBe('');
    await page.close();
  }, 120_000);
});
