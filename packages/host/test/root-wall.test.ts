import { execFileSync, spawnSync } from 'node:child_process';
import nodeFs from 'node:fs';
import path from 'node:path';
import { collect } from '@ctxfs/conformance';
import { HostFilesystem, isTempName } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const spaces: Array<{ remove(): void }> = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const w of spaces.splice(0)) w.remove();
});

async function workspace(options: Partial<ConstructorParameters<typeof HostFilesystem>[0]> = {}) {
  const ws = tempWorkspace();
  spaces.push(ws);
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, ...options });
  open.push(hfs);
  return { ws, hfs, abs: (p: string) => path.join(ws.root, p) };
}

const GREP_MODES = ['auto', 'js'] as const;

describe('root wall: paths', () => {
  it('refuses .., absolute paths, NUL and control characters before any I/O', async () => {
    const { hfs } = await workspace();
    for (const p of ['../x', 'a/../../x', '/etc/passwd', 'C:\\x']) await expect(hfs.read(p)).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    for (const p of ['a\u0000b', 'a\nb']) await expect(hfs.read(p)).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('construction reports a missing root or a file as root, with a remedy', async () => {
    const ws = tempWorkspace();
    spaces.push(ws);
    expect(() => new HostFilesystem({ root: path.join(ws.base, 'nope'), stateDir: ws.state })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    nodeFs.writeFileSync(path.join(ws.base, 'file'), '');
    expect(() => new HostFilesystem({ root: path.join(ws.base, 'file'), stateDir: ws.state })).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => new HostFilesystem({ root: ws.root, stateDir: path.join(ws.root, '.state') })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});

describe('hostile trees', () => {
  it('a symlink to /etc inside the root is never followed', async () => {
    for (const grep of GREP_MODES) {
      const { hfs, abs } = await workspace({ grep });
      nodeFs.symlinkSync('/etc', abs('etc-link'));
      nodeFs.writeFileSync(abs('ok.txt'), 'root: fine\n');
      await expect(hfs.read('etc-link/passwd')).rejects.toMatchObject({ code: 'EPATHESCAPE', path: 'etc-link/passwd' });
      await expect(hfs.list('etc-link')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      await expect(hfs.write('etc-link/ctxfs-pwned', 'x')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      await expect(hfs.copy('etc-link/passwd', 'stolen.txt')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      // realpath: where the link leads is out of the root, and is not told.
      for (const p of ['etc-link', 'etc-link/passwd', 'etc-link/not-there']) {
        const err = await hfs.realpath(p).catch((e: unknown) => e as Error & { code?: string });
        expect(err, p).toMatchObject({ code: 'EPATHESCAPE' });
        expect(String((err as Error).message)).not.toContain('/etc');
      }
      expect(nodeFs.existsSync('/etc/ctxfs-pwned')).toBe(false);
      expect((await hfs.stat('etc-link')).kind).toBe('symlink');
      expect(await hfs.list()).toEqual([
        { name: 'etc-link', path: 'etc-link', kind: 'symlink' },
        { name: 'ok.txt', path: 'ok.txt', kind: 'file' },
      ]);
      expect((await collect(hfs.glob('**'))).map((m) => m.path)).toEqual(['etc-link', 'ok.txt']);
      expect((await collect(hfs.grep('root:'))).map((m) => m.path)).toEqual(['ok.txt']);
      await hfs.delete('etc-link'); // removes the link, not /etc
      expect(nodeFs.existsSync('/etc/passwd')).toBe(true);
    }
  });

  it('a root swapped for a link outside: a top-level name there or missing is refused as an escape, never told missing', async () => {
    const { ws, hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('inside.txt'), 'in');
    // The root in place: a missing top-level name (a listing's `.gitignore`) is just missing.
    await expect(hfs.readBytes('.gitignore')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await hfs.exists('.gitignore')).toBe(false);
    const outside = path.join(ws.base, 'outside');
    nodeFs.mkdirSync(outside);
    nodeFs.writeFileSync(path.join(outside, 'there.txt'), 'secret');
    // A missing name behind a link to outside is not told missing either.
    nodeFs.symlinkSync(outside, abs('out-link'));
    for (const p of ['out-link/not-there', 'out-link/deeper/not-there']) await expect(hfs.exists(p), p).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    nodeFs.unlinkSync(abs('out-link'));
    nodeFs.renameSync(ws.root, path.join(ws.base, 'moved'));
    nodeFs.symlinkSync(outside, ws.root);
    for (const p of ['.gitignore', 'inside.txt', 'there.txt']) {
      const err = await hfs.readBytes(p).catch((e: unknown) => e as Error & { code?: string });
      expect(err, p).toMatchObject({ code: 'EPATHESCAPE' });
      expect(String((err as Error).message), p).not.toContain(outside);
    }
    await expect(hfs.stat('not-there')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    for (const p of ['.gitignore', 'not-there', 'there.txt']) await expect(hfs.exists(p), p).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    // The same name in a directory that took the root's place is looked up there, by the landing check.
    nodeFs.unlinkSync(ws.root);
    nodeFs.mkdirSync(ws.root);
    await expect(hfs.readBytes('.gitignore')).rejects.toMatchObject({ code: 'ENOENT' });
    nodeFs.rmdirSync(ws.root);
    nodeFs.renameSync(path.join(ws.base, 'moved'), ws.root);
    await expect(hfs.readBytes('.gitignore')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(Buffer.from(await hfs.readBytes('inside.txt')).toString()).toBe('in');
  });

  it('realpath follows links inside the root to where the kernel lands, at any depth', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.mkdirSync(abs('a/b/c'), { recursive: true });
    nodeFs.writeFileSync(abs('a/b/c/f.txt'), 'f');
    nodeFs.symlinkSync('a/b', abs('ab'));
    nodeFs.symlinkSync('../ab/c', abs('a/c-link'));
    expect(await hfs.realpath('a/c-link/f.txt')).toBe('a/b/c/f.txt');
    expect(await hfs.realpath('ab/c')).toBe('a/b/c');
    expect(await hfs.realpath('a/b/c/f.txt')).toBe('a/b/c/f.txt');
    // Gone, or never there: as realpath answered before, the nearest existing directory's real path and the rest.
    expect(await hfs.realpath('ab/c/new.txt')).toBe('a/b/c/new.txt');
  });

  it('delete of a link removes the link, never what it leads to: dangling, to a directory, with or without recursive', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.mkdirSync(abs('real/sub'), { recursive: true });
    nodeFs.writeFileSync(abs('real/sub/kept.txt'), 'kept\n');
    nodeFs.symlinkSync('nowhere.txt', abs('dangling'));
    nodeFs.symlinkSync('real', abs('to-dir'));
    nodeFs.symlinkSync('real', abs('to-dir-recursive'));
    await hfs.delete('dangling');
    await hfs.delete('to-dir');
    await hfs.delete('to-dir-recursive', { recursive: true });
    expect(nodeFs.readdirSync(abs('')).sort()).toEqual(['real']);
    expect(nodeFs.readFileSync(abs('real/sub/kept.txt'), 'utf8')).toBe('kept\n');
  });

  it('the refuse policy refuses every symlink, even one pointing inside', async () => {
    const { hfs, abs } = await workspace({ symlinks: 'refuse' });
    expect(hfs.capabilities.symlinks).toBe(false);
    nodeFs.mkdirSync(abs('real'));
    nodeFs.writeFileSync(abs('real/f.txt'), 'x');
    nodeFs.symlinkSync('real', abs('alias'));
    nodeFs.symlinkSync('real/f.txt', abs('f-link'));
    await expect(hfs.read('alias/f.txt')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await expect(hfs.read('f-link')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await expect(hfs.write('f-link', 'y')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    expect((await hfs.read('real/f.txt')).text).toBe('x');
  });

  it('symlink loops end in ELOOP, never in an endless walk', async () => {
    for (const grep of GREP_MODES) {
      const { hfs, abs } = await workspace({ grep });
      nodeFs.symlinkSync('b', abs('a'));
      nodeFs.symlinkSync('a', abs('b'));
      nodeFs.mkdirSync(abs('d'));
      nodeFs.symlinkSync('..', abs('d/up'));
      nodeFs.writeFileSync(abs('d/f.txt'), 'loop\n');
      await expect(hfs.read('a')).rejects.toMatchObject({ code: 'ELOOP' });
      expect((await collect(hfs.glob('**'))).map((m) => m.path)).toEqual(['a', 'b', 'd', 'd/f.txt', 'd/up']);
      expect((await collect(hfs.grep('loop'))).map((m) => m.path)).toEqual(['d/f.txt']);
      expect((await hfs.list('d/up/d/up/d')).map((e) => e.name)).toEqual(['f.txt', 'up']);
      // A loop stats as the link it is: listings and walks with metadata (a scan) go on past it.
      expect((await hfs.stat('a')).kind).toBe('symlink');
      expect((await hfs.list('', { stat: true })).map((e) => [e.name, e.stat?.kind])).toEqual([
        ['a', 'symlink'],
        ['b', 'symlink'],
        ['d', 'directory'],
      ]);
      const walked: string[] = [];
      for await (const batch of hfs.walk('', { stat: true })) walked.push(...batch.map((e) => `${e.path}:${e.stat?.kind}`));
      expect(walked.sort()).toEqual(['a:symlink', 'b:symlink', 'd/f.txt:file', 'd/up:directory', 'd:directory']);
    }
  });

  it('a directory swapped for a symlink mid-write cannot redirect the write outside', async () => {
    const { ws, hfs, abs } = await workspace();
    const outside = path.join(ws.base, 'outside');
    nodeFs.mkdirSync(outside);
    nodeFs.mkdirSync(abs('sub'));
    const w = await hfs.openWrite('sub/f.txt');
    await w.write(new TextEncoder().encode('payload'));
    nodeFs.renameSync(abs('sub'), abs('sub-moved'));
    nodeFs.symlinkSync(outside, abs('sub'));
    await w.close();
    expect(nodeFs.readdirSync(outside)).toEqual([]);
    expect(nodeFs.readFileSync(abs('sub-moved/f.txt'), 'utf8')).toBe('payload');
    // A new operation through the swapped path is refused.
    await expect(hfs.write('sub/g.txt', 'x')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await expect(hfs.read('sub/anything')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await expect(hfs.exists('sub/anything')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
  });

  it('a directory swapped for a symlink outside while a walk is paused is never entered: nothing outside is listed', async () => {
    const { ws, hfs, abs } = await workspace();
    const outside = path.join(ws.base, 'outside-walk');
    nodeFs.mkdirSync(path.join(outside, 'deep'), { recursive: true });
    nodeFs.writeFileSync(path.join(outside, 'deep', 'secret.txt'), 'secret');
    // More entries in `a` than one batch of the walk: the walk pauses (its descriptors closed) before it reaches `b`, and `c` below it.
    nodeFs.mkdirSync(abs('a'));
    for (let i = 0; i < 1200; i++) nodeFs.writeFileSync(abs(`a/f${i}.txt`), '');
    for (const d of ['b/deep', 'c/b/deep']) {
      nodeFs.mkdirSync(abs(d), { recursive: true });
      nodeFs.writeFileSync(abs(`${d}/inside.txt`), 'inside');
    }
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const m of hfs.glob('**', { dot: true })) {
        seen.push(m.path);
        if (seen.length === 1) {
          for (const d of ['b', 'c/b']) {
            nodeFs.renameSync(abs(d), abs(`${d}-moved`));
            nodeFs.symlinkSync(outside, abs(d));
          }
        }
      }
    } catch (err) {
      error = err;
    }
    if (error !== undefined) expect(error).toMatchObject({ code: 'EPATHESCAPE' });
    expect(seen.filter((p) => p.includes('secret'))).toEqual([]);
    expect(seen.length).toBeGreaterThan(1000);
  });

  it('a reader keeps the file it opened when the path is swapped for a link outside', async () => {
    const { ws, hfs, abs } = await workspace();
    const secret = path.join(ws.base, 'secret.txt');
    nodeFs.writeFileSync(secret, 'SECRET');
    nodeFs.writeFileSync(abs('f.txt'), 'public');
    const r = await hfs.openRead('f.txt');
    nodeFs.rmSync(abs('f.txt'));
    nodeFs.symlinkSync(secret, abs('f.txt'));
    expect(new TextDecoder().decode(await r.read())).toBe('public');
    await r.close();
    await expect(hfs.read('f.txt')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
  });

  it('a FIFO is listed as other, refused by reads without blocking, skipped by grep and snapshots', async () => {
    for (const grep of GREP_MODES) {
      const { hfs, abs } = await workspace({ grep });
      execFileSync('mkfifo', [abs('pipe')]);
      nodeFs.writeFileSync(abs('f.txt'), 'data\n');
      expect(await hfs.list()).toContainEqual({ name: 'pipe', path: 'pipe', kind: 'other' });
      await expect(hfs.read('pipe')).rejects.toMatchObject({ code: 'EINVAL' });
      await expect(hfs.readBytes('pipe')).rejects.toMatchObject({ code: 'EINVAL' });
      expect((await collect(hfs.grep('data'))).map((m) => m.path)).toEqual(['f.txt']);
      const snap = await hfs.snapshot();
      await hfs.restore(snap);
      expect(nodeFs.statSync(abs('pipe')).isFIFO()).toBe(true);
    }
  });

  it('a recursive copy of a tree holding a FIFO refuses the copy before anything is written, fresh or merged', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.mkdirSync(abs('lib/sub'), { recursive: true });
    nodeFs.writeFileSync(abs('lib/a.txt'), 'a');
    execFileSync('mkfifo', [abs('lib/sub/pipe')]);
    nodeFs.mkdirSync(abs('merge'));
    for (const to of ['lc', 'merge']) {
      const err = await hfs.copy('lib', to, { recursive: true }).catch((e: unknown) => e);
      expect(err, to).toMatchObject({ code: 'EINVAL', op: 'copy', path: 'lib/sub/pipe', dest: `${to}/sub/pipe` });
      expect((err as Error).message).toMatch(/special file.*nothing was copied/);
    }
    expect(nodeFs.existsSync(abs('lc'))).toBe(false);
    expect(nodeFs.readdirSync(abs('merge'))).toEqual([]);
  });

  it('a recursive copy: an absolute link inside the root keeps its text; an absolute one out of it refuses the copy and is not told', async () => {
    const { ws, hfs, abs } = await workspace();
    nodeFs.mkdirSync(abs('lib'));
    nodeFs.writeFileSync(abs('lib/a.txt'), 'a');
    nodeFs.symlinkSync(abs('lib/a.txt'), abs('lib/abs'));
    await hfs.copy('lib', 'lc', { recursive: true });
    expect(nodeFs.readlinkSync(abs('lc/abs'))).toBe(path.join(nodeFs.realpathSync(ws.root), 'lib/a.txt'));
    expect(nodeFs.readlinkSync(abs('lib/abs'))).toBe(abs('lib/a.txt'));
    nodeFs.symlinkSync('/etc/passwd', abs('lib/out'));
    const err = await hfs.copy('lib', 'lc2', { recursive: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'EPATHESCAPE', path: 'lib/out' });
    expect((err as Error).message).not.toContain('/etc');
    expect(nodeFs.existsSync(abs('lc2'))).toBe(false);
  });

  it('names with newlines or invalid UTF-8 bytes are left out of listings, glob, grep and snapshots, and left alone', async () => {
    for (const grep of GREP_MODES) {
      const { ws, hfs, abs } = await workspace({ grep });
      const rootBuf = Buffer.from(ws.root);
      const bad = Buffer.concat([rootBuf, Buffer.from('/bad'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);
      nodeFs.writeFileSync(bad, 'needle\n');
      nodeFs.writeFileSync(abs('new\nline.txt'), 'needle\n');
      nodeFs.writeFileSync(abs('good.txt'), 'needle\n');
      expect((await hfs.list()).map((e) => e.name)).toEqual(['good.txt']);
      expect((await collect(hfs.glob('**'))).map((m) => m.path)).toEqual(['good.txt']);
      expect((await collect(hfs.grep('needle'))).map((m) => m.path)).toEqual(['good.txt']);
      const snap = await hfs.snapshot();
      await hfs.write('good.txt', 'changed');
      await hfs.restore(snap);
      expect(nodeFs.readFileSync(abs('good.txt'), 'utf8')).toBe('needle\n');
      expect(nodeFs.existsSync(bad)).toBe(true);
      expect(nodeFs.existsSync(abs('new\nline.txt'))).toBe(true);
    }
  });

  it('an unreadable file, a read-only directory and a locked root, as an unprivileged user', () => {
    const ws = tempWorkspace();
    spaces.push(ws);
    nodeFs.chmodSync(ws.base, 0o755);
    nodeFs.chmodSync(ws.root, 0o755);
    nodeFs.mkdirSync(ws.state);
    nodeFs.chownSync(ws.state, 65534, 65534);
    nodeFs.chownSync(ws.root, 65534, 65534);
    nodeFs.writeFileSync(path.join(ws.root, 'secret.txt'), 'needle secret\n');
    nodeFs.chmodSync(path.join(ws.root, 'secret.txt'), 0o000);
    nodeFs.writeFileSync(path.join(ws.root, 'readable.txt'), 'needle\n');
    nodeFs.mkdirSync(path.join(ws.root, 'ro-dir'), 0o555);
    nodeFs.mkdirSync(path.join(ws.root, 'closed-dir'), 0o000);
    const locked = path.join(ws.base, 'locked');
    nodeFs.mkdirSync(locked, 0o000);
    const child = path.join(import.meta.dirname, 'fixtures', 'unprivileged.ts');
    const r = spawnSync(process.execPath, ['--conditions=ctxfs-source', child, '65534', ws.root, ws.state, locked], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
    expect(report.uid).toBe(65534);
    expect(report.lockedRoot).toMatchObject({ code: 'EACCES', op: 'open' });
    expect(String(report.lockedRoot?.hint)).toMatch(/chmod/);
    expect(report.stat).toEqual({ ok: true, value: 0 });
    expect(report.read).toMatchObject({ code: 'EACCES', op: 'read', path: 'secret.txt' });
    expect(report.readBytes).toMatchObject({ code: 'EACCES', op: 'readBytes', path: 'secret.txt' });
    expect(report.list).toEqual({ ok: true, value: ['closed-dir', 'readable.txt', 'ro-dir', 'secret.txt'] });
    expect(report.grepJs).toEqual({ ok: true, value: ['readable.txt'] });
    expect(report.grepRg).toEqual({ ok: true, value: ['readable.txt'] });
    expect(report.writeInReadOnlyDir).toMatchObject({ code: 'EACCES', op: 'write', path: 'ro-dir/new.txt' });
    expect(report.listUnreadableDir).toMatchObject({ code: 'EACCES', op: 'list' });
    expect(report.digest).toEqual({ ok: true, value: ['EACCES digest', 'OK'] });
    expect(report.digestInWorkers).toEqual({ ok: true, value: ['OK', 'EACCES digest'] });
    // An unreadable directory is listed and passed over, as find and the JavaScript walk both do.
    expect(report.walk).toEqual({
      ok: true,
      value: expect.arrayContaining(['closed-dir directory', 'readable.txt file', 'ro-dir directory', 'secret.txt file']),
    });
    expect((report.walk as { value: string[] }).value).toHaveLength(4);
  });

  it('disk full: a write into a full tmpfs fails with ENOSPC, the original intact, no temp file left', async () => {
    const ws = tempWorkspace();
    spaces.push(ws);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', ws.root]);
    try {
      const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
      await hfs.write('keep.txt', 'original content\n');
      await expect(hfs.writeBytes('keep.txt', new Uint8Array(2 * 1024 * 1024).fill(0x61))).rejects.toMatchObject({ code: 'ENOSPC', path: 'keep.txt' });
      const w = await hfs.openWrite('keep.txt');
      const chunk = new Uint8Array(256 * 1024).fill(0x62);
      const err = await (async () => {
        for (let i = 0; i < 8; i++) await w.write(chunk);
        await w.close();
      })().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ENOSPC' });
      expect(String((err as Error).message)).toMatch(/original file is intact|free some/);
      expect(nodeFs.readFileSync(path.join(ws.root, 'keep.txt'), 'utf8')).toBe('original content\n');
      expect(nodeFs.readdirSync(ws.root).filter(isTempName)).toEqual([]);
      await hfs.close();
    } finally {
      execFileSync('umount', [ws.root]);
    }
  });
});
