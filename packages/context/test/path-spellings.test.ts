/**
 * Every spelling of a path names one file: a read through `./src/a.ts` is the
 * base of an edit through `src\a.ts`, so a change made on disk in between is
 * merged or refused, never overwritten. Property-tested over random spellings
 * × every read call × every edit call, on the memory and host backends.
 */
import { lstatSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ContextSession, createContext, type EditResult, type Served } from '../src/index.ts';
import { BACKENDS, hostBackend } from './backends.ts';
import { ON_POSTGRES, testState } from './support/test-state.ts';

const CANONICAL = 'src/lib/a.ts';
const LINES = [
  '/** Configuration values. */',
  'export const k1 = 1;',
  'export const k2 = 2;',
  '',
  'export function alpha(x: number): number {',
  '  return x + 1;',
  '}',
  '',
  'export function omega(x: number): number {',
  '  return x * 9;',
  '}',
  '',
];
const ORIGINAL = `${LINES.join('\n')}\n`;
// Another writer's change: a line inserted at the top (every later line moves) and k1 changed.
const EXTERNAL = `// edited by a person\n${ORIGINAL.replace('k1 = 1;', 'k1 = 100;')}`;
// The agent's intent, on the lines it read: omega multiplies by 10.
const INTENDED_ON_BASE = ORIGINAL.replace('x * 9', 'x * 10');
const EXPECTED = EXTERNAL.replace('x * 9', 'x * 10');

/** Ways a model spells one path: `./`, `..` detours, doubled slashes, backslashes. */
const spelling: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('', './', '.\\', './/'),
    fc.array(fc.constantFrom('/', '//', '/./', '\\', '/x/../', '/lib/../', '\\.\\'), { minLength: 2, maxLength: 2 }),
    fc.boolean(),
  )
  .map(([lead, seps, detour]) => `${lead}${detour ? 'zz/../' : ''}src${seps[0]}lib${seps[1]}a.ts`);

type ReadCall = (s: ContextSession, path: string) => Promise<Served>;
const READS: Record<string, ReadCall> = {
  readFile: (s, p) => s.readFile(p),
  readLines: (s, p) => s.readLines(p, 8, 11),
  getExcerpt: (s, p) => s.getExcerpt(p, 40),
  getSymbol: (s, p) => s.getSymbol(p, 'omega'),
  getOutline: (s, p) => s.getOutline(p),
  summarize: (s, p) => s.summarize(p),
};
/** Reads whose content is kept, so an edit based on them can be merged (the others may refuse instead). */
const MERGEABLE = new Set(['readFile', 'readLines', 'getExcerpt', 'getSymbol']);

type EditCall = (s: ContextSession, path: string) => Promise<EditResult>;
const EDITS: Record<string, EditCall> = {
  writeFile: (s, p) => s.writeFile(p, INTENDED_ON_BASE),
  replace: (s, p) => s.replace(p, 'x * 9', 'x * 10'),
  editLines: (s, p) => s.editLines(p, { kind: 'replace', start: 10, end: 10, text: '  return x * 10;\n' }),
  applyPatch: (s, p) =>
    s.applyPatch(`--- a/${p}\n+++ b/${p}\n@@ -9,3 +9,3 @@\n export function omega(x: number): number {\n-  return x * 9;\n+  return x * 10;\n }\n`),
};

describe.each(BACKENDS)('path spellings on $name', (backend) => {
  it('a read through one spelling is the base of an edit through another: no silent overwrite', async () => {
    await fc.assert(
      fc.asyncProperty(
        spelling,
        spelling,
        fc.constantFrom(...Object.keys(READS)),
        fc.constantFrom(...Object.keys(EDITS)),
        async (readAs, editAs, readName, editName) => {
          const ws = await backend.create({ [CANONICAL]: ORIGINAL });
          const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
          try {
            const served = await (READS[readName] as ReadCall)(ctx, readAs);
            expect(served.path).toBe(CANONICAL);
            expect(served.text).not.toContain(readAs === CANONICAL ? '\0' : `path="${readAs}"`);
            expect((await ctx.sessionContext.lastRead('llm:test', CANONICAL))?.sha256).toBe(served.version);
            await ws.external(CANONICAL, EXTERNAL);
            const result = await (EDITS[editName] as EditCall)(ctx, editAs);
            const disk = new TextDecoder().decode(await ws.fs.readBytes(CANONICAL));
            if (result.success) expect(disk).toBe(EXPECTED);
            else expect(disk).toBe(EXTERNAL);
            if (MERGEABLE.has(readName)) expect(result.success, result.message).toBe(true);
          } finally {
            await ctx.close();
            await ws.cleanup();
          }
        },
      ),
      { numRuns: (backend.name === 'memory' ? 300 : 60) / (ON_POSTGRES ? 10 : 1) },
    );
  });

  it('records every read, version and audit row under the resolved path', async () => {
    const ws = await backend.create({ [CANONICAL]: ORIGINAL });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    try {
      await ctx.scan();
      for (const p of ['./src/lib/a.ts', 'src//lib/./a.ts', 'src\\lib\\a.ts', 'x/../src/lib/a.ts']) {
        const r = await ctx.readLines(p, 1, 3);
        expect(r.text).toContain(`path="${CANONICAL}"`);
      }
      await ctx.replace('./src//lib/a.ts', 'k2 = 2', 'k2 = 3');
      await ctx.store.flushAudit(); // the records of reads are written a batch at a time
      const paths = async (sql: string) => ((await ctx.store.all(sql)) as Array<{ path: string | null }>).map((r) => r.path).filter((p) => p !== null);
      expect(new Set(await paths('SELECT path FROM session_reads'))).toEqual(new Set([CANONICAL]));
      expect(new Set(await paths('SELECT path FROM audit'))).toEqual(new Set([CANONICAL]));
      expect(new Set(await paths('SELECT path FROM history'))).toEqual(new Set([CANONICAL]));
      expect(ctx.registry.get('./src/lib/a.ts')?.path).toBe(CANONICAL);
      expect((await ctx.sessionContext.lastRead('llm:test', 'src\\lib\\a.ts'))?.path).toBe(CANONICAL);
      expect((await ctx.history('./src/lib/a.ts')).length).toBeGreaterThan(0);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  it('refuses a file path with a trailing slash and paths that leave the root, recording nothing', async () => {
    const ws = await backend.create({ [CANONICAL]: ORIGINAL });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    try {
      await expect(ctx.readFile('src/lib/a.ts/')).rejects.toMatchObject({ code: 'ENOTDIR' });
      await expect(ctx.readLines('../a.ts', 1, 2)).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      await expect(ctx.getOutline('src/../../a.ts')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      const w = await ctx.writeFile('src/lib/a.ts/', 'x');
      expect(w.success).toBe(false);
      expect(w.code).toBe('ENOTDIR');
      expect(await ctx.store.get('SELECT COUNT(*) AS n FROM session_reads')).toEqual({ n: 0 });
      expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL))).toBe(ORIGINAL);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});

// A name stored with its accents decomposed (NFD, as macOS writes names) is
// the file a model means when it types the name composed (NFC).
for (const backend of BACKENDS) {
  describe(`a name in another Unicode normalization on ${backend.name}`, () => {
    const NFD = 'docs/cafe\u0301 menu.md';
    const NFC = 'docs/caf\u00e9 menu.md';

    it('reads, finds and edits the stored file, and makes no second one', async () => {
      const ws = await backend.create({ [NFD]: '# Menu\n\nespresso\n', 'docs/plain.md': 'plain\n' });
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
      try {
        await ctx.scan();
        expect(NFC).not.toBe(NFD);
        const read = await ctx.readFile(NFC);
        expect(read.path).toBe(NFD);
        expect(read.text).toContain('espresso');
        expect((await ctx.readLines(NFC, 3, 3)).text).toContain('espresso');
        const edit = await ctx.replace(NFC, 'espresso', 'ristretto');
        expect(edit.success, edit.message).toBe(true);
        expect(edit.path).toBe(NFD);
        expect(new TextDecoder().decode(await ws.fs.readBytes(NFD))).toBe('# Menu\n\nristretto\n');
        expect(await ws.fs.exists(NFC)).toBe(false);
        expect((await ctx.listFiles('docs')).items.map((i) => i.path).sort()).toEqual(['docs/plain.md', NFD].sort());
        // A name no file has in any normalization is missing as before.
        await expect(ctx.readFile('docs/cafe menu.md')).rejects.toMatchObject({ code: 'ENOENT' });
      } finally {
        await ctx.close();
        await ws.cleanup();
      }
    });

    it('before any scan too: the composed name reads and edits the stored file, and a write makes no second one', async () => {
      const ws = await backend.create({ [NFD]: '# Menu\n\nespresso\n' });
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
      try {
        expect((await ctx.readFile(NFC)).path).toBe(NFD);
        const w = await ctx.writeFile(NFC, '# Menu\n\nlatte\n');
        expect(w.success, w.message).toBe(true);
        expect(w.path).toBe(NFD);
        expect((await ws.fs.list('docs')).map((e) => e.name)).toEqual(['cafe\u0301 menu.md']);
      } finally {
        await ctx.close();
        await ws.cleanup();
      }
    });

    it('keeps each file its own when both spellings are stored', async () => {
      const ws = await backend.create({ [NFD]: 'decomposed\n', [NFC]: 'composed\n' });
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
      try {
        await ctx.scan();
        expect((await ctx.readFile(NFC)).text).toContain('composed');
        expect((await ctx.readFile(NFD)).text).toContain('decomposed');
      } finally {
        await ctx.close();
        await ws.cleanup();
      }
    });
  });
}

// A symbolic link inside the root is another spelling of the file it leads
// to: `link/a.ts` with `link -> src/lib` is `src/lib/a.ts`. Before, each
// spelling had its own read records, history and lock: a read through one
// was no base for an edit through the other, which then overwrote a change
// made between them, and undo through one reverted edits made through the other.
describe('links inside the root on host', () => {
  const withLinks = async () => {
    const ws = await hostBackend.create({ [CANONICAL]: ORIGINAL });
    const root = ws.fs.root as string;
    symlinkSync('src/lib', join(root, 'link'));
    symlinkSync('a.ts', join(root, 'src/lib/alias.ts'));
    return ws;
  };

  it.each([
    ['src/lib/a.ts', 'link/a.ts'],
    ['link/a.ts', 'src/lib/a.ts'],
    ['src/lib/alias.ts', 'link/alias.ts'],
  ])('a read through %s is the base of an edit through %s: the change between is merged, under one key', async (readAs, editAs) => {
    for (const [editName, edit] of Object.entries(EDITS)) {
      const ws = await withLinks();
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
      try {
        const served = await ctx.readLines(readAs, 1, 12);
        expect(served.path).toBe(CANONICAL);
        await ws.external(CANONICAL, EXTERNAL);
        const result = await edit(ctx, editAs);
        expect(result.success, `${editName}: ${result.message}`).toBe(true);
        expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL)), editName).toBe(EXPECTED);
        expect(result.files.map((f) => f.path)).toEqual([CANONICAL]);
        await ctx.store.flushAudit();
        const paths = async (sql: string) => ((await ctx.store.all(sql)) as Array<{ path: string | null }>).map((r) => r.path).filter((p) => p !== null);
        expect(new Set(await paths('SELECT path FROM history'))).toEqual(new Set([CANONICAL]));
        expect(new Set(await paths('SELECT path FROM session_reads'))).toEqual(new Set([CANONICAL]));
        // The links are still links: the edit went to the file they lead to.
        expect(lstatSync(join(ws.fs.root as string, 'link')).isSymbolicLink()).toBe(true);
        expect(lstatSync(join(ws.fs.root as string, 'src/lib/alias.ts')).isSymbolicLink()).toBe(true);
      } finally {
        await ctx.close();
        await ws.cleanup();
      }
    }
  });

  it('one history whatever the spelling: undo through a link reverts the change made through the file, not a change it took for external', async () => {
    const ws = await withLinks();
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    try {
      expect((await ctx.replace('link/a.ts', 'k1 = 1', 'k1 = 11')).success).toBe(true);
      expect((await ctx.replace('src/lib/a.ts', 'k2 = 2', 'k2 = 22')).success).toBe(true);
      const history = await ctx.history('link/a.ts');
      expect(history.map((v) => v.op)).toEqual(['replace', 'replace', 'initial']);
      expect(await ctx.history('src/lib/alias.ts')).toEqual(history);
      const undone = await ctx.undo('link/alias.ts');
      expect(undone.success, undone.message).toBe(true);
      const disk = new TextDecoder().decode(await ws.fs.readBytes(CANONICAL));
      expect(disk).toContain('k1 = 11');
      expect(disk).toContain('k2 = 2;');
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  it('deleting or renaming a link acts on the link, as rm and mv do, never on the file it leads to', async () => {
    const ws = await withLinks();
    const root = ws.fs.root as string;
    symlinkSync('gone.ts', join(root, 'src/lib/dangling.ts'));
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    const isLink = (p: string) => lstatSync(join(root, p), { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
    try {
      // A link to a file, through a linked directory: the link goes, the file stays.
      const deleted = await ctx.deleteFile('link/alias.ts');
      expect(deleted, deleted.message).toMatchObject({ success: true, path: 'src/lib/alias.ts' });
      expect(isLink('src/lib/alias.ts')).toBe(false);
      expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL))).toBe(ORIGINAL);
      // A dangling link and a link to a directory are removed too (they stat as missing and as the directory).
      expect((await ctx.deleteFile('src/lib/dangling.ts')).success).toBe(true);
      expect(isLink('src/lib/dangling.ts')).toBe(false);
      const dry = await ctx.deleteFile('link', { dryRun: true });
      expect(dry).toMatchObject({ success: true, dryRun: true });
      expect(isLink('link')).toBe(true);
      expect((await ctx.deleteFile('link')).success).toBe(true);
      expect(isLink('link')).toBe(false);
      expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL))).toBe(ORIGINAL);
      // Renamed: the link moves, the file stays where it is; an existing destination is refused unless overwritten.
      symlinkSync('a.ts', join(root, 'src/lib/alias.ts'));
      const moved = await ctx.renameFile('src/lib/alias.ts', 'src/lib/other.ts');
      expect(moved, moved.message).toMatchObject({ success: true, path: 'src/lib/other.ts' });
      expect(isLink('src/lib/other.ts') && !isLink('src/lib/alias.ts')).toBe(true);
      expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL))).toBe(ORIGINAL);
      expect(await ctx.renameFile('src/lib/other.ts', CANONICAL)).toMatchObject({ success: false, code: 'EEXIST' });
      expect(isLink(CANONICAL)).toBe(false);
      // A patch edits what a link leads to: its delete or move of the link itself is refused, nothing changed.
      for (const patch of [
        '*** Begin Patch\n*** Delete File: src/lib/other.ts\n*** End Patch\n',
        'diff --git a/src/lib/other.ts b/src/lib/other.ts\ndeleted file mode 120000\n--- a/src/lib/other.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-a.ts\n\\ No newline at end of file\n',
        '*** Begin Patch\n*** Update File: src/lib/other.ts\n*** Move to: src/lib/moved.ts\n*** End Patch\n',
      ]) {
        const refused = await ctx.applyPatch(patch);
        expect(refused, refused.message).toMatchObject({ success: false, code: 'EUNSUPPORTED', path: 'src/lib/other.ts' });
        expect(isLink('src/lib/other.ts')).toBe(true);
        expect(new TextDecoder().decode(await ws.fs.readBytes(CANONICAL))).toBe(ORIGINAL);
      }
      // Nothing of the file's history changed: no version was made for a link.
      expect((await ctx.history(CANONICAL)).map((v) => v.op)).toEqual(['initial']);
      await ctx.store.flushAudit();
      const ops = (await ctx.store.all<{ op: string; path: string }>("SELECT op, path FROM audit WHERE op IN ('deleteFile', 'renameFile') ORDER BY id")).map(
        (r) => `${r.op} ${r.path}`,
      );
      expect(ops).toEqual([
        'deleteFile src/lib/alias.ts',
        'deleteFile src/lib/dangling.ts',
        'deleteFile link',
        'deleteFile link',
        'renameFile src/lib/alias.ts',
        'renameFile src/lib/other.ts',
      ]);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  it('the policy decides the spelling as well as the file: a rule naming the link denies the call', async () => {
    const ws = await withLinks();
    const ctx = await createContext({
      fs: ws.fs,
      store: testState(),
      agent: 'llm:test',
      safety: { policyFiles: false, policy: { rules: [{ effect: 'deny', ops: ['write'], paths: ['link/**'] }] } },
    });
    try {
      await expect(ctx.replace('link/a.ts', 'k1 = 1', 'k1 = 11')).rejects.toMatchObject({ code: 'EDENIED', path: 'link/a.ts' });
      expect((await ctx.replace('src/lib/a.ts', 'k1 = 1', 'k1 = 11')).success).toBe(true);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});
