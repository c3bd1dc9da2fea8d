/** The heap after two full collections: what a test's objects still hold, not garbage waiting for the next GC. */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

export function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
