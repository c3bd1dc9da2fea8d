/**
 * The emulator console: one page, no build step, served at /_emulator/console
 * when the console option is on (the gateway's embedded emulator). It lists
 * the transactions and payouts waiting for an outcome with buttons that
 * settle them through the admin API (same timestamps, events and webhooks as
 * the sandbox phone numbers), the webhook deliveries with their signature
 * header, and switches for common faults. Its script (console-script.ts)
 * updates rows in place, so no click is lost to a refresh and no button slides
 * under the pointer. The admin token comes from the URL's fragment
 * (`#token=...`), which browsers never send to a server.
 */
import { CONSOLE_SCRIPT } from './console-script.js';

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
<script>${CONSOLE_SCRIPT}</script>
</body></html>`;
}
