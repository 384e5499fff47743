import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostFilesystem, isTempName } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { makeContent, validGeneration } from './fixtures/content.ts';
import { tempWorkspace } from './helpers.ts';

const KILLS = Number(process.env.CTXFS_CRASH_KILLS ?? 200);
const WORKERS = 2;
const child = path.join(import.meta.dirname, 'fixtures', 'crash-writer.ts');
// The compile cache makes each child start in ~0.1 s instead of ~0.3 s.
const env = { ...process.env, NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'ctxfs-crash-ncc') };

interface Outcome {
  kills: number;
  tempsFound: number;
  generations: Set<number>;
}

async function killLoop(iterations: number): Promise<Outcome> {
  const ws = tempWorkspace('ctxfs-crash-');
  const out: Outcome = { kills: 0, tempsFound: 0, generations: new Set() };
  try {
    fs.writeFileSync(path.join(ws.root, 'target.bin'), makeContent(0));
    let gen = 0;
    for (let i = 0; i < iterations; i++) {
      const proc = spawn(process.execPath, ['--conditions=ctxfs-source', child, ws.root, ws.state, String(gen * 1000)], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        proc.stdout.once('data', () => resolve());
        proc.once('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
      });
      // A random instant inside the write loop: staging, fsync, rename or between writes.
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
      out.kills++;
      const bytes = fs.readFileSync(path.join(ws.root, 'target.bin'));
      const g = validGeneration(bytes);
      expect(g, `after kill ${i} the file is neither the old nor the new content`).toBeDefined();
      out.generations.add(g as number);
      if (fs.readdirSync(ws.root).some(isTempName)) out.tempsFound++;
      // The next start removes what the dead writer left behind.
      const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
      await hfs.close();
      expect(fs.readdirSync(ws.root).filter(isTempName)).toEqual([]);
      gen = i + 1;
    }
  } finally {
    ws.remove();
  }
  return out;
}

describe('crash safety (SIGKILL at random instants)', () => {
  it(`leaves the old or the new content after each of ${KILLS} kills, and no temp file after the next start`, async () => {
    const per = Math.ceil(KILLS / WORKERS);
    const results = await Promise.all(Array.from({ length: WORKERS }, () => killLoop(per)));
    const kills = results.reduce((n, r) => n + r.kills, 0);
    const temps = results.reduce((n, r) => n + r.tempsFound, 0);
    const gens = results.reduce((n, r) => n + r.generations.size, 0);
    console.log(`crash test: ${kills} kills, ${temps} left a temp file (cleaned at next start), ${gens} distinct surviving generations`);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    // The kills must land mid-write often enough to mean something.
    expect(temps).toBeGreaterThan(0);
  }, 240_000);
});
