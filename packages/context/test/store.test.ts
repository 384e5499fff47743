import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEFAULT_RETENTION, defaultStatePath, MIGRATIONS, SqliteStateStore, VersionStore } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ctxfs-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('StateStore', () => {
  test('migrates a new store to the latest schema version', async () => {
    const store = await SqliteStateStore.open();
    expect(await store.schemaVersion()).toBe(MIGRATIONS[MIGRATIONS.length - 1]?.version);
    const tables = (store.database.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map(
      (r) => r.name,
    );
    for (const t of ['audit', 'file_versions', 'files', 'relations', 'session_reads', 'sessions', 'summaries']) expect(tables).toContain(t);
    await store.close();
    await store.close(); // idempotent
  });

  test('reopening a file store keeps data and does not re-run migrations; later migrations apply in order', async () => {
    const path = join(dir, 'a', 'state.db');
    const a = await SqliteStateStore.open({ path });
    await a.audit({ op: 'test', result: 'ok' });
    await a.close();
    const extra = [...MIGRATIONS, { version: MIGRATIONS.length + 1, description: 'extra', sql: 'CREATE TABLE extra (x INTEGER)' }];
    const b = await SqliteStateStore.open({ path, migrations: extra });
    expect(await b.schemaVersion()).toBe(MIGRATIONS.length + 1);
    expect(await b.auditLog()).toHaveLength(1);
    expect((b.database.db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    await b.close();
  });

  test('a failing migration rolls back and reports EIO', async () => {
    const bad = [...MIGRATIONS, { version: MIGRATIONS.length + 1, description: 'bad', sql: 'CREATE TABLE files (x)' }];
    const path = join(dir, 'bad.db');
    await expect(SqliteStateStore.open({ path, migrations: bad })).rejects.toThrow(expect.objectContaining({ code: 'EIO' }));
    const s = await SqliteStateStore.open({ path });
    expect(await s.schemaVersion()).toBe(MIGRATIONS.length);
    await s.close();
  });

  test('transactions roll back on error and nest', async () => {
    const store = await SqliteStateStore.open();
    await expect(
      store.transaction(async () => {
        await store.audit({ op: 'a', result: 'ok' });
        await store.transaction(async () => await store.audit({ op: 'b', result: 'ok' }));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.auditLog()).toHaveLength(0);
    await store.close();
  });

  test('two processes write to one store concurrently without losing a row', async () => {
    const path = join(dir, 'shared', 'state.db');
    await (await SqliteStateStore.open({ path })).close();
    const script = `
      const { DatabaseSync } = require('node:sqlite');
      const db = new DatabaseSync(process.argv[1], { timeout: 10000 });
      db.exec('PRAGMA journal_mode = WAL');
      for (let i = 0; i < 300; i++) {
        db.exec('BEGIN IMMEDIATE');
        db.prepare("INSERT INTO audit (at_ms, op, result) VALUES (?, 'child', 'ok')").run(Date.now());
        db.exec('COMMIT');
      }
      db.close();
    `;
    const child = spawn(process.execPath, ['-e', script, path], { stdio: 'inherit' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const store = await SqliteStateStore.open({ path });
    for (let i = 0; i < 300; i++) {
      await store.transaction(async () => await store.audit({ op: 'parent', result: 'ok' }));
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    const code = await exited;
    expect(code).toBe(0);
    const counts = store.database.db.prepare('SELECT op, COUNT(*) AS n FROM audit GROUP BY op ORDER BY op').all() as Array<{ op: string; n: number }>;
    expect(counts).toEqual([
      { op: 'child', n: 300 },
      { op: 'parent', n: 300 },
    ]);
    await store.close();
  });

  test('default location is beside a host workspace, in memory otherwise', () => {
    expect(defaultStatePath('/home/me/project')).toBe('/home/me/.project.ctxfs/state.db');
    expect(defaultStatePath('memory:')).toBe(':memory:');
    expect(defaultStatePath('docker://abc/work')).toBe(':memory:');
    // sanity: the node running the tests has node:sqlite
    expect(execFileSync(process.execPath, ['-e', "require('node:sqlite'); console.log('ok')"]).toString().trim()).toBe('ok');
  });
});

describe('default state location over a host workspace', () => {
  test('the store lives beside the workspace and never appears in list, glob or grep', async () => {
    const { HostFilesystem } = await import('@ctxfs/host');
    const { createContext } = await import('../src/index.ts');
    const { mkdirSync, writeFileSync, existsSync } = await import('node:fs');
    const root = join(dir, 'project');
    mkdirSync(root);
    writeFileSync(join(root, 'a.ts'), 'export const a = 1;\n');
    const fs = await HostFilesystem.open({ root, stateDir: join(dir, 'host-state') });
    const ctx = await createContext({ fs });
    await ctx.scan();
    expect(ctx.store.location).toBe(join(dir, '.project.ctxfs', 'state.db'));
    expect(existsSync(ctx.store.location)).toBe(true);
    const listed: string[] = [];
    for await (const m of fs.glob('**', { dot: true })) listed.push(m.path);
    expect(listed).toEqual(['a.ts']);
    expect((await fs.list('')).map((e) => e.name)).toEqual(['a.ts']);
    const hits: string[] = [];
    for await (const m of fs.grep('CREATE TABLE', { dot: true })) hits.push(m.path);
    expect(hits).toEqual([]);
    expect(ctx.registry.list().map((r) => r.path)).toEqual(['a.ts']);
    await ctx.close();
    await fs.close();
  });

  test('a store named inside the workspace, directly or through a link, is refused: a restore or a model could delete it', async () => {
    const { HostFilesystem } = await import('@ctxfs/host');
    const { createContext } = await import('../src/index.ts');
    const { mkdirSync, symlinkSync, existsSync } = await import('node:fs');
    const root = join(dir, 'holds-state');
    mkdirSync(join(root, '.ctxfs'), { recursive: true });
    symlinkSync(root, join(dir, 'link-to-holds-state'));
    const fs = await HostFilesystem.open({ root, stateDir: join(dir, 'holds-state-host') });
    try {
      for (const inside of [join(root, 'state.db'), join(root, '.ctxfs', 'new', 'state.db'), join(dir, 'link-to-holds-state', 'state.db')]) {
        await expect(createContext({ fs, store: inside }), inside).rejects.toMatchObject({
          code: 'EINVAL',
          reason: expect.stringMatching(/is inside the workspace/),
        });
        expect(existsSync(inside), inside).toBe(false);
      }
      const ctx = await createContext({ fs, store: join(dir, 'beside-holds-state.db') });
      await ctx.close();
    } finally {
      await fs.close();
    }
  });
});

describe('history retention where no limits are given', () => {
  test('keeps the newest DEFAULT_RETENTION.maxVersionsPerFile versions of a file', async () => {
    const store = await SqliteStateStore.open();
    const versions = new VersionStore(store);
    const sha256 = await versions.putBlob(new TextEncoder().encode('x\n'));
    const keep = DEFAULT_RETENTION.maxVersionsPerFile;
    await store.transaction(async () => {
      for (let i = 0; i < keep + 2; i++) await versions.append({ path: 'a.txt', sha256, size: 2, op: 'write', author: 'user' });
    });
    expect((await versions.prune()).versionsRemoved).toBe(2);
    expect(await versions.count('a.txt')).toBe(keep);
    expect((await versions.list('a.txt', 1))[0]?.seq).toBe(keep + 2);
    await store.close();
  });
});
