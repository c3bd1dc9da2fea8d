/**
 * The example checkout (examples/checkout) end to end in headless Chromium:
 * built with Vite and served by `vite preview` with /graphql proxied to
 * `npm start` (embedded emulator). It walks every sandbox number and reads
 * what the page says: approved, declined for a low balance, declined for no
 * account, and the number that never answers (pending, settled by hand in
 * the emulator console); bad input is refused in the page before anything is
 * sent, and neither the gateway's text nor a dead gateway's proxy error is
 * ever shown as it came.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../realtime/support.js';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { describeWith, freePort, launchChromium } from '../support/tools.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');
const CONFIG = 'examples/checkout/vite.config.ts';

const UNREACHABLE = 'The payment service cannot be reached. Check that the gateway is running (npm start), then try again.';
/** What no sentence for a person contains: codes, validator text, proxy statuses. */
const RAW = /[A-Z]{3,}_[A-Z_]+|HTTP \d{3}|Variable "|\bmust be\b|JSON|Response/;

const consolePrinted = (out: string) => {
  const welcome = welcomePrinted(out);
  const consoleUrl = /Console\s+(http:\/\/\S+\/_emulator\/console#token=\S+)/.exec(out)?.[1];
  return welcome && consoleUrl ? { ...welcome, consoleUrl } : null;
};

function preview(outDir: string, port: number, gatewayOrigin: string): ChildProcess {
  return spawn(process.execPath, [VITE, 'preview', '--config', CONFIG, '--outDir', outDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_URL: gatewayOrigin },
    stdio: 'ignore',
  });
}

async function stopPreview(server: ChildProcess | undefined): Promise<void> {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await exited;
}

describeWith('chromium', 'the example checkout in a browser', () => {
  let gateway: GatewayProcess;
  let previewServer: ChildProcess;
  let browser: Browser;
  let pageUrl: string;
  const outDir = mkdtempSync(join(tmpdir(), 'checkout-'));

  beforeAll(async () => {
    gateway = await spawnMain({ LOG_LEVEL: 'warn', EMULATOR_PORT: '0' }, consolePrinted);
    const built = spawnSync(process.execPath, [VITE, 'build', '--config', CONFIG, '--outDir', outDir, '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
    const port = await freePort();
    previewServer = preview(outDir, port, new URL(gateway.found.url!).origin);
    pageUrl = `http://127.0.0.1:${port}/`;
    await eventually(() => fetch(pageUrl).then((r) => r.status, () => 0), (status) => status === 200, 15_000);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopPreview(previewServer);
    await gateway?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  /** The checkout open, with every GraphQL request and every page error counted. */
  async function checkout(url = pageUrl): Promise<{ page: Page; sent: string[]; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 800, height: 1000 } });
    const sent: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/graphql')) sent.push(r.postData() ?? '');
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(url);
    return { page, sent, problems };
  }

  async function pay(page: Page, fields: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(fields)) await page.locator(`#${name}`).fill(value);
    await page.locator('button[type="submit"]').click();
  }

  const said = (page: Page) => page.locator('#status').innerText();
  const finalStatus = (page: Page) => page.locator('#status').getAttribute('data-status');

  it('64000001: says the payer paid, live from the subscription', async () => {
    const { page, problems } = await checkout();
    await pay(page, { phone: '64000001' });
    await expect.poll(() => said(page), { timeout: 15_000 }).toBe('Paid: the payer approved 2500 XOF.');
    expect(await finalStatus(page)).toBe('APPROVED');
    expect(await page.locator('#status').getAttribute('data-tone')).toBe('ok');
    // PENDING comes from the create; APPROVED can only come from the subscription.
    expect(await page.locator('#history').innerText()).toMatch(/created: PENDING[\s\S]*update: APPROVED/);
    if (process.env.CHECKOUT_SCREENSHOT) await page.screenshot({ path: process.env.CHECKOUT_SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it.each([
    ['64000002', "The payer's mobile-money balance is too low. They can top up and pay again."],
    ['+229 64 00 00 04', 'There is no mobile-money account for this phone number with this operator. Check the number and the operator, then try again.'],
  ])('%s: says it was declined, and why, in words', async (phone, why) => {
    const { page } = await checkout();
    await pay(page, { phone });
    await expect.poll(() => said(page), { timeout: 15_000 }).toBe('Declined: the payment did not go through, and nothing was charged.');
    expect(await finalStatus(page)).toBe('DECLINED');
    expect(await page.locator('#reason').innerText()).toBe(why);
    expect(await page.locator('#reason').innerText()).not.toMatch(RAW);
    await page.close();
  }, 30_000);

  it('64000003: says it stays pending and never settles by itself, points to the console, and the console settles it', async () => {
    const { page } = await checkout();
    const description = `Order never answered ${Date.now()}`;
    await pay(page, { phone: '64000003', description });
    await expect.poll(() => page.locator('#reason').innerText(), { timeout: 15_000 }).toContain('will not settle by itself');
    expect(await said(page)).toBe('Waiting for the payer to confirm on their phone…');
    expect(await page.locator('#reason').innerText()).toBe(
      'Sandbox: 64000003 never answers, so this payment stays pending and will not settle by itself. Settle it by hand in the emulator console (open the Console address that npm start printed, then Approve or Decline it there): this page shows the outcome.',
    );
    // Well past the sandbox's settle time (1.5 s), it is still waiting.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await finalStatus(page)).toBe('PENDING');

    // The console the page points to settles it, and the page says so.
    const consolePage = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    await consolePage.goto(gateway.found.consoleUrl!);
    await consolePage.locator('#transactions tr', { hasText: description }).locator('button[data-action="approved"]').click({ timeout: 10_000 });
    await expect.poll(() => said(page), { timeout: 15_000 }).toBe('Paid: the payer approved 2500 XOF.');
    await consolePage.close();
    await page.close();
  }, 45_000);

  it.each([
    ['amount', '25,00', 'Enter the amount in whole CFA francs, digits only: the franc has no cents, so write 25 rather than 25,00.'],
    ['amount', '2500.50', 'Enter the amount in whole CFA francs, digits only: the franc has no cents, so write 2500 rather than 2500.50.'],
    ['amount', 'ten', 'Enter the amount in digits only, in whole CFA francs (for example 2500).'],
    ['amount', '0', 'The amount must be above zero.'],
    ['amount', '', 'Enter the amount to pay, in CFA francs (for example 2500).'],
    ['phone', '1234', 'This is not a Benin mobile number. Enter 8 digits (for example 64000001), or 10 starting with 01; +229 in front is fine.'],
    ['phone', '6400000a', 'This is not a Benin mobile number. Enter 8 digits (for example 64000001), or 10 starting with 01; +229 in front is fine.'],
    ['phone', '+33 6 12 34 56 78', 'This is not a Benin mobile number. Enter 8 digits (for example 64000001), or 10 starting with 01; +229 in front is fine.'],
    ['phone', '', "Enter the payer's mobile-money number."],
    ['email', 'ama@', "Enter the payer's e-mail address, like ama@example.com."],
  ])('refuses %s %j in the page, in words, before anything is sent', async (field, value, words) => {
    const { page, sent } = await checkout();
    await pay(page, { [field]: value });
    await expect.poll(() => page.locator(`#${field}-problem`).innerText(), { timeout: 5_000 }).toBe(words);
    expect(await said(page)).toBe('Please correct the field marked below; nothing was sent.');
    expect(await page.locator(`#${field}`).getAttribute('aria-invalid')).toBe('true');
    expect(sent).toEqual([]);
    // Fixed, it goes through, and the note goes away.
    await pay(page, { [field]: field === 'phone' ? '64000001' : field === 'email' ? 'ama@example.com' : '2 500' });
    await expect.poll(() => said(page), { timeout: 15_000 }).toBe('Paid: the payer approved 2500 XOF.');
    expect(await page.locator(`#${field}-problem`).innerText()).toBe('');
    await page.close();
  }, 30_000);

  it.each([
    [
      'a gateway error on create',
      'create',
      { errors: [{ message: 'Variable "$input" got invalid value "25,00" at "input.amountDecimal"; Expected type "Decimal".', extensions: { code: 'BAD_USER_INPUT' } }] },
      'Some details were not accepted. Check the amount and the phone number, then try again.',
    ],
    [
      "the upstream's refusal of a phone number on send",
      'send',
      { data: { sendTransaction: { transaction: null, userErrors: [{ field: ['phoneNumber', 'number'], message: 'phone_number.number must be a phone number', code: 'INVALID' }] } } },
      'The phone number was not accepted. Check the number and the operator, then try again.',
    ],
    [
      'an unavailable provider on send',
      'send',
      { errors: [{ message: 'The payments API is unavailable.', extensions: { code: 'UPSTREAM_UNAVAILABLE' } }], data: null },
      'The mobile-money provider is not answering right now. Nothing was charged; try again in a moment.',
    ],
  ])('puts %s in words, never as it came', async (_name, step, answer, words) => {
    const { page } = await checkout();
    // The one answer replaced; every other request reaches the gateway.
    await page.route('**/graphql', (route) => {
      const isSend = (route.request().postData() ?? '').includes('sendTransaction');
      if ((step === 'send') === isSend) return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) });
      return route.continue();
    });
    await pay(page, { phone: '64000001' });
    await expect.poll(() => said(page), { timeout: 15_000 }).toBe(words);
    expect(await page.locator('#status').getAttribute('data-tone')).toBe('bad');
    expect(await said(page)).not.toMatch(RAW);
    await page.close();
  }, 30_000);

  it('says the payment service cannot be reached when the gateway is down, with no proxy status', async () => {
    // The same build, served with /graphql proxied to a port where nothing listens.
    const port = await freePort();
    const downServer = preview(outDir, port, `http://127.0.0.1:${await freePort()}`);
    try {
      const downUrl = `http://127.0.0.1:${port}/`;
      await eventually(() => fetch(downUrl).then((r) => r.status, () => 0), (status) => status === 200, 15_000);
      const { page } = await checkout(downUrl);
      await pay(page, { phone: '64000001' });
      await expect.poll(() => said(page), { timeout: 15_000 }).toBe(UNREACHABLE);
      expect(await page.locator('#status').getAttribute('data-tone')).toBe('bad');
      expect(await page.locator('button[type="submit"]').isEnabled()).toBe(true);
      await page.close();
    } finally {
      await stopPreview(downServer);
    }
  }, 40_000);
});
