import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import nodeFs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const HOST_PACKAGE = path.join(import.meta.dirname, '..');
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) nodeFs.rmSync(t, { recursive: true, force: true });
});

interface Report {
  uid: number;
  first?: Record<string, string>;
  second?: Record<string, string>;
  error?: unknown;
  warnings: Array<{ code: string | undefined; message: string }>;
}

/**
 * A copy of the package's sources (so its worker script can be made
 * unreadable without touching the repository), a workspace of 200 files
 * (enough for the worker pool) and their expected hashes; then the child
 * digests them as uid 65534.
 */
function digestAsNobody(workerReadable: boolean): { report: Report; expected: Record<string, string> } {
  const base = nodeFs.mkdtempSync(path.join(os.tmpdir(), 'ctxfs-digest-workers-'));
  temps.push(base);
  nodeFs.chmodSync(base, 0o755);
  const copy = path.join(base, 'host');
  nodeFs.mkdirSync(copy);
  nodeFs.cpSync(path.join(HOST_PACKAGE, 'src'), path.join(copy, 'src'), { recursive: true });
  nodeFs.copyFileSync(path.join(HOST_PACKAGE, 'package.json'), path.join(copy, 'package.json'));
  nodeFs.symlinkSync(path.join(HOST_PACKAGE, 'node_modules'), path.join(copy, 'node_modules'));
  if (!workerReadable) nodeFs.chmodSync(path.join(copy, 'src', 'digest-worker.ts'), 0o000);
  const root = path.join(base, 'ws');
  nodeFs.mkdirSync(root);
  const expected: Record<string, string> = {};
  for (let i = 0; i < 200; i++) {
    const name = `f${String(i).padStart(3, '0')}.txt`;
    const content = `file ${i}\n`.repeat(i + 1);
    nodeFs.writeFileSync(path.join(root, name), content);
    expected[name] = createHash('sha256').update(content).digest('hex');
  }
  const state = path.join(base, 'state');
  nodeFs.mkdirSync(state);
  nodeFs.chownSync(state, 65534, 65534);
  const child = path.join(import.meta.dirname, 'fixtures', 'digest-without-workers.ts');
  const r = spawnSync(process.execPath, ['--conditions=ctxfs-source', child, '65534', path.join(copy, 'src', 'index.ts'), root, state], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return { report: JSON.parse(r.stdout) as Report, expected };
}

describe('digest workers that cannot start', () => {
  it('the digest falls back to the calling thread, right hashes, and says so once', () => {
    const { report, expected } = digestAsNobody(false);
    expect(report.uid).toBe(65534);
    expect(report.error).toBeUndefined();
    expect(report.first).toEqual(expected);
    expect(report.second).toEqual(expected);
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]?.code).toBe('CTXFS_DIGEST_WORKERS');
    expect(report.warnings[0]?.message).toMatch(/could not start: .*EACCES.*calling thread/);
  });

  it('with a readable worker script the same run uses the workers and warns of nothing', () => {
    const { report, expected } = digestAsNobody(true);
    expect(report.uid).toBe(65534);
    expect(report.first).toEqual(expected);
    expect(report.second).toEqual(expected);
    expect(report.warnings).toEqual([]);
  });
});
