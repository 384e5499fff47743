/**
 * deepagents' BackendProtocolV2 over ctxfs, on memory, host and container:
 * every method with deepagents' result shapes and error values, bad input
 * refused as values without a host path, what ctxfs adds (history, stale
 * edits merged), and VoltAgent's workspace driving the same backend.
 * deepagents' own standard tests run from scripts/deepagents-standard-tests.sh.
 */

import { spawnSync } from 'node:child_process';
import { readFile as readHostFile, symlink, writeFile as writeHostFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { type BackendProtocolV2, FilesystemBackend, type SandboxBackendProtocolV2 } from 'deepagents';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBackend, toVoltAgentBackend } from '../src/deepagents/index.ts';
import { backends, cleanUp, hex, NON_UTF8_TEXT, openWorkspace, shellRunner, type TestWorkspace, UTF8_PAYLOAD } from './workspaces.ts';

afterAll(cleanUp);

const tree = {
  'src/a.ts': 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n',
  'src/util/b.py': 'print("x")\n',
  'docs/x.md': 'see a.ts\n',
  '.hidden': 'h\n',
  'empty.txt': '',
};
const utf8 = (b: Uint8Array | null | undefined): string => new TextDecoder().decode(b ?? new Uint8Array());

for (const backend of await backends()) {
  describe(`deepagents backend on ${backend}`, { timeout: 60_000 }, () => {
    const withBackend = async (fn: (b: CtxfsBackend, ws: TestWorkspace) => Promise<void>, files: Record<string, string | Uint8Array> = {}) => {
      const ws = await openWorkspace(backend, { ...tree, ...files });
      try {
        await fn(new CtxfsBackend({ context: ws.context }), ws);
      } finally {
        await ws.close();
      }
    };

    it('implements the sandbox protocol', () =>
      withBackend(async (b) => {
        const typed: SandboxBackendProtocolV2 = b;
        const plain: BackendProtocolV2 = b;
        expect(typeof typed.execute).toBe('function');
        expect(typeof plain.uploadFiles).toBe('function');
        expect(b.id).toMatch(/^ctxfs-/);
      }));

    it('ls: one level, directories with a trailing slash, a missing directory empty', () =>
      withBackend(async (b) => {
        const r = await b.ls('/src');
        expect(r.error).toBeUndefined();
        expect(r.files?.map((f) => `${f.path}:${f.is_dir}`).sort()).toEqual(['/src/a.ts:false', '/src/util/:true']);
        expect(r.files?.find((f) => f.path === '/src/a.ts')?.size).toBe(Buffer.byteLength(tree['src/a.ts']));
        expect((await b.ls('/')).files?.map((f) => f.path)).toContain('/.hidden');
        expect(await b.ls('/nope')).toEqual({ files: [] });
      }));

    it('read: lines by offset and limit with the paging fields, the empty-file reminder, errors as values', () =>
      withBackend(
        async (b) => {
          expect(await b.read('/src/a.ts', 1, 1)).toMatchObject({ content: 'const b = 2;', totalLines: 3, startLine: 2, endLine: 2, nextOffset: 2 });
          expect((await b.read('/src/a.ts')).content).toBe(tree['src/a.ts']);
          expect((await b.read('/empty.txt')).content).toBe('System reminder: File exists but has empty contents');
          expect((await b.read('/src/a.ts', 10)).error).toBe('Line offset 10 exceeds file length (3 lines)');
          expect((await b.read('/missing.ts')).error).toBe("File '/missing.ts' not found");
          expect((await b.read('/src')).error).toBe("File '/src' not found");
          const png = await b.read('/img.png');
          expect(png.mimeType).toBe('image/png');
          expect(png.content).toBeInstanceOf(Uint8Array);
        },
        { 'img.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]) },
      ));

    it('read counts, pages and normalizes offset and limit as deepagents’ own backends do', () =>
      withBackend(
        async (b, ws) => {
          const file = '/lines.txt';
          expect(await b.read(file)).toEqual({ content: 'one\ntwo\nthree\n', mimeType: 'text/plain', totalLines: 3, startLine: 1, endLine: 3 });
          expect(await b.read(file, 2, 1)).toEqual({ content: 'three', mimeType: 'text/plain', totalLines: 3, startLine: 3, endLine: 3 });
          expect(await b.read(file, 3)).toEqual({ error: 'Line offset 3 exceeds file length (3 lines)' });
          expect(await b.read(file, -1, 2)).toMatchObject({ content: 'one\ntwo', startLine: 1, endLine: 2, nextOffset: 2 });
          expect(await b.read(file, 0.5, 1.5)).toMatchObject({ content: 'one', startLine: 1, endLine: 1, nextOffset: 1 });
          expect(await b.read(file, 0, 0)).toEqual({ content: '', mimeType: 'text/plain' });
          expect(await b.read('/no-newline.txt', 1)).toMatchObject({ content: 'b', totalLines: 2, endLine: 2 });
          if (ws.hostRoot === undefined) return;
          // The same calls against deepagents' own FilesystemBackend on the same directory give the same answers.
          const own = new FilesystemBackend({ rootDir: ws.hostRoot, virtualMode: true });
          const strip = (r: object) => JSON.parse(JSON.stringify(r)) as unknown;
          for (const path of [file, '/no-newline.txt', '/blank-end.txt'])
            for (const [offset, limit] of [
              [0, 500],
              [1, 1],
              [2, 5],
              [3, 1],
              [4, 1],
              [-3, 2],
              [1.7, 0.9],
              [0, 0],
              [Number.NaN, 2],
              [1, -1],
            ] as const)
              expect(strip(await b.read(path, offset, limit)), `${path} ${offset} ${limit}`).toEqual(strip(await own.read(path, offset, limit)));
        },
        { 'lines.txt': 'one\ntwo\nthree\n', 'no-newline.txt': 'a\nb', 'blank-end.txt': 'a\n\n\n' },
      ));

    it('readRaw: text as a string, binary as bytes, with times', () =>
      withBackend(
        async (b) => {
          const t = await b.readRaw('/src/a.ts');
          expect(t.data?.content).toBe(tree['src/a.ts']);
          expect(t.data && 'mimeType' in t.data ? t.data.mimeType : '').toBe('text/plain');
          expect(Date.parse(t.data?.modified_at ?? '')).not.toBeNaN();
          expect((await b.readRaw('/blob.bin')).data?.content).toEqual(new Uint8Array([0, 1, 2]));
          expect((await b.readRaw('/none')).error).toBeDefined();
        },
        { 'blob.bin': new Uint8Array([0, 1, 2]) },
      ));

    it('write: creates parents, overwrites; a media file arrives base64', () =>
      withBackend(async (b, ws) => {
        expect(await b.write('/new/deep/n.txt', 'hello')).toEqual({ path: '/new/deep/n.txt', filesUpdate: null });
        expect(utf8(await ws.fs.readBytes('new/deep/n.txt'))).toBe('hello');
        await b.write('/new/deep/n.txt', 'again');
        expect(utf8(await ws.fs.readBytes('new/deep/n.txt'))).toBe('again');
        await b.write('/pic.png', Buffer.from([1, 2, 3]).toString('base64'));
        expect(Array.from(await ws.fs.readBytes('pic.png'))).toEqual([1, 2, 3]);
        expect((await b.write('/src', 'x')).error).toContain('EISDIR');
      }));

    it('edit: one occurrence or replaceAll, with deepagents’ refusals', () =>
      withBackend(async (b, ws) => {
        expect((await b.edit('/src/a.ts', '= 1', '= 9')).error).toContain('appears 2 times');
        expect(await b.edit('/src/a.ts', '= 1', '= 9', true)).toEqual({ path: '/src/a.ts', filesUpdate: null, occurrences: 2 });
        expect(await b.edit('/src/a.ts', 'const b', 'let b')).toMatchObject({ occurrences: 1 });
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 9;\nlet b = 2;\nconst a2 = 9;\n');
        expect((await b.edit('/src/a.ts', 'nowhere', 'x')).error).toBe("Error: String not found in file: 'nowhere'");
        expect((await b.edit('/src/a.ts', '', 'x')).error).toContain('cannot be empty');
        expect(await b.edit('/empty.txt', '', 'seeded')).toMatchObject({ occurrences: 0 });
        expect(utf8(await ws.fs.readBytes('empty.txt'))).toBe('seeded');
        expect((await b.edit('/missing', 'a', 'b')).error).toBe("Error: File '/missing' not found");
      }));

    it('grep is literal, filtered by a glob at any depth, capped by maxCount (truncated only when more matched)', () =>
      withBackend(
        async (b) => {
          expect((await b.grep('a.ts')).matches).toEqual([{ path: '/docs/x.md', line: 1, text: 'see a.ts' }]);
          expect((await b.grep('[a-z]*(', '/')).matches).toEqual([{ path: '/re.txt', line: 1, text: 'x [a-z]*( y' }]);
          expect((await b.grep('print', '/', '*.py')).matches?.map((m) => m.path)).toEqual(['/src/util/b.py']);
          expect((await b.grep('print', '/', '*.ts')).matches).toEqual([]);
          const capped = await b.grep('const', '/src', null, 1);
          expect(capped).toMatchObject({ truncated: true });
          expect(capped.matches).toHaveLength(1);
          // Exactly maxCount matches: nothing was cut, as deepagents' own backends say.
          const exact = await b.grep('const', '/src', null, 3);
          expect(exact.matches).toHaveLength(3);
          expect(exact.truncated).toBeUndefined();
          expect((await b.grep('x', '/missing')).matches).toEqual([]);
        },
        { 're.txt': 'x [a-z]*( y\n' },
      ));

    it('glob: names relative to the search path, directories and dotfiles included', () =>
      withBackend(async (b) => {
        expect((await b.glob('**/*.py', '/src')).files?.map((f) => f.path)).toEqual(['util/b.py']);
        expect((await b.glob('*', '/src')).files?.map((f) => `${f.path}:${f.is_dir}`)).toEqual(['a.ts:false', 'util:true']);
        expect((await b.glob('.*')).files?.map((f) => f.path)).toEqual(['.hidden']);
        expect(await b.glob('*', '/missing')).toEqual({ files: [] });
      }));

    it('delete: a file, a directory with what it holds, a missing path as an error value', () =>
      withBackend(async (b, ws) => {
        expect(await b.delete('/docs/x.md')).toEqual({ path: '/docs/x.md', filesUpdate: null });
        expect(await ws.fs.exists('docs/x.md')).toBe(false);
        expect(await b.delete('/src')).toMatchObject({ path: '/src' });
        expect(await ws.fs.exists('src')).toBe(false);
        expect((await b.delete('/src')).error).toBe("Error: '/src' not found");
      }));

    it('delete of a directory: every file decided by the policy first, each removed as a version undo restores', () =>
      withBackend(
        async (b, ws) => {
          expect((await b.delete('/cfg')).error).toContain('EDENIED');
          for (const path of ['cfg/.env', 'cfg/app.json']) expect(await ws.fs.exists(path)).toBe(true);
          expect(await b.delete('/docs')).toEqual({ path: '/docs', filesUpdate: null });
          expect(await ws.fs.exists('docs')).toBe(false);
          expect((await ws.context.undo('docs/x.md')).success).toBe(true);
          expect(utf8(await ws.fs.readBytes('docs/x.md'))).toBe(tree['docs/x.md']);
          expect(await b.delete('/media')).toMatchObject({ path: '/media' });
          expect(await ws.fs.exists('media')).toBe(false);
        },
        { 'cfg/.env': 'TOKEN=x\n', 'cfg/app.json': '{}\n', 'media/img.png': new Uint8Array([0x89, 0x50, 0, 1]) },
      ));

    it('delete of a symlink removes the link itself, never what it leads to', () =>
      withBackend(async (b, ws) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('a.ts', join(ws.hostRoot, 'src/to-file'));
        await symlink('util', join(ws.hostRoot, 'src/to-dir'));
        for (const path of ['/src/to-file', '/src/to-dir']) expect(await b.delete(path), path).toEqual({ path, filesUpdate: null });
        expect((await b.ls('/src')).files?.map((f) => f.path)).toEqual(['/src/a.ts', '/src/util/']);
        expect(await readHostFile(join(ws.hostRoot, 'src/a.ts'), 'utf8')).toBe(tree['src/a.ts']);
        expect(await readHostFile(join(ws.hostRoot, 'src/util/b.py'), 'utf8')).toBe(tree['src/util/b.py']);
      }));

    it('ls leaves out a self-referencing or dangling symlink and lists the rest', () =>
      withBackend(async (b, ws) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('self', join(ws.hostRoot, 'src/self'));
        await symlink('missing', join(ws.hostRoot, 'src/dangling'));
        const r = await b.ls('/src');
        expect(r.error).toBeUndefined();
        expect(r.files?.map((f) => f.path).sort()).toEqual(['/src/a.ts', '/src/util/']);
      }));

    it('uploadFiles stores exactly the bytes given, over any file', () =>
      withBackend(async (b, ws) => {
        for (const [name, before] of Object.entries(NON_UTF8_TEXT)) {
          await ws.fs.writeBytes(`up-${name}`, before);
          expect(await b.uploadFiles([[`/up-${name}`, UTF8_PAYLOAD]])).toEqual([{ path: `/up-${name}`, error: null }]);
          expect(hex(await ws.fs.readBytes(`up-${name}`)), name).toBe(hex(UTF8_PAYLOAD));
          expect(hex((await b.downloadFiles([`/up-${name}`]))[0]?.content)).toBe(hex(UTF8_PAYLOAD));
        }
      }));

    it('VoltAgent’s backend maps every path through the mount path, as read does', () =>
      withBackend(async (_b, ws) => {
        const volt = toVoltAgentBackend(new CtxfsBackend({ context: ws.context, mountPath: '/workspace' }));
        expect(await volt.stat('/workspace/src/a.ts')).toMatchObject({ path: '/workspace/src/a.ts', is_dir: false, size: tree['src/a.ts'].length });
        expect(await volt.exists('/workspace/src/a.ts')).toBe(true);
        expect(await volt.exists('/src/a.ts')).toBe(false);
        expect((await volt.write('/workspace/src/a.ts', 'clobbered', { overwrite: false })).error).toContain('already exists');
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe(tree['src/a.ts']);
        expect((await volt.mkdir('/workspace/made/deep')).error).toBeUndefined();
        expect(await ws.fs.exists('made/deep')).toBe(true);
        expect(await ws.fs.exists('workspace')).toBe(false);
        expect((await volt.rmdir('/workspace/made', true)).error).toBeUndefined();
        expect(await ws.fs.exists('made')).toBe(false);
        expect((await volt.delete('/workspace/src', {})).error).toContain('directory');
        expect((await volt.delete('/workspace/docs', { recursive: true })).error).toBeUndefined();
        expect(await ws.fs.exists('docs')).toBe(false);
      }));

    it('under a mount path, a path whose .. comes back under the mount names the file there; one that leaves it is refused', () =>
      withBackend(async (_b, ws) => {
        const b = new CtxfsBackend({ context: ws.context, mountPath: '/workspace' });
        expect((await b.read('/workspace/../workspace/src/a.ts')).content).toContain('const b = 2;');
        expect((await b.write('/workspace/src/../../workspace/new.txt', 'n\n')).error).toBeUndefined();
        expect(utf8(await ws.fs.readBytes('new.txt'))).toBe('n\n');
        for (const path of ['/workspace/../etc/passwd', '/workspace/../workspace-other/x', '/workspace/..']) {
          const r = await b.write(path, 'x');
          expect(r.error, path).toContain('EPATHESCAPE');
          expect(r.error).not.toMatch(/\/tmp\/|\/work\//);
        }
      }));

    it('upload and download with deepagents’ error codes', () =>
      withBackend(async (b) => {
        const uploaded = await b.uploadFiles([
          ['/up/a.bin', new Uint8Array([9, 0, 9])],
          ['/src', new Uint8Array([1])],
          ['/../x', new Uint8Array([1])],
        ]);
        expect(uploaded).toMatchObject([
          { path: '/up/a.bin', error: null },
          { path: '/src', error: 'is_directory' },
          { path: '/../x', error: 'invalid_path' },
        ]);
        const downloaded = await b.downloadFiles(['/up/a.bin', '/none', '/src', '/../../etc/passwd']);
        expect(downloaded).toMatchObject([
          { path: '/up/a.bin', content: new Uint8Array([9, 0, 9]), error: null },
          { path: '/none', content: null, error: 'file_not_found' },
          { path: '/src', content: null, error: 'is_directory' },
          { path: '/../../etc/passwd', content: null, error: 'invalid_path' },
        ]);
        // Besides the code, a failure keeps ctxfs's message, naming no host path.
        expect(uploaded[2]?.message).toContain('EPATHESCAPE');
        expect(downloaded[1]?.message).toContain('ENOENT');
        expect(downloaded[3]?.message).toContain('EPATHESCAPE');
        for (const r of [...uploaded, ...downloaded]) expect(r.message ?? '').not.toMatch(/\/tmp\/|\/work\//);
      }));

    it('a download past the byte budget is refused as permission_denied with the limit and what to do, not as invalid_path', async () => {
      const ws = await openWorkspace(backend, { 'big.bin': new Uint8Array(200).fill(7) }, { safety: { policy: { budgets: { bytes: 150 } } } });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        expect((await b.downloadFiles(['/big.bin']))[0]?.content?.byteLength).toBe(200);
        const [refused] = await b.downloadFiles(['/big.bin']);
        expect(refused).toMatchObject({ path: '/big.bin', content: null, error: 'permission_denied' });
        expect(refused?.message).toContain('ELIMIT');
        expect(refused?.message).toContain('200 of 150');
        expect(refused?.message).toContain('it resets with a new session');
        expect((await b.uploadFiles([['/more.bin', new Uint8Array([1])]]))[0]).toMatchObject({ error: 'permission_denied' });
      } finally {
        await ws.close();
      }
    });

    it('execute without a runner: exit code 126 and a message; the description says so', () =>
      withBackend(async (b) => {
        const r = await b.execute('ls');
        expect(r.exitCode).toBe(126);
        expect(r.output).toContain('without a command runner');
        expect(b.description).toContain('Commands are not available');
      }));

    it('bad input never reaches outside the root and names no host path', () =>
      withBackend(async (b, ws) => {
        for (const path of ['/../outside.txt', '/src/../../x', '~/x']) {
          for (const r of [await b.read(path), await b.write(path, 'x'), await b.edit(path, 'a', 'b'), await b.delete(path), await b.ls(path)]) {
            if (r.error !== undefined) expect(r.error).not.toMatch(/\/tmp\/|\/work\//);
          }
          expect((await b.write(path, 'x')).error).toBeDefined();
        }
        expect((await b.write('/etc/passwd', 'x')).path).toBe('/etc/passwd');
        expect(await ws.fs.exists('etc/passwd')).toBe(true); // inside the root: `/` is the workspace
        if (ws.hostRoot !== undefined) {
          const outside = join(ws.hostRoot, '..', `da-outside-${process.pid}.txt`);
          await writeHostFile(outside, 'secret');
          await symlink(outside, join(ws.hostRoot, 'link.txt'));
          const read = await b.read('/link.txt');
          expect(read.error).toBeDefined();
          expect(read.error).not.toContain(ws.hostRoot);
          expect((await b.write('/link.txt', 'overwritten')).error).toContain('EPATHESCAPE');
          expect((await b.edit('/link.txt', 'secret', 'x')).error).toBeDefined();
          expect((await b.grep('secret')).matches).toEqual([]);
          expect(await readHostFile(outside, 'utf8')).toBe('secret');
        }
        // Binary content through the text edit, a directory where a file is expected: error values, nothing changed.
        await ws.fs.writeBytes('blob.bin', new Uint8Array([0, 1, 2, 0]));
        expect((await b.edit('/blob.bin', '\u0001', 'x')).error).toContain('binary');
        expect(Array.from(await ws.fs.readBytes('blob.bin'))).toEqual([0, 1, 2, 0]);
        expect((await b.edit('/src', 'a', 'b')).error).toBe("Error: File '/src' not found");
      }));

    it('what ctxfs adds: edits are versions, and an edit of a file changed since is merged', () =>
      withBackend(async (b, ws) => {
        await b.read('/src/a.ts');
        await ws.fs.writeBytes('src/a.ts', new TextEncoder().encode('const a = 1;\nconst b = 2;\nconst a2 = 1;\n// added by someone else\n'));
        expect(await b.edit('/src/a.ts', 'const b = 2;', 'const b = 3;')).toMatchObject({ occurrences: 1 });
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 1;\nconst b = 3;\nconst a2 = 1;\n// added by someone else\n');
        expect((await ws.context.undo('src/a.ts')).success).toBe(true);
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toContain('const b = 2;');
      }));

    it('VoltAgent’s workspace filesystem runs on the same backend', async () => {
      // VoltAgent's ESM build pulls OpenTelemetry's, whose extensionless imports do not load under the
      // test runner's `module` export condition; the check runs in plain Node, as an application would.
      const script = fileURLToPath(new URL('./voltagent-workspace.ts', import.meta.url));
      const run = spawnSync(process.execPath, ['--conditions=ctxfs-source', script, backend], { encoding: 'utf8', timeout: 60_000 });
      expect(run.stderr).not.toContain('AssertionError');
      expect(run.stdout).toContain('voltagent workspace: 12 checks passed');
      expect(run.status).toBe(0);
    });
  });
}

describe('deepagents backend over a filesystem with a smaller convenience cap', () => {
  it('a download of a file past the cap is refused as permission_denied with the limit and what to do', async () => {
    const fs = new MemoryFilesystem({
      files: { 'big.bin': new Uint8Array(64).fill(7), 'small.bin': new Uint8Array([1, 2]) },
      limits: { maxConvenienceBytes: 32 },
    });
    const context = await createContext({ fs, safety: { policyFiles: false } });
    try {
      const b = new CtxfsBackend({ context });
      const [big, small] = await b.downloadFiles(['/big.bin', '/small.bin']);
      expect(big).toMatchObject({ path: '/big.bin', content: null, error: 'permission_denied' });
      expect(big?.message).toContain('ETOOLARGE');
      expect(big?.message).toContain('64 bytes exceed the convenience limit of 32 bytes');
      expect(big?.message).toContain('offset and limit to page');
      expect(small).toEqual({ path: '/small.bin', content: new Uint8Array([1, 2]), error: null });
    } finally {
      await context.close();
    }
  });
});

describe('deepagents backend with a command runner', () => {
  it('execute goes to the runner given: stdout and stderr together, the exit code, output past the cap cut', async () => {
    const ws = await openWorkspace('host', { 'f.txt': 'content\n' });
    try {
      const b = new CtxfsBackend({ context: ws.context, runner: shellRunner(ws.hostRoot as string), maxOutputChars: 12 });
      expect(b.description).toContain('test runner');
      expect(await b.execute('cat f.txt; exit 3')).toEqual({ output: 'content\n', exitCode: 3, truncated: false });
      expect(await b.execute('echo out; echo err >&2')).toEqual({ output: 'out\nerr\n', exitCode: 0, truncated: false });
      expect(await b.execute('seq 1 100')).toMatchObject({ output: '1\n2\n3\n4\n5\n6\n', truncated: true });
    } finally {
      await ws.close();
    }
  });
});
