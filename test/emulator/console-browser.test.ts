/**
 * The emulator console in a real headless Chromium, against `npm start`
 * (embedded emulator): a transaction created through the gateway shows up as
 * waiting, its Approve button settles it, a transactionUpdated subscriber on
 * the gateway receives APPROVED, and the console lists the signed webhook
 * delivery that carried it.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { disposeLive, subscribeLive, wsClient } from '../realtime/support.js';
import { describeWith, launchChromium } from '../support/tools.js';

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
    started = await spawnMain({ LOG_LEVEL: 'warn' }, consolePrinted);
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
});
