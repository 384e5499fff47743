/**
 * One pass over a file that is a single giant line (a minified bundle), in a
 * process of its own, for the streaming suite: how long it takes and how far
 * resident memory rises above what the process held before the pass (the
 * kernel's high-water mark, VmHWM, reset just before the pass: polling would
 * miss the peak). Plain JavaScript so the measured process loads nothing but
 * Node and the built packages.
 *
 * Usage: node giant-line-process.mjs <root> <file> <host|memory> <grep-literal|grep-regex|lines>
 * Prints one JSON line: durationMs, peakGrowthBytes, result (matches or lines).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';

const [root, file, backend, mode] = process.argv.slice(2);
if (root === undefined || file === undefined || backend === undefined || mode === undefined) {
  throw new Error('usage: giant-line-process.mjs <root> <file> <host|memory> <grep-literal|grep-regex|lines>');
}
let fs;
if (backend === 'host') fs = await HostFilesystem.open({ root, stateDir: join(root, '..', 'giant-state'), readOnly: true, grep: 'js' });
else {
  fs = new MemoryFilesystem();
  const bytes = readFileSync(join(root, file));
  const w = await fs.openWrite(file);
  for (let at = 0; at < bytes.byteLength; at += 1 << 20) await w.write(bytes.subarray(at, at + (1 << 20)));
  await w.close();
}
/** VmHWM of this process, bytes. */
const highWater = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
globalThis.gc?.();
const before = process.memoryUsage().rss;
// Resets the high-water mark to the current RSS (Linux: "5" to clear_refs).
writeFileSync('/proc/self/clear_refs', '5');
const t0 = performance.now();
let result = 0;
if (mode === 'lines') {
  await using text = await fs.openText(file);
  for await (const line of text.lines()) result += line.length;
} else {
  const pattern = mode === 'grep-literal' ? 'NEEDLE_AT_THE_END' : 'NEEDLE_[A-Z_]+END';
  for await (const m of fs.grep(pattern, { path: file })) result += m.spans.length;
}
const durationMs = performance.now() - t0;
const peak = highWater();
await fs.close();
process.stdout.write(`${JSON.stringify({ durationMs, peakGrowthBytes: Math.max(0, peak - before), result })}\n`);
