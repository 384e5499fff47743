import { execFileSync } from 'node:child_process';
import nodeFs from 'node:fs';
import path from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const spaces: Array<{ remove(): void }> = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const w of spaces.splice(0)) w.remove();
});

async function workspace() {
  const ws = tempWorkspace();
  spaces.push(ws);
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
  open.push(hfs);
  return { ws, hfs, abs: (p: string) => path.join(ws.root, p) };
}

/** Every path below `root` with its kind, mode and content, for exact comparisons. */
function tree(root: string, skip = new Set<string>()): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of nodeFs.readdirSync(path.join(root, dir)).sort()) {
      if (skip.has(name)) continue;
      const rel = dir ? `${dir}/${name}` : name;
      const st = nodeFs.lstatSync(path.join(root, rel));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        out[rel] = `dir ${mode}`;
        walk(rel);
      } else if (st.isSymbolicLink()) out[rel] = `link ${nodeFs.readlinkSync(path.join(root, rel))}`;
      else out[rel] = `file ${mode} ${nodeFs.readFileSync(path.join(root, rel)).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

function gitObjects(gitdir: string): number {
  return Number(execFileSync('git', ['--git-dir', gitdir, 'count-objects']).toString().split(' ')[0]);
}

describe('git snapshots', () => {
  it('restore makes the tree exactly the snapshot: created files removed, deleted back, modes, links, empty dirs', async () => {
    const { hfs, abs, ws } = await workspace();
    nodeFs.mkdirSync(abs('src/deep'), { recursive: true });
    nodeFs.mkdirSync(abs('empty/nested'), { recursive: true });
    nodeFs.writeFileSync(abs('src/a.ts'), 'export const a = 1;\n');
    nodeFs.writeFileSync(abs('src/deep/b.bin'), Buffer.from([0, 1, 2, 255]));
    nodeFs.writeFileSync(abs('run.sh'), '#!/bin/sh\n');
    nodeFs.chmodSync(abs('run.sh'), 0o751);
    nodeFs.chmodSync(abs('src/deep'), 0o700);
    nodeFs.symlinkSync('src/a.ts', abs('link-to-a'));
    const before = tree(ws.root);
    const snap = await hfs.snapshot('before');
    expect(snap.tag).toBe('before');
    nodeFs.writeFileSync(abs('src/a.ts'), 'broken');
    nodeFs.rmSync(abs('src/deep'), { recursive: true });
    nodeFs.writeFileSync(abs('new.txt'), 'created after');
    nodeFs.mkdirSync(abs('new-dir/x'), { recursive: true });
    nodeFs.rmSync(abs('empty'), { recursive: true });
    nodeFs.chmodSync(abs('run.sh'), 0o600);
    nodeFs.rmSync(abs('link-to-a'));
    nodeFs.writeFileSync(abs('link-to-a'), 'now a file');
    await hfs.restore(snap);
    expect(tree(ws.root)).toEqual(before);
    expect(hfs.capabilities.snapshotsKeepEmptyDirs).toBe(true);
  });

  it("keeps its git directory outside the workspace and never touches the workspace's own .git", async () => {
    const { hfs, abs, ws } = await workspace();
    execFileSync('git', ['init', '-q', ws.root]);
    nodeFs.writeFileSync(abs('tracked.txt'), 'v1\n');
    execFileSync('git', ['-C', ws.root, '-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.']);
    execFileSync('git', ['-C', ws.root, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init']);
    const dotGit = tree(abs('.git'));
    const snap = await hfs.snapshot();
    nodeFs.writeFileSync(abs('tracked.txt'), 'v2\n');
    await hfs.restore(snap);
    expect(tree(abs('.git'))).toEqual(dotGit);
    expect(nodeFs.readFileSync(abs('tracked.txt'), 'utf8')).toBe('v1\n');
    // The store is a real bare repository in the state directory.
    const gitdir = path.join(ws.state, 'snapshots.git');
    expect(
      execFileSync('git', ['--git-dir', gitdir, 'cat-file', '-t', snap.ref as string])
        .toString()
        .trim(),
    ).toBe('commit');
    expect(
      execFileSync('git', ['--git-dir', gitdir, 'ls-tree', '--name-only', snap.ref as string])
        .toString()
        .trim(),
    ).toBe('tracked.txt');
    expect(execFileSync('git', ['--git-dir', gitdir, 'fsck', '--no-dangling']).toString()).toBe('');
  });

  it('hashes only the files that changed since the last snapshot', async () => {
    const { hfs, abs, ws } = await workspace();
    for (let i = 0; i < 200; i++) {
      nodeFs.mkdirSync(abs(`d${i % 10}`), { recursive: true });
      nodeFs.writeFileSync(abs(`d${i % 10}/f${i}.txt`), `file ${i}\n`);
    }
    // Let the files age past the racy-git window, so their stat can be trusted.
    const past = new Date(Date.now() - 10_000);
    for (let i = 0; i < 200; i++) nodeFs.utimesSync(abs(`d${i % 10}/f${i}.txt`), past, past);
    await hfs.snapshot('first');
    const gitdir = path.join(ws.state, 'snapshots.git');
    const afterFirst = gitObjects(gitdir);
    for (const i of [3, 57, 111]) nodeFs.writeFileSync(abs(`d${i % 10}/f${i}.txt`), `changed ${i}\n`);
    const snap2 = await hfs.snapshot('second');
    // 3 new blobs, 3 changed directory trees, 1 root tree, 1 commit.
    expect(gitObjects(gitdir) - afterFirst).toBe(8);
    await hfs.restore(snap2);
    expect(nodeFs.readFileSync(abs('d7/f57.txt'), 'utf8')).toBe('changed 57\n');
  });

  it('a file changed in place within the same clock tick is still seen (racy git)', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('f.txt'), 'aaaa');
    const s1 = await hfs.snapshot();
    const st = nodeFs.statSync(abs('f.txt'));
    nodeFs.writeFileSync(abs('f.txt'), 'bbbb'); // same size, same inode
    nodeFs.utimesSync(abs('f.txt'), st.atime, st.mtime);
    const s2 = await hfs.snapshot();
    await hfs.restore(s1);
    expect(nodeFs.readFileSync(abs('f.txt'), 'utf8')).toBe('aaaa');
    await hfs.restore(s2);
    expect(nodeFs.readFileSync(abs('f.txt'), 'utf8')).toBe('bbbb');
  });

  it('lists and drops snapshots; an unknown id is ENOSNAPSHOT; snapshots survive a reopen', async () => {
    const { hfs, ws } = await workspace();
    const a = await hfs.snapshot('a');
    const b = await hfs.snapshot('b');
    expect((await hfs.listSnapshots()).map((s) => s.tag)).toEqual(['a', 'b']);
    await hfs.dropSnapshot(a);
    expect((await hfs.listSnapshots()).map((s) => s.id)).toEqual([b.id]);
    await expect(hfs.restore(a)).rejects.toMatchObject({ code: 'ENOSNAPSHOT', op: 'restore' });
    await expect(hfs.dropSnapshot('nope')).rejects.toMatchObject({ code: 'ENOSNAPSHOT', op: 'dropSnapshot' });
    const again = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
    open.push(again);
    expect((await again.listSnapshots()).map((s) => s.id)).toEqual([b.id]);
  });
});
