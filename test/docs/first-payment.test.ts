/**
 * The README's curl commands, read from its code blocks and run as pasted in
 * one shell (bash, the real curl) against `npm start`: the first query finds
 * the demo data, Pay creates a transaction and keeps its id in $ID, Send
 * pushes it, and Check soon reads it APPROVED. Only the gateway's address is
 * changed, from the README's to the one this start printed.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { describeWith } from '../support/tools.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const README_URL = 'http://127.0.0.1:4000/graphql';

/** The README's ```sh blocks that call the gateway with curl. */
function curlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => block.includes(`curl -s ${README_URL}`));
}

function block(marker: string): string {
  const found = curlBlocks(README).filter((b) => b.includes(marker));
  expect(found, `one README curl block with ${marker}`).toHaveLength(1);
  return found[0]!;
}

const welcome = (out: string) => {
  const found = welcomePrinted(out);
  return found ? { ...found, banner: out } : null;
};

describeWith('curl', "the README's first payment, pasted into a shell", () => {
  let started: GatewayProcess;
  let url: string;

  /** Runs one block in bash, as pasted into a terminal, with the shell variables earlier blocks set. */
  function paste(text: string, env: Record<string, string> = {}): Promise<string> {
    const script = text.split(README_URL).join(url);
    // stdin from /dev/null, as a terminal's is not a socket: bash would read ~/.bashrc for a socket.
    const child = spawn('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => (code === 0 && stderr === '' ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}${stdout}`))));
    });
  }

  beforeAll(async () => {
    started = await spawnMain({ LOG_LEVEL: 'warn' }, welcome);
    url = started.found.url!;
  }, 30_000);
  afterAll(async () => {
    await started?.stop();
  });

  it('uses the key npm start prints, and both say any other sandbox key is an empty account', async () => {
    expect(started.found.key).toBe('sk_sandbox_demo');
    for (const b of curlBlocks(README)) expect(b).toContain("-H 'authorization: Bearer sk_sandbox_demo'");
    expect(started.found.banner).toContain('any other sk_sandbox_… key is a new, empty account');
    expect(README).toContain('Any other `sk_sandbox_…` key is a new, empty account');

    const query = block('payouts(first: 5)');
    const demo = JSON.parse(await paste(query)) as { data: { payouts: { totalCount: number } } };
    expect(demo.data.payouts.totalCount).toBeGreaterThan(0);
    const typo = JSON.parse(await paste(query.replace('sk_sandbox_demo', 'sk_sandbox_dmeo'))) as { data: { payouts: { totalCount: number } } };
    expect(typo.data.payouts.totalCount).toBe(0);
  }, 30_000);

  it("prints the README's first query as its own, the same command but for the address", () => {
    const printed = /A first query:\n([\s\S]*?)\n\n?$/.exec(started.found.banner ?? '')?.[1];
    expect(printed, 'the banner ends with a first query').toBeDefined();
    const lines = (text: string) => text.trim().split('\n').map((line) => line.trim());
    expect(lines(printed!.split(url).join(README_URL))).toEqual(lines(block('payouts(first: 5)')));
  });

  it('Pay, Send and Check: the payment is APPROVED', async () => {
    const pay = await paste(block('mutation Pay'));
    const created = JSON.parse(pay.split('\n')[0]!) as { data: { createTransaction: { transaction: { id: string; status: string }; userErrors: unknown[] } } };
    expect(created.data.createTransaction.userErrors).toEqual([]);
    expect(created.data.createTransaction.transaction.status).toBe('PENDING');
    const id = /^ID=(.*)$/m.exec(pay)?.[1];
    expect(id).toBe(created.data.createTransaction.transaction.id);
    const env = { ID: id! };

    const sent = JSON.parse(await paste(block('mutation Send'), env)) as {
      errors?: unknown;
      data: { sendTransaction: { paymentIntents: { status: string }[]; transaction: { id: string }; userErrors: unknown[] } };
    };
    expect(sent.errors).toBeUndefined();
    expect(sent.data.sendTransaction.userErrors).toEqual([]);
    expect(sent.data.sendTransaction.transaction.id).toBe(id);
    expect(sent.data.sendTransaction.paymentIntents.length).toBeGreaterThan(0);

    const check = block('query Check');
    type Checked = { data: { transaction: { status: string; isPaid: boolean; statusHistory: { status: string }[] } } };
    let checked: Checked | undefined;
    // "two seconds later": the emulator settles 1.5 s after Send.
    await expect
      .poll(async () => (checked = JSON.parse(await paste(check, env)) as Checked).data.transaction.status, { timeout: 8_000, interval: 500 })
      .toBe('APPROVED');
    expect(checked!.data.transaction.isPaid).toBe(true);
    expect(checked!.data.transaction.statusHistory.at(-1)?.status).toBe('APPROVED');
  }, 40_000);
});
