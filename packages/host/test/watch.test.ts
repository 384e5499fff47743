import fs from 'node:fs';
import path from 'node:path';
import type { WatchEvent, Watcher } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(files: Record<string, string> = {}) {
  const ws = tempWorkspace('ctxfs-watch-');
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws.root, p)), { recursive: true });
    fs.writeFileSync(path.join(ws.root, p), content);
  }
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
  cleanups.push(ws.remove, () => hfs.close());
  return { hfs, ws };
}

/** Starts a recursive watch of the root and collects its events. */
async function record(hfs: HostFilesystem): Promise<{ events: WatchEvent[]; watcher: Watcher; waitFor(path: string): Promise<void> }> {
  const watcher = hfs.watch('', { recursive: true });
  await watcher.ready;
  const events: WatchEvent[] = [];
  void (async () => {
    for await (const e of watcher) events.push(e);
  })();
  return {
    events,
    watcher,
    async waitFor(p) {
      const deadline = Date.now() + 5_000;
      while (!events.some((e) => e.path === p)) {
        if (Date.now() > deadline) expect.fail(`no event for ${p}; got ${JSON.stringify(events)}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

describe('host watch', () => {
  it('reports a change made outside ctxfs (another program writing the file)', async () => {
    const { hfs, ws } = await open({ 'src/a.ts': 'one' });
    const rec = await record(hfs);
    fs.writeFileSync(path.join(ws.root, 'src/a.ts'), 'two');
    await rec.waitFor('src/a.ts');
    expect(rec.events.find((e) => e.path === 'src/a.ts')?.type).toBe('modified');
  });

  it("never reports ctxfs's own temp files, from its atomic writes or found on disk", async () => {
    const { hfs, ws } = await open({ 'a.txt': 'a' });
    const rec = await record(hfs);
    for (let i = 0; i < 5; i++) await hfs.write('a.txt', `v${i}`);
    await hfs.write('new.txt', 'n');
    fs.writeFileSync(path.join(ws.root, '.ctxfs-tmp-1-0123456789abcdef'), 'stray');
    fs.writeFileSync(path.join(ws.root, 'marker'), 'm');
    await rec.waitFor('marker');
    await rec.waitFor('a.txt');
    expect(rec.events.filter((e) => e.path.includes('.ctxfs-tmp-'))).toEqual([]);
    expect(rec.events.some((e) => e.path === 'new.txt' && e.type === 'created')).toBe(true);
  });

  it('reports nothing through a symlink to a directory outside the root', async () => {
    const { hfs, ws } = await open();
    const outside = path.join(ws.base, 'outside');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(ws.root, 'link'));
    const rec = await record(hfs);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'x');
    await new Promise((resolve) => setTimeout(resolve, 200));
    fs.writeFileSync(path.join(ws.root, 'marker'), 'm');
    await rec.waitFor('marker');
    expect(rec.events.filter((e) => e.path.startsWith('link'))).toEqual([]);
  });

  it('leaves excluded names (.git by default) unwatched', async () => {
    const { hfs, ws } = await open({ '.git/HEAD': 'ref: refs/heads/main\n' });
    const rec = await record(hfs);
    fs.writeFileSync(path.join(ws.root, '.git/index'), 'x');
    fs.writeFileSync(path.join(ws.root, '.git/HEAD'), 'y');
    fs.writeFileSync(path.join(ws.root, 'marker'), 'm');
    await rec.waitFor('marker');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(rec.events.filter((e) => e.path.startsWith('.git'))).toEqual([]);
  });

  it('a watched symlink to a directory inside the root reports under the path watched', async () => {
    const { hfs, ws } = await open({ 'real/a.txt': 'a' });
    fs.symlinkSync('real', path.join(ws.root, 'alias'));
    const watcher = hfs.watch('alias', { recursive: true });
    await watcher.ready;
    const seen: WatchEvent[] = [];
    void (async () => {
      for await (const e of watcher) seen.push(e);
    })();
    fs.writeFileSync(path.join(ws.root, 'real/a.txt'), 'b');
    const deadline = Date.now() + 5_000;
    while (!seen.some((e) => e.path === 'alias/a.txt') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(seen.map((e) => e.path)).toContain('alias/a.txt');
    await watcher.close();
  });

  it('close frees the platform watch: no events after, and many watchers opened and closed leave nothing behind', async () => {
    const { hfs, ws } = await open();
    const inotifyFds = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:inotify';
        } catch {
          return false;
        }
      }).length;
    const before = inotifyFds();
    for (let i = 0; i < 50; i++) {
      const w = hfs.watch('', { recursive: true });
      await w.ready;
      await w.close();
    }
    expect(inotifyFds()).toBeLessThanOrEqual(before + 1);
    const rec = await record(hfs);
    await rec.watcher.close();
    fs.writeFileSync(path.join(ws.root, 'after'), 'x');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(rec.events).toEqual([]);
  });
});
