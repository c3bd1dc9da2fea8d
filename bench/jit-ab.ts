/**
 * graphql-jit on and off, side by side in one process: `npx tsx bench/jit-ab.ts`.
 * One emulator, two gateways (GRAPHQL_JIT=true and false) with warm entity
 * caches, the same operations sent to each in alternating rounds of 10 at a
 * time; CPU per operation of the whole process (client, emulator and both
 * gateways), so only the difference between the two rows is the executor's.
 */
import { startEmulator } from '../emulator/index.js';
import { startGatewayOver } from '../test/support/harness.js';
import { factories } from '../test/support/factories.js';
const emulator = await startEmulator({ port: 0, settleMs: 0 });
const key = 'sk_sandbox_jitab';
const make = factories(emulator, key);
const ids: string[] = [];
for (let i = 0; i < 10; i++) { const c = await make.customer(); for (let j = 0; j < 5; j++) { const t = await make.transaction({ customer: { id: c.id } }); await make.rest('PUT', `/v1/transactions/${t.id}`, { status: 'canceled' }).catch(() => {}); ids.push(String(t.id)); } }
const env = { RATE_LIMIT_PER_MINUTE: '0', CUSTOMER_CACHE_TTL_MS: '600000' };
const gw = { on: await startGatewayOver(emulator.url, env), off: await startGatewayOver(emulator.url, { ...env, GRAPHQL_JIT: 'false' }) };
const ops = {
  single: (i: number) => ({ query: 'query ($id: ID!) { transaction(id: $id) { id amountMoney { amount currencyIso } status customer { id fullName email } currency { iso name } } }', variables: { id: ids[i % ids.length] } }),
  page: () => ({ query: '{ transactions(first: 50) { nodes { id amountMoney { amount currencyIso } status customer { id fullName email } currency { iso name } } } }', variables: {} }),
};
async function round(g: typeof gw.on, op: keyof typeof ops, n: number) {
  const start = process.cpuUsage();
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => { while (next < n) { const i = next++; const r = await fetch(g.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(ops[op](i)) }); const b = await r.json() as { errors?: unknown }; if (b.errors) throw new Error(JSON.stringify(b.errors)); } }));
  const u = process.cpuUsage(start); return (u.user + u.system) / 1000 / n;
}
for (const op of ['single', 'page'] as const) {
  for (const g of Object.values(gw)) await round(g, op, 300);
  const r: Record<string, number[]> = { on: [], off: [] };
  for (let i = 0; i < 6; i++) for (const k of i % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) r[k]!.push(await round(gw[k], op, op === 'page' ? 200 : 1000));
  for (const [k, v] of Object.entries(r)) { v.sort((a, b) => a - b); console.log(op, 'jit', k, 'median ms/op (whole process)', v[3]!.toFixed(3), 'min', v[0]!.toFixed(3)); }
}
await gw.on.stop(); await gw.off.stop(); await emulator.stop();
