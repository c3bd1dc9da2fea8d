/**
 * The explorer's example tabs do what they say, in a real Chromium against
 * `npm start`: every tab fits the editor at the browser's default width, the
 * tabs that need an id hold one, the Send and Updates tabs' instructions,
 * followed as written (run Updates, stay on it, settle from the console or by
 * running Send in a second window), bring APPROVED into the Updates tab, and a
 * reload or a second window opens the same five tabs, none empty or twice.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { describeWith, launchChromium } from '../support/tools.js';

const withConsole = (out: string) => {
  const welcome = welcomePrinted(out);
  const consoleUrl = /Console\s+(http:\/\/\S+\/_emulator\/console\S*)/.exec(out)?.[1];
  return welcome && consoleUrl ? { ...welcome, consoleUrl } : null;
};

/** The text of the CodeMirror editors in `selector` (the page's own editors, read in the page). */
function editorText(page: Page, selector: string): Promise<string> {
  return page.evaluate((sel) => {
    type Editor = { getValue(): string };
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ CodeMirror: Editor }> } }).document;
    return Array.from(doc.querySelectorAll(`${sel} .CodeMirror`), (el) => el.CodeMirror.getValue()).join('\n');
  }, selector);
}

/** Replaces the Variables editor's text, as a user typing there would. */
async function setVariables(page: Page, text: string): Promise<void> {
  await page.locator('.graphiql-editor-tools button', { hasText: 'Variables' }).click();
  await page.evaluate((value) => {
    type Editor = { getValue(): string; setValue(v: string): void };
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ CodeMirror: Editor }> } }).document;
    const editors = Array.from(doc.querySelectorAll('.graphiql-editor-tool .CodeMirror'), (el) => el.CodeMirror);
    editors.find((editor) => editor.getValue().includes('"id"'))!.setValue(value);
  }, text);
}

/** The query editor's lines whose text ends past the editor's visible right edge. */
function cutLines(page: Page): Promise<string[]> {
  return page.locator('.graphiql-query-editor .CodeMirror').evaluate((editor) => {
    type Box = { right: number };
    type Node = { getBoundingClientRect(): Box; querySelectorAll(s: string): ArrayLike<Node & { textContent: string | null }> };
    // The toolbar (run, prettify, ...) floats over the editor's right side.
    const toolbar = (editor as unknown as { ownerDocument: { querySelector(s: string): { getBoundingClientRect(): { left: number } } | null } }).ownerDocument.querySelector('.graphiql-toolbar');
    const visibleRight = Math.min((editor as unknown as Node).getBoundingClientRect().right, toolbar?.getBoundingClientRect().left ?? Infinity);
    return Array.from((editor as unknown as Node).querySelectorAll('.CodeMirror-line > span'))
      .filter((line) => line.getBoundingClientRect().right > visibleRight)
      .map((line) => line.textContent ?? '');
  });
}

/**
 * Clicks a tab, as a person would: once, then again if GraphiQL, still
 * starting up, did not hear it; then lets GraphiQL's editor settle (it reads
 * the operation name 100 ms after a change, and a tab left sooner would take
 * the previous one's name). A tab of that name twice fails the click.
 */
async function openTab(page: Page, name: string): Promise<void> {
  const operation = new RegExp(`(query|mutation|subscription) ${name}\\b`);
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).click();
    for (let wait = 0; wait < 10; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (operation.test(await editorText(page, '.graphiql-query-editor'))) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return;
      }
    }
  }
  throw new Error(`the ${name} tab did not open`);
}

const TABS = ['Payouts', 'Pay', 'Send', 'Check', 'Updates'];
const tabTitles = (page: Page) => page.locator('.graphiql-tab-button').allInnerTexts();

const run = (page: Page) => page.locator('.graphiql-execute-button').click();
const response = (page: Page) => page.locator('.graphiql-response').innerText();

describeWith('chromium', "the explorer's example tabs, followed as written", () => {
  let started: GatewayProcess;
  let browser: Browser;
  let context: BrowserContext;
  let found: { url: string; key: string; consoleUrl: string };

  beforeAll(async () => {
    started = await spawnMain({ LOG_LEVEL: 'warn', GRAPHQL_EXPLORER: 'graphiql' }, withConsole);
    found = started.found as typeof found;
    browser = await launchChromium();
  }, 40_000);

  // Each test a newcomer's fresh browser profile; a second window shares its storage, as a real one does.
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(async () => {
    await context.close();
  });

  afterAll(async () => {
    await browser?.close();
    await started?.stop();
  });

  async function openExplorer(): Promise<Page> {
    const page = await context.newPage();
    await page.goto(found.url);
    await page.locator('.graphiql-container').waitFor({ timeout: 15_000 });
    // A person reads the page before clicking; a click within GraphiQL's first
    // 100 ms can give the tab clicked the name of the one before.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return page;
  }

  it('every tab fits the editor at the default width, and the tabs needing an id hold a pending transaction', async () => {
    const page = await openExplorer();
    let startingId = '';
    for (const name of TABS) {
      await openTab(page, name);
      await expect.poll(() => editorText(page, '.graphiql-query-editor')).toMatch(new RegExp(`(query|mutation|subscription) ${name}\\b`));
      if (process.env.EXPLORER_SCREENSHOT) await page.screenshot({ path: `${process.env.EXPLORER_SCREENSHOT}-${name}.png` });
      expect(await cutLines(page), `${name}: lines cut at the editor's edge`).toEqual([]);
      if (name === 'Send' || name === 'Check' || name === 'Updates') {
        const tools = (await editorText(page, '.graphiql-editor-tool')).split(/\n(?=\{)/);
        const variables = JSON.parse(tools.find((text) => text.includes('"id"')) ?? '{}') as { id: string };
        expect(variables.id).toMatch(/^\d+$/);
        startingId ||= variables.id;
        expect(variables.id).toBe(startingId);
      }
    }
    const res = await fetch(found.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${found.key}` },
      body: JSON.stringify({ query: 'query ($id: ID!) { transaction(id: $id) { status description } }', variables: { id: startingId } }),
    });
    expect(((await res.json()) as { data: unknown }).data).toEqual({ transaction: { status: 'PENDING', description: 'Order 42' } });
    await page.close();
  }, 60_000);

  it("Send and Updates, as both tabs say: Updates runs in a second window, Send here, and APPROVED arrives there", async () => {
    const first = await openExplorer();
    await openTab(first, 'Send');
    const send = await editorText(first, '.graphiql-query-editor');
    expect(send).toContain('To\n# watch it live, first run Updates in a\n# second browser window on this page');
    expect(send).toContain('then run Send here.');

    const second = await openExplorer();
    await openTab(second, 'Updates');
    const updates = await editorText(second, '.graphiql-query-editor');
    expect(updates).toContain('# 1. Run Updates here');
    expect(updates).toContain('# 2. Stay on this tab');
    expect(updates).toContain('or, in a second\n#    browser window on this page, run Send.');
    expect(updates).toContain('# 3. APPROVED arrives here');
    await run(second);
    await expect.poll(() => response(second), { timeout: 10_000 }).toContain('"PENDING"');

    await first.bringToFront();
    await run(first);
    await expect.poll(() => response(first), { timeout: 10_000 }).toContain('"sendTransaction"');
    expect(await response(first)).not.toContain('"errors"');

    await expect.poll(() => response(second), { timeout: 15_000 }).toContain('"APPROVED"');
    await first.close();
    await second.close();
  }, 60_000);

  it('a reload, soon or late after choosing a tab, and a second window open the same five tabs', async () => {
    const page = await openExplorer();
    expect(await tabTitles(page)).toEqual(TABS);
    for (const name of ['Pay', 'Send', 'Check', 'Updates']) {
      // Soon: before GraphiQL stores the tabs (it waits 500 ms after a change), as a quick F5 does.
      for (const settle of [0, 1_500]) {
        await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).click();
        await expect.poll(() => editorText(page, '.graphiql-query-editor'), { interval: 50 }).toMatch(new RegExp(`(mutation|query|subscription) ${name}\\b`));
        await new Promise((resolve) => setTimeout(resolve, settle));
        await page.reload();
        await page.locator('.graphiql-container').waitFor({ timeout: 15_000 });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(await tabTitles(page), `reload ${settle} ms after ${name}`).toEqual(TABS);
      }
    }
    const second = await openExplorer();
    expect(await tabTitles(second)).toEqual(TABS);
    expect(await tabTitles(page)).toEqual(TABS);
    await page.close();
    await second.close();
  }, 120_000);

  it('Pay, then Updates with its id, settled by Approve in the emulator console', async () => {
    const page = await openExplorer();
    await openTab(page, 'Pay');
    await expect.poll(() => editorText(page, '.graphiql-query-editor')).toContain('to use the\n# one Pay creates, put its id in their\n# Variables.');
    await run(page);
    await expect.poll(() => response(page), { timeout: 10_000 }).toContain('"PENDING"');
    const id = /"id": "(\d+)"/.exec(await response(page))![1]!;

    await openTab(page, 'Updates');
    await expect.poll(() => editorText(page, '.graphiql-query-editor')).toContain('subscription Updates');
    const instructions = await editorText(page, '.graphiql-query-editor');
    expect(instructions).toContain('settle the payment elsewhere: in the\n#    emulator console');
    expect(instructions).toContain('Approve on\n#    the row of this id');
    await setVariables(page, JSON.stringify({ id }));
    await run(page);
    await expect.poll(() => response(page), { timeout: 10_000 }).toContain('"PENDING"');

    const console = await context.newPage();
    await console.goto(found.consoleUrl);
    const approve = console.locator(`#transactions button[data-action="approved"][data-id="${id}"]`);
    await approve.click({ timeout: 10_000 });

    await expect.poll(() => response(page), { timeout: 15_000 }).toContain('"APPROVED"');
    await page.close();
    await console.close();
  }, 60_000);
});
