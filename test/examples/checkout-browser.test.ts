/**
 * The example checkout (examples/checkout) end to end in headless Chromium:
 * built with Vite and served by `vite preview` with /graphql proxied to
 * `npm start` (embedded emulator), the page pays with the sandbox's
 * approving number and shows APPROVED, which reaches it through the
 * transactionUpdated subscription.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../realtime/support.js';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { describeWith, freePort, launchChromium } from '../support/tools.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');
const CONFIG = 'examples/checkout/vite.config.ts';

describeWith('chromium', 'the example checkout in a browser', () => {
  let gateway: GatewayProcess;
  let previewServer: ChildProcess;
  let browser: Browser;
  let pageUrl: string;
  const outDir = mkdtempSync(join(tmpdir(), 'checkout-'));

  beforeAll(async () => {
    gateway = await spawnMain({ LOG_LEVEL: 'warn' }, welcomePrinted);
    const built = spawnSync(process.execPath, [VITE, 'build', '--config', CONFIG, '--outDir', outDir, '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
    const port = await freePort();
    const gatewayOrigin = new URL(gateway.found.url!).origin;
    previewServer = spawn(process.execPath, [VITE, 'preview', '--config', CONFIG, '--outDir', outDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_URL: gatewayOrigin },
      stdio: 'ignore',
    });
    pageUrl = `http://127.0.0.1:${port}/`;
    await eventually(() => fetch(pageUrl).then((r) => r.status, () => 0), (status) => status === 200, 15_000);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (previewServer && previewServer.exitCode === null) {
      const exited = new Promise((r) => previewServer.once('exit', r));
      previewServer.kill('SIGTERM');
      await exited;
    }
    await gateway?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  it('pays with the approving sandbox number and shows APPROVED, live from the subscription', async () => {
    const page = await browser.newPage({ viewport: { width: 800, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(pageUrl);
    await page.locator('#phone').fill('64000001');
    await page.locator('button[type="submit"]').click();
    // PENDING comes from the create; APPROVED can only come from the subscription.
    await expect.poll(() => page.locator('#status').innerText(), { timeout: 15_000 }).toBe('APPROVED');
    expect(await page.locator('#history').innerText()).toMatch(/created: PENDING[\s\S]*update: APPROVED/);
    if (process.env.CHECKOUT_SCREENSHOT) await page.screenshot({ path: process.env.CHECKOUT_SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  }, 30_000);

  it('shows DECLINED for the declining number, with the reason', async () => {
    const page = await browser.newPage();
    await page.goto(pageUrl);
    await page.locator('#phone').fill('64000002');
    await page.locator('button[type="submit"]').click();
    await expect.poll(() => page.locator('#status').innerText(), { timeout: 15_000 }).toBe('DECLINED');
    expect(await page.locator('#reason').innerText()).toBe("Reason: the payer's balance is too low (INSUFFICIENT_FUNDS)");
  }, 30_000);

  it('says the payment service cannot be reached when the gateway is down', async () => {
    // The same build, served with /graphql proxied to a port where nothing listens.
    const port = await freePort();
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const downServer = spawn(process.execPath, [VITE, 'preview', '--config', CONFIG, '--outDir', outDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_URL: nowhere },
      stdio: 'ignore',
    });
    try {
      const downUrl = `http://127.0.0.1:${port}/`;
      await eventually(() => fetch(downUrl).then((r) => r.status, () => 0), (status) => status === 200, 15_000);
      const page = await browser.newPage();
      await page.goto(downUrl);
      await page.locator('#phone').fill('64000001');
      await page.locator('button[type="submit"]').click();
      await expect.poll(() => page.locator('#status').innerText(), { timeout: 15_000 }).toMatch(/^The payment service cannot be reached\. Check that the gateway is running \(npm start\), then try again\./);
      expect(await page.locator('#status').innerText()).not.toMatch(/JSON|Response/);
      expect(await page.locator('#status').getAttribute('data-tone')).toBe('bad');
      expect(await page.locator('button[type="submit"]').isEnabled()).toBe(true);
    } finally {
      const exited = new Promise((r) => downServer.once('exit', r));
      downServer.kill('SIGTERM');
      await exited;
    }
  }, 40_000);
});
