/**
 * The unit project's promise, kept: a test there that opens a socket, listens,
 * or starts a process fails at once, naming what it tried, so the quick loop
 * stays quick and a slow test is moved where it belongs.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

function refuse(what: string): never {
  throw new Error(`test/unit runs in-process only: this test tried to ${what}; move it beside the integration suites (docs/testing.md, "Layout")`);
}

net.Server.prototype.listen = function listen() {
  refuse('listen on a port');
};
net.Socket.prototype.connect = function connect() {
  refuse('open a network connection');
};
for (const name of ['spawn', 'fork', 'exec', 'execFile', 'spawnSync', 'execSync', 'execFileSync'] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = () => refuse(`start a process (${name})`);
}
// Named imports (`import { spawn } from 'node:child_process'`) see the patched functions too.
syncBuiltinESMExports();
