// Preloaded by bench/idle.ts into each server it measures (`node --import`): on SIGUSR2 the
// process writes its memory figures into IDLE_PROBE_DIR, and a heap snapshot after them when
// <pid>.snapshot is there. Plain JavaScript, so it loads on plain node beside the built gateway.
import { existsSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import v8 from 'node:v8';

const dir = process.env.IDLE_PROBE_DIR;
if (dir) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { committed: s.space_size, used: s.space_used_size }]));
    writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify({ ...process.memoryUsage(), spaces }));
    if (existsSync(`${dir}/${process.pid}.snapshot`)) v8.writeHeapSnapshot(`${dir}/${process.pid}.heapsnapshot`);
    writeFileSync(`${dir}/${process.pid}.done`, '');
  });
}
