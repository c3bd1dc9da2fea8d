/**
 * The emulator console: one page, no build step, served at /_emulator/console
 * when the console option is on (the gateway's embedded emulator). It lists
 * the transactions and payouts waiting for an outcome with buttons that
 * settle them through the admin API (same timestamps, events and webhooks as
 * the sandbox phone numbers), the webhook deliveries with their signature
 * header, and switches for common faults. A settled row stays in place with
 * its outcome, so no button slides under the pointer. The admin token comes from the
 * URL's fragment (`#token=...`), which browsers never send to a server.
 */
export const CONSOLE_PATH = '/_emulator/console';

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2433; background: #f7f8fa; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
p.hint { color: #5b6475; margin: 0 0 1rem; } #problem { color: #b42318; font-weight: 600; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e4e7ec; vertical-align: top; }
th { font-weight: 600; color: #5b6475; } td.empty { color: #98a2b3; font-style: italic; }
code { font-size: 12px; word-break: break-all; } .ok { color: #067647; } .bad { color: #b42318; }
button { margin-right: .3rem; cursor: pointer; } .switch[aria-pressed="true"] { background: #fde68a; }
tr.settled td { color: #98a2b3; } td.outcome { color: #1d2433; font-weight: 600; }
#transactions tr, #payouts tr { height: 2.4rem; } /* the same with buttons or an outcome */
`;

/** Fault switches: each is one fault spec posted to /_emulator/faults. */
const SWITCHES = [
  { id: 'down', label: 'Upstream down (503 on every route)', spec: { route: '*', status: 503 } },
  { id: 'slow', label: 'Slow upstream (+2 s on every route)', spec: { route: '*', latencyMs: 2000 } },
  { id: 'flaky', label: 'Flaky reads of one transaction (500, half the time)', spec: { route: 'GET /v1/transactions/:id', status: 500, probability: 0.5 } },
];

const SCRIPT = `
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const SWITCHES = ${JSON.stringify(SWITCHES)};
const $ = (id) => document.getElementById(id);
async function admin(method, path, body) {
  const res = await fetch('/_emulator/' + path, {
    method, headers: { 'x-emulator-admin-token': token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) throw new Error('The admin token is missing or wrong: open the console URL that npm start printed.');
  if (!res.ok) throw new Error(method + ' ' + path + ': HTTP ' + res.status);
  return res.json();
}
function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text == null ? '' : String(text); if (cls) td.className = cls; return td; }
// A settled row stays where it was, its buttons replaced by the outcome, so
// nothing slides under the pointer; rows run oldest first, so new ones arrive below.
const settled = new Map();
const shown = new Map();
function fill(id, items, columns, actions) {
  const body = $(id); body.replaceChildren();
  const waiting = new Set(items.map((item) => item.id));
  for (const item of shown.get(id) || []) {
    if (!waiting.has(item.id) && !settled.has(id + ':' + item.id)) settled.set(id + ':' + item.id, { item, outcome: 'settled elsewhere' });
  }
  shown.set(id, items);
  const rows = [...items.map((item) => ({ item, outcome: null }))];
  for (const [k, entry] of settled) if (k.startsWith(id + ':') && !waiting.has(entry.item.id)) rows.push(entry);
  rows.sort((a, b) => a.item.id - b.item.id);
  if (rows.length === 0) { cell(body.insertRow(), 'nothing here', 'empty').colSpan = columns.length + 1; return; }
  for (const { item, outcome } of rows) {
    const row = body.insertRow();
    row.dataset.id = item.id;
    for (const column of columns) cell(row, column(item));
    const td = row.insertCell();
    if (outcome) { row.className = 'settled'; td.className = 'outcome'; td.textContent = outcome; continue; }
    for (const [label, kind, status] of actions) {
      const b = document.createElement('button');
      b.textContent = label; b.dataset.action = status; b.dataset.id = item.id;
      b.onclick = () => {
        for (const other of td.querySelectorAll('button')) other.disabled = true;
        act(async () => {
          const moved = await admin('POST', kind + '/' + item.id + '/status', { status });
          settled.set(id + ':' + item.id, { item, outcome: moved.status || status });
          if (settled.size > 200) settled.delete(settled.keys().next().value);
        });
      };
      td.append(b);
    }
  }
}
async function act(work) { try { await work(); await refresh(); } catch (e) { $('problem').textContent = e.message; } }
async function refresh() {
  try {
    const [pending, deliveries, faults] = await Promise.all([admin('GET', 'pending'), admin('GET', 'deliveries'), admin('GET', 'faults')]);
    $('problem').textContent = '';
    const money = (o) => o.amount + ' ' + (o.currency || '');
    fill('transactions', pending.transactions, [(t) => t.id, money, (t) => t.description, (t) => t.customer, (t) => t.created_at],
      [['Approve', 'transactions', 'approved'], ['Decline', 'transactions', 'declined'], ['Cancel', 'transactions', 'canceled']]);
    fill('payouts', pending.payouts, [(p) => p.id, (p) => p.status, money, (p) => p.customer, (p) => p.created_at],
      [['Send', 'payouts', 'sent'], ['Fail', 'payouts', 'failed']]);
    const body = $('deliveries'); body.replaceChildren();
    const recent = deliveries.deliveries.slice(-20).reverse();
    if (recent.length === 0) cell(body.insertRow(), 'no webhook delivered yet', 'empty').colSpan = 6;
    for (const d of recent) {
      const row = body.insertRow();
      cell(row, d.at); cell(row, d.event_type + ' #' + d.event_id); cell(row, d.url); cell(row, d.attempt);
      cell(row, d.ok ? String(d.status) : (d.error || 'failed'), d.ok ? 'ok' : 'bad');
      const sig = row.insertCell(); const code = document.createElement('code'); code.textContent = d.signature || ''; sig.append(code);
    }
    renderSwitches(faults.faults);
  } catch (e) { $('problem').textContent = e.message; }
}
function sameSpec(fault, spec) { return Object.keys(spec).every((k) => fault[k] === spec[k]); }
function renderSwitches(active) {
  const box = $('switches'); box.replaceChildren();
  for (const s of SWITCHES) {
    const on = active.find((f) => sameSpec(f, s.spec));
    const b = document.createElement('button');
    b.className = 'switch'; b.textContent = s.label; b.dataset.fault = s.id; b.setAttribute('aria-pressed', on ? 'true' : 'false');
    b.onclick = () => act(() => on ? admin('DELETE', 'faults/' + on.id) : admin('POST', 'faults', s.spec));
    box.append(b);
  }
  const clear = document.createElement('button'); clear.textContent = 'Clear all faults (' + active.length + ')';
  clear.onclick = () => act(() => admin('DELETE', 'faults')); box.append(clear);
}
refresh(); setInterval(refresh, 1000);
`;

export function consolePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payments emulator console</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body>
<h1>Payments emulator console</h1>
<p class="hint">Settle what is waiting, watch the webhooks go out, break the upstream on purpose. Every change here reaches the gateway's subscriptions like a real payment would.</p>
<p id="problem" role="alert"></p>
<h2>Transactions waiting for the payer (oldest first; settled ones stay, with their outcome)</h2>
<table><thead><tr><th>id</th><th>amount</th><th>description</th><th>customer</th><th>created</th><th></th></tr></thead><tbody id="transactions"></tbody></table>
<h2>Payouts waiting for the operator (oldest first; settled ones stay, with their outcome)</h2>
<table><thead><tr><th>id</th><th>status</th><th>amount</th><th>customer</th><th>created</th><th></th></tr></thead><tbody id="payouts"></tbody></table>
<h2>Webhook deliveries (newest first)</h2>
<table><thead><tr><th>at</th><th>event</th><th>to</th><th>attempt</th><th>result</th><th>X-FEDAPAY-SIGNATURE</th></tr></thead><tbody id="deliveries"></tbody></table>
<h2>Faults</h2>
<div id="switches"></div>
<script>${SCRIPT}</script>
</body></html>`;
}
