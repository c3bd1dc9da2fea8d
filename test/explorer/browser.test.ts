/**
 * The bundled explorer in a real headless Chromium, against `npm start`
 * (embedded emulator): the page loads with no request leaving the gateway's
 * origin and no Content-Security-Policy violation, the first example tab
 * runs with the prefilled sandbox key, and the subscription tab receives the
 * approval the emulator's webhook brings.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { describeWith, launchChromium } from '../support/tools.js';

describeWith('chromium', 'the bundled explorer in a browser', () => {
  let started: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    started = await spawnMain({ LOG_LEVEL: 'warn', GRAPHQL_EXPLORER: 'graphiql' }, welcomePrinted);
    browser = await launchChromium();
  }, 40_000);

  afterAll(async () => {
    await browser?.close();
    await started?.stop();
  });

  it('runs the first example with the prefilled key, loading nothing from elsewhere, and a subscription over graphql-ws', async () => {
    const { url, key } = started.found as { url: string; key: string };
    const origin = new URL(url).origin;
    const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      const target = request.url();
      if (!target.startsWith(`${origin}/`) && !target.startsWith(origin.replace(/^http/, 'ws')) && !target.startsWith('data:')) foreign.push(target);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (answer) => {
      if (answer.status() >= 400) problems.push(`${answer.status()} ${answer.url()}`);
    });

    await page.goto(url);
    await page.locator('.graphiql-container').waitFor({ timeout: 15_000 });
    // The Headers tab holds the embedded emulator's key, the query editor the README's first example.
    await expect.poll(() => page.locator('.graphiql-editor-tool').innerText(), { timeout: 10_000 }).toContain(`Bearer ${key}`);
    await expect.poll(() => page.locator('.graphiql-query-editor').innerText()).toContain('payouts(first: 5)');

    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => page.locator('.graphiql-response').innerText(), { timeout: 10_000 }).toContain('"totalCount"');
    const response = await page.locator('.graphiql-response').innerText();
    expect(response).toContain('"fullName"');
    expect(response).not.toContain('"errors"');

    if (process.env.EXPLORER_SCREENSHOT) await page.screenshot({ path: process.env.EXPLORER_SCREENSHOT });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);

    // The subscription tab, over graphql-ws with the key from the Headers tab as connectionParams.
    const gql = async (query: string) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query }) });
      return (await res.json()) as { data: Record<string, { transaction: { id: string } }> };
    };
    const created = await gql(
      'mutation { createTransaction(input: { amount: 700, description: "explorer", currency: { iso: "XOF" }, customer: { firstname: "Ama", lastname: "Mensah", email: "ama.explorer@example.com" } }) { transaction { id } } }',
    );
    const id = created.data.createTransaction!.transaction.id;
    await page.locator('.graphiql-tab', { hasText: 'Updates' }).click();
    await page.locator('.graphiql-editor-tools button', { hasText: 'Variables' }).click();
    await page.evaluate((value) => {
      type Editor = { getValue(): string; setValue(v: string): void };
      // Runs in the page; the test's tsconfig has no DOM types.
      const page = (globalThis as unknown as { document: { querySelectorAll(selector: string): ArrayLike<{ CodeMirror: Editor }> } }).document;
      const editors = Array.from(page.querySelectorAll('.graphiql-editor-tool .CodeMirror'), (el) => el.CodeMirror);
      editors.find((editor) => editor.getValue().includes('"id"'))!.setValue(value);
    }, JSON.stringify({ id }));
    await page.locator('.graphiql-execute-button').click();
    await new Promise((r) => setTimeout(r, 500));
    await gql(`mutation { sendTransaction(id: "${id}", mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) { transaction { id } } }`);
    await expect.poll(() => page.locator('.graphiql-response').innerText(), { timeout: 10_000 }).toContain('APPROVED');
    expect(problems).toEqual([]);
  });
});
