/**
 * Campaign on the CLI leaving SQLite's write-ahead log for the next process
 * (`checkpointOnClose: false`): commands run at once, a command killed
 * mid-way, the state directory removed between commands, and the log's
 * size over many commands; a library user's store still folds its log in
 * on close.
 */

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { SHORT_LIVED_WAL_PAGES } from '../../context/src/state/sqlite-store.ts';
import { BIN, ctxfs, type Project, useProject } from './support/cli.ts';

const FILES = 12;
const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${i}.txt`, `value ${i} = old\n${'filler line\n'.repeat(50)}`]));

/** Runs `ctxfs args…` in the project without waiting; resolves with its exit code, or kills it with SIGKILL after `killAfterMs`. */
function start(
  project: Project,
  args: readonly string[],
  killAfterMs?: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: project.root, env: project.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('the CLI leaves the WAL for the next process', { timeout: 120_000 }, () => {
  const project = useProject(files);
  const stateDir = () => join(project.base, '.proj.ctxfs');
  const wal = () => join(stateDir(), 'state.db-wal');
  const json = <T>(args: readonly string[]): T => {
    const r = ctxfs(project, ['--json', ...args]);
    expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  const verified = (): void => {
    const r = ctxfs(project, ['--json', 'audit', 'verify']);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { ok: boolean }).ok).toBe(true);
  };

  it(`${FILES} replaces and ${FILES} reads at once: every change in the files, in their histories and in the audit; the chain verifies`, async () => {
    const runs = await Promise.all([
      ...Array.from({ length: FILES }, (_, i) => start(project, ['replace', `f${i}.txt`, `value ${i} = old`, `value ${i} = new`, '-m', `bump ${i}`])),
      ...Array.from({ length: FILES }, (_, i) => start(project, ['cat', `f${(i + 1) % FILES}.txt`, '--lines', '1:2'])),
    ]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    for (let i = 0; i < FILES; i++) {
      expect(readFileSync(join(project.root, `f${i}.txt`), 'utf8')).toMatch(new RegExp(`^value ${i} = new\\n`));
      const history = json<{ versions: Array<{ message?: string }> }>(['history', `f${i}.txt`]);
      expect(history.versions.map((v) => v.message)).toContain(`bump ${i}`);
    }
    const audit = json<{ records: Array<{ op: string; paths?: string[]; result: string }> }>(['audit', '--limit', '500']);
    const replaced = audit.records.filter((r) => r.op === 'replace' && r.result === 'ok').map((r) => r.paths?.[0]);
    expect(replaced).toHaveLength(FILES);
    expect(new Set(replaced)).toEqual(new Set(Array.from({ length: FILES }, (_, i) => `f${i}.txt`)));
    expect(audit.records.filter((r) => r.op === 'readLines').length).toBeGreaterThanOrEqual(FILES);
    verified();
  });

  it('16 replaces of one file at once, each its own line: all 16 land, each a version in the history, and the chain verifies', async () => {
    project.write('same.txt', Array.from({ length: 16 }, (_, i) => `k${i}=0\n`).join(''));
    const runs = await Promise.all(Array.from({ length: 16 }, (_, i) => start(project, ['replace', 'same.txt', `k${i}=0`, `k${i}=1`])));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'same.txt'), 'utf8')).toBe(Array.from({ length: 16 }, (_, i) => `k${i}=1\n`).join(''));
    expect(json<{ versions: unknown[] }>(['history', 'same.txt', '--limit', '50']).versions).toHaveLength(17);
    verified();
  });

  it('commands killed with SIGKILL part-way: the next command runs, its change is recorded, and the chain verifies', async () => {
    const killed = await Promise.all(
      Array.from({ length: 8 }, (_, i) => start(project, ['replace', `f${i}.txt`, 'filler line', `filler ${i}`, '--first'], 80 + i * 40)),
    );
    // Some may have finished before their kill: either way nothing is left half-done for the next one.
    for (const r of killed) expect(r.signal === 'SIGKILL' || r.code === 0, r.stderr).toBe(true);
    const after = ctxfs(project, ['replace', 'f11.txt', 'value 11 = new', 'value 11 = after-kill']);
    expect(after.status, after.stderr).toBe(0);
    const history = json<{ versions: Array<{ seq: number }> }>(['history', 'f11.txt']);
    expect(history.versions.length).toBeGreaterThanOrEqual(3);
    verified();
  });

  it(`after 60 more commands the log holds about ${SHORT_LIVED_WAL_PAGES} pages at most, and its rows are all readable by another connection`, async () => {
    for (let batch = 0; batch < 6; batch++) {
      const runs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => start(project, ['cat', `f${(batch + i) % FILES}.txt`, '--lines', `${i + 1}:${i + 3}`])),
      );
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
    }
    expect(existsSync(wal())).toBe(true);
    // A few large transactions may go past the mark before the fold: a generous bound, far below SQLite's default of 1,000 pages.
    expect(statSync(wal()).size).toBeLessThanOrEqual(4 * SHORT_LIVED_WAL_PAGES * (4096 + 24) + 32);
    const db = new DatabaseSync(join(stateDir(), 'state.db'), { readOnly: true });
    try {
      const { n } = db.prepare("SELECT count(*) AS n FROM audit WHERE op = 'readLines'").get() as { n: number };
      expect(n).toBeGreaterThanOrEqual(FILES + 60);
    } finally {
      db.close();
    }
    verified();
  });

  it('the state directory removed between commands: the next command makes a new one and runs', () => {
    rmSync(stateDir(), { recursive: true, force: true });
    const r = ctxfs(project, ['replace', 'f0.txt', 'value 0 = new', 'value 0 = fresh']);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(stateDir(), 'state.db'))).toBe(true);
    expect(json<{ versions: unknown[] }>(['history', 'f0.txt']).versions.length).toBeGreaterThanOrEqual(1);
    verified();
  });

  it('a library user’s default store still folds its log in on close: no WAL is left', async () => {
    const fs = new HostFilesystem({ root: project.root });
    const ctx = await createContext({ fs, safety: { policyFiles: false } });
    try {
      await ctx.readFile('f1.txt');
      await ctx.writeFile('f1.txt', 'library\n');
      expect(existsSync(wal())).toBe(true);
    } finally {
      await ctx.close();
      await fs.close();
    }
    expect(existsSync(wal()) ? statSync(wal()).size : 0).toBe(0);
  });
});
