/**
 * The console page's script (plain browser JavaScript, served inline by
 * console.ts). It refreshes every second and updates the page in place: a
 * row, a button, a switch is made once and kept, so a press and its release
 * land on the same element even when a refresh comes between them.
 */

/** Fault switches: each is one fault spec posted to /_emulator/faults. */
export const SWITCHES = [
  { id: 'down', label: 'Upstream down (503 on every route)', spec: { route: '*', status: 503 } },
  { id: 'slow', label: 'Slow upstream (+2 s on every route)', spec: { route: '*', latencyMs: 2000 } },
  { id: 'flaky', label: 'Flaky reads of one transaction (500, half the time)', spec: { route: 'GET /v1/transactions/:id', status: 500, probability: 0.5 } },
];

/** Settled rows kept on the page, oldest dropped first. */
const KEPT_SETTLED = 200;

export const CONSOLE_SCRIPT = `
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const SWITCHES = ${JSON.stringify(SWITCHES)};
const KEPT_SETTLED = ${KEPT_SETTLED};
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
// Writes only what changed, so an unchanged refresh touches nothing on the page.
function setText(el, value) { const text = value == null ? '' : String(value); if (el.textContent !== text) el.textContent = text; }
function cell(row, text, cls) { const td = row.insertCell(); setText(td, text); if (cls) td.className = cls; return td; }

// One table of waiting objects. A row is made once per id and kept: refreshes
// rewrite its cells' text, never the row or its buttons. A settled row stays
// where it was with its outcome instead of buttons, and rows run oldest first,
// so new ones arrive below and nothing slides under the pointer.
function waitingTable(id, columns, actions) {
  const body = $(id);
  const rows = new Map();
  const empty = body.insertRow();
  cell(empty, 'nothing here', 'empty').colSpan = columns.length + 1;
  function settle(entry, outcome) {
    entry.outcome = outcome;
    entry.row.className = 'settled';
    entry.action.className = 'outcome';
    entry.action.replaceChildren();
    entry.action.textContent = outcome;
  }
  function enable(entry, on) { for (const b of entry.action.querySelectorAll('button')) b.disabled = !on; }
  async function press(entry, kind, status) {
    if (entry.busy || entry.outcome) return;
    entry.busy = true;
    enable(entry, false);
    try {
      const moved = await admin('POST', kind + '/' + entry.item.id + '/status', { status });
      settle(entry, moved.status || status);
      $('problem').textContent = '';
    } catch (e) {
      $('problem').textContent = e.message;
      enable(entry, true);
    } finally {
      entry.busy = false;
    }
    trim();
    void refresh();
  }
  function add(item) {
    const row = document.createElement('tr');
    row.dataset.id = item.id;
    const cells = columns.map(() => row.insertCell());
    const action = row.insertCell();
    const entry = { item, row, cells, action, outcome: null, busy: false };
    for (const [label, kind, status] of actions) {
      const b = document.createElement('button');
      b.textContent = label; b.dataset.action = status; b.dataset.id = item.id;
      b.onclick = () => press(entry, kind, status);
      action.append(b);
    }
    let next = empty;
    for (const other of rows.values()) if (other.item.id > item.id && (next === empty || other.item.id < Number(next.dataset.id))) next = other.row;
    body.insertBefore(row, next);
    rows.set(item.id, entry);
    return entry;
  }
  function trim() {
    const settled = [...rows.values()].filter((entry) => entry.outcome).sort((a, b) => a.item.id - b.item.id);
    for (const entry of settled.slice(0, Math.max(0, settled.length - KEPT_SETTLED))) { entry.row.remove(); rows.delete(entry.item.id); }
  }
  return function update(items) {
    const waiting = new Set(items.map((item) => item.id));
    for (const entry of rows.values()) if (!entry.outcome && !entry.busy && !waiting.has(entry.item.id)) settle(entry, 'settled elsewhere');
    for (const item of items) {
      const entry = rows.get(item.id) || add(item);
      // An answer read before a click landed never brings a settled row's buttons back.
      if (entry.outcome) continue;
      entry.item = item;
      columns.forEach((column, i) => setText(entry.cells[i], column(item)));
    }
    trim();
    empty.hidden = rows.size > 0;
  };
}

const money = (o) => o.amount + ' ' + (o.currency || '');
const transactions = waitingTable('transactions', [(t) => t.id, money, (t) => t.description, (t) => t.customer, (t) => t.created_at],
  [['Approve', 'transactions', 'approved'], ['Decline', 'transactions', 'declined'], ['Cancel', 'transactions', 'canceled']]);
const payouts = waitingTable('payouts', [(p) => p.id, (p) => p.status, money, (p) => p.customer, (p) => p.created_at],
  [['Send', 'payouts', 'sent'], ['Fail', 'payouts', 'failed']]);

// The deliveries have no buttons: the table is redrawn, but only when what it lists changed.
let shownDeliveries = null;
function deliveriesTable(deliveries) {
  const recent = deliveries.slice(-20).reverse();
  const seen = JSON.stringify(recent);
  if (seen === shownDeliveries) return;
  shownDeliveries = seen;
  const body = $('deliveries'); body.replaceChildren();
  if (recent.length === 0) cell(body.insertRow(), 'no webhook delivered yet', 'empty').colSpan = 6;
  for (const d of recent) {
    const row = body.insertRow();
    cell(row, d.at); cell(row, d.event_type + ' #' + d.event_id); cell(row, d.url); cell(row, d.attempt);
    cell(row, d.ok ? String(d.status) : (d.error || 'failed'), d.ok ? 'ok' : 'bad');
    const sig = row.insertCell(); const code = document.createElement('code'); code.textContent = d.signature || ''; sig.append(code);
  }
}

// The switches are made once; a refresh sets whether each is on, and a press reads that then.
function sameSpec(fault, spec) { return Object.keys(spec).every((k) => fault[k] === spec[k]); }
const switchState = new Map();
const box = $('switches');
for (const s of SWITCHES) {
  const b = document.createElement('button');
  b.className = 'switch'; b.textContent = s.label; b.dataset.fault = s.id; b.setAttribute('aria-pressed', 'false');
  b.onclick = () => { const on = switchState.get(s.id); act(() => on ? admin('DELETE', 'faults/' + on.id) : admin('POST', 'faults', s.spec)); };
  box.append(b);
  switchState.set(s.id, null);
}
const clear = document.createElement('button');
clear.dataset.fault = 'clear';
clear.onclick = () => act(() => admin('DELETE', 'faults'));
box.append(clear);
function switches(active) {
  for (const s of SWITCHES) {
    const on = active.find((f) => sameSpec(f, s.spec)) || null;
    switchState.set(s.id, on);
    const b = box.querySelector('[data-fault="' + s.id + '"]');
    if (b.getAttribute('aria-pressed') !== String(Boolean(on))) b.setAttribute('aria-pressed', String(Boolean(on)));
  }
  setText(clear, 'Clear all faults (' + active.length + ')');
}

async function act(work) { try { await work(); await refresh(); } catch (e) { $('problem').textContent = e.message; } }
// Refreshes can overlap on a slow upstream: an answer older than the one shown is dropped.
let asked = 0;
let shown = 0;
async function refresh() {
  const n = ++asked;
  try {
    const [pending, deliveries, faults] = await Promise.all([admin('GET', 'pending'), admin('GET', 'deliveries'), admin('GET', 'faults')]);
    if (n < shown) return;
    shown = n;
    $('problem').textContent = '';
    transactions(pending.transactions);
    payouts(pending.payouts);
    deliveriesTable(deliveries.deliveries);
    switches(faults.faults);
  } catch (e) { if (n >= shown) $('problem').textContent = e.message; }
}
refresh(); setInterval(refresh, 1000);
`;
