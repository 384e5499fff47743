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

  it('a file past 2 GiB is snapshotted and restored a chunk at a time, byte for byte where it was written', { timeout: 180_000 }, async () => {
    const { hfs, abs } = await workspace();
    const size = 2 ** 31 + 4096;
    // Sparse: 2 GiB of zeros cost no disk, with marks at the start, across the 2 GiB line and at the end.
    const marks: Array<[number, string]> = [
      [0, 'start of the file'],
      [2 ** 31 - 5, 'across the 2 GiB line'],
      [size - 8, 'the end.'],
    ];
    const fd = nodeFs.openSync(abs('huge.bin'), 'w');
    for (const [at, text] of marks) nodeFs.writeSync(fd, text, at);
    nodeFs.closeSync(fd);
    expect(nodeFs.statSync(abs('huge.bin')).size).toBe(size);
    const s = await hfs.snapshot();
    nodeFs.writeFileSync(abs('huge.bin'), 'replaced\n');
    await hfs.restore(s);
    expect(nodeFs.statSync(abs('huge.bin')).size).toBe(size);
    const back = nodeFs.openSync(abs('huge.bin'), 'r');
    try {
      for (const [at, text] of marks) {
        const got = Buffer.alloc(text.length);
        nodeFs.readSync(back, got, 0, got.length, at);
        expect(got.toString(), text).toBe(text);
      }
    } finally {
      nodeFs.closeSync(back);
    }
  });

  it('a tag with braces and blank lines keeps its snapshot whole: tag, time and modes', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('secret.txt'), 'x\n', { mode: 0o600 });
    const tag = 'refactor {step 1}\n\n{"ctxfs":1}';
    const before = Date.now();
    const s = await hfs.snapshot(tag);
    const [listed] = await hfs.listSnapshots();
    expect(listed?.tag).toBe(tag);
    expect(listed?.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    nodeFs.chmodSync(abs('secret.txt'), 0o644);
    await hfs.restore(s);
    expect(nodeFs.statSync(abs('secret.txt')).mode & 0o777).toBe(0o600);
  });
});

/** Every object reachable from `commits`, computed by git itself (the oracle for the prune). */
function reachable(gitdir: string, ...commits: string[]): Set<string> {
  if (commits.length === 0) return new Set();
  const out = execFileSync('git', ['--git-dir', gitdir, 'rev-list', '--objects', ...commits]).toString();
  return new Set(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(0, 40)),
  );
}

/** The loose object files on disk, by oid. */
function looseObjects(gitdir: string): Set<string> {
  const out = new Set<string>();
  const objects = path.join(gitdir, 'objects');
  for (const fan of nodeFs.readdirSync(objects)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const name of nodeFs.readdirSync(path.join(objects, fan))) out.add(fan + name);
  }
  return out;
}

function fsck(gitdir: string): string {
  return execFileSync('git', ['--git-dir', gitdir, 'fsck', '--full', '--strict'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

function age(root: string): void {
  // Past the racy-git window, so the incremental cache trusts these files and reuses their oids.
  const past = new Date(Date.now() - 10_000);
  const walk = (dir: string) => {
    for (const d of nodeFs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else nodeFs.utimesSync(p, past, past);
    }
  };
  walk(root);
}

describe('garbage collection of dropped snapshots', () => {
  it('dropping A deletes exactly the objects only A reached and keeps everything B reaches', async () => {
    const { hfs, abs, ws } = await workspace();
    const gitdir = path.join(ws.state, 'snapshots.git');
    nodeFs.mkdirSync(abs('src/lib'), { recursive: true });
    nodeFs.mkdirSync(abs('empty'));
    for (let i = 0; i < 30; i++) nodeFs.writeFileSync(abs(`src/lib/f${i}.ts`), `export const v${i} = ${i};\n`);
    nodeFs.writeFileSync(abs('README.md'), '# A\n');
    nodeFs.writeFileSync(abs('gone.txt'), 'only in A\n');
    age(ws.root);
    const a = await hfs.snapshot('a');
    nodeFs.writeFileSync(abs('README.md'), '# B\n');
    nodeFs.writeFileSync(abs('src/lib/f7.ts'), 'changed\n');
    nodeFs.rmSync(abs('gone.txt'));
    nodeFs.writeFileSync(abs('new.txt'), 'only in B\n');
    const b = await hfs.snapshot('b');
    const inB = tree(ws.root);
    const objA = reachable(gitdir, a.ref as string);
    const objB = reachable(gitdir, b.ref as string);
    const onlyA = [...objA].filter((o) => !objB.has(o));
    // commit, root tree, src, src/lib, README, f7, gone.txt: shared blobs and the empty dir's tree are not among them.
    expect(onlyA).toHaveLength(7);
    expect(looseObjects(gitdir)).toEqual(new Set([...objA, ...objB]));

    await hfs.dropSnapshot(a);

    expect(looseObjects(gitdir)).toEqual(objB);
    for (const o of onlyA) {
      expect(() => execFileSync('git', ['--git-dir', gitdir, 'cat-file', '-e', o], { stdio: 'ignore' })).toThrow();
    }
    expect(fsck(gitdir)).toBe('');
    nodeFs.rmSync(abs('src'), { recursive: true });
    nodeFs.writeFileSync(abs('README.md'), 'scribbled');
    await hfs.restore(b);
    expect(tree(ws.root)).toEqual(inB);
  });

  it('dropping every snapshot leaves no loose objects', async () => {
    const { hfs, abs, ws } = await workspace();
    const gitdir = path.join(ws.state, 'snapshots.git');
    nodeFs.mkdirSync(abs('d/e'), { recursive: true });
    nodeFs.writeFileSync(abs('d/x.txt'), 'x');
    const s1 = await hfs.snapshot();
    nodeFs.writeFileSync(abs('d/y.txt'), 'y');
    const s2 = await hfs.snapshot();
    const s3 = await hfs.snapshot(); // same tree as s2: only a new commit
    expect(gitObjects(gitdir)).toBeGreaterThan(5);
    for (const s of [s2, s1, s3]) await hfs.dropSnapshot(s);
    expect(await hfs.listSnapshots()).toEqual([]);
    expect(gitObjects(gitdir)).toBe(0);
    expect(nodeFs.readdirSync(path.join(gitdir, 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual([]);
    expect(fsck(gitdir)).toBe('');
  });

  it('20 snapshot/drop cycles of a changing tree keep exactly the live objects', async () => {
    const { hfs, abs, ws } = await workspace();
    const gitdir = path.join(ws.state, 'snapshots.git');
    for (let i = 0; i < 50; i++) {
      nodeFs.mkdirSync(abs(`d${i % 5}`), { recursive: true });
      nodeFs.writeFileSync(abs(`d${i % 5}/f${i}.txt`), `base ${i}\n`);
    }
    age(ws.root);
    const base = await hfs.snapshot('base'); // kept throughout: its objects are shared with every cycle
    const inBase = tree(ws.root);
    let prev = base;
    let first = true;
    const counts: number[] = [];
    for (let round = 0; round < 20; round++) {
      for (let k = 0; k < 5; k++) {
        const n = (round * 7 + k * 11) % 50;
        nodeFs.writeFileSync(abs(`d${n % 5}/f${n}.txt`), `round ${round} ${k}\n`);
      }
      nodeFs.writeFileSync(abs('extra.txt'), `extra ${round}\n`);
      const s = await hfs.snapshot(`r${round}`);
      if (!first) await hfs.dropSnapshot(prev);
      first = false;
      prev = s;
      const live = reachable(gitdir, base.ref as string, s.ref as string);
      expect(looseObjects(gitdir)).toEqual(live);
      counts.push(live.size);
    }
    // Base (50 blobs, 5 dirs, root, commit = 57) plus at most one other whole
    // snapshot (51 blobs, 5 dirs, root, commit = 58); without collection the
    // store would hold every round's ~13 new objects (57 + 20 * 13).
    expect(Math.max(...counts)).toBeLessThanOrEqual(57 + 58);
    expect(counts.at(-1)).toBeLessThan(57 + 20 * 5);
    expect(fsck(gitdir)).toBe('');
    await hfs.restore(base);
    expect(tree(ws.root)).toEqual(inBase);
  });

  it('after a prune the incremental cache never reuses a deleted blob (same store and another process)', async () => {
    const { hfs, abs, ws } = await workspace();
    const gitdir = path.join(ws.state, 'snapshots.git');
    nodeFs.mkdirSync(abs('a/b'), { recursive: true });
    nodeFs.mkdirSync(abs('keep-empty'));
    for (let i = 0; i < 20; i++) nodeFs.writeFileSync(abs(`a/b/f${i}.txt`), `content ${i}\n`);
    age(ws.root);
    const inWs = tree(ws.root);
    const s1 = await hfs.snapshot();
    // Every object of s1 goes; the cache still holds their oids for these unchanged files.
    await hfs.dropSnapshot(s1);
    expect(gitObjects(gitdir)).toBe(0);
    const s2 = await hfs.snapshot();
    expect(fsck(gitdir)).toBe('');
    expect(looseObjects(gitdir)).toEqual(reachable(gitdir, s2.ref as string));
    nodeFs.rmSync(abs('a'), { recursive: true });
    await hfs.restore(s2);
    expect(tree(ws.root)).toEqual(inWs);

    // A second store on the same state directory has its own in-memory cache;
    // a prune by the first one must not leave it pointing at deleted objects.
    age(ws.root);
    const other = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
    open.push(other);
    const s3 = await other.snapshot();
    await hfs.dropSnapshot(s2);
    await hfs.dropSnapshot(s3.id);
    expect(gitObjects(gitdir)).toBe(0);
    const s4 = await other.snapshot();
    expect(fsck(gitdir)).toBe('');
    nodeFs.rmSync(abs('a'), { recursive: true });
    await hfs.restore(s4);
    expect(tree(ws.root)).toEqual(inWs);
  });

  it('a prune that cannot read every ref deletes nothing and does not fail the drop; foreign refs keep their objects', async () => {
    const { hfs, abs, ws } = await workspace();
    const gitdir = path.join(ws.state, 'snapshots.git');
    nodeFs.writeFileSync(abs('x.txt'), 'x');
    const a = await hfs.snapshot();
    nodeFs.writeFileSync(abs('x.txt'), 'y');
    const b = await hfs.snapshot();
    nodeFs.writeFileSync(abs('x.txt'), 'z');
    const c = await hfs.snapshot();
    const before = looseObjects(gitdir);
    nodeFs.mkdirSync(path.join(gitdir, 'refs/other'), { recursive: true });
    nodeFs.writeFileSync(path.join(gitdir, 'refs/other/broken'), 'not an oid\n');
    await hfs.dropSnapshot(a); // the ref goes, the prune gives up before deleting anything
    expect((await hfs.listSnapshots()).map((s) => s.id)).toEqual([b.id, c.id]);
    expect(looseObjects(gitdir)).toEqual(before);
    // A ref that is not a snapshot still keeps what it reaches.
    nodeFs.writeFileSync(path.join(gitdir, 'refs/other/broken'), `${b.ref}\n`);
    await hfs.dropSnapshot(b);
    await hfs.dropSnapshot(c);
    expect(looseObjects(gitdir)).toEqual(reachable(gitdir, b.ref as string));
    expect(fsck(gitdir)).toBe('');
  });
});
