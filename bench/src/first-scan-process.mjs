/**
 * One first scan in a process of its own, for the context suite: the peak
 * resident memory a user's process reaches scanning the tree, free of what
 * the bench harness itself holds. Plain JavaScript so the measured process
 * loads nothing but Node and the built packages (no type stripper).
 *
 * Usage: node first-scan-process.mjs <root> <state dir>
 * Prints one JSON line: files, durationMs, maxRssBytes (the kernel's
 * ru_maxrss for the whole process life: workers, SQLite and all).
 */

import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';

const [root, stateDir] = process.argv.slice(2);
if (root === undefined || stateDir === undefined) throw new Error('usage: first-scan-process.mjs <root> <state dir>');
const fs = await HostFilesystem.open({ root, stateDir, readOnly: true });
const ctx = await createContext({ fs, store: join(stateDir, 'state.db'), profile: 'large', registry: { ignore: ['.git'] } });
const result = await ctx.scan();
const maxRssBytes = process.resourceUsage().maxRSS * 1024;
ctx.close();
await fs.close();
process.stdout.write(`${JSON.stringify({ files: result.files, durationMs: result.durationMs, maxRssBytes })}\n`);
