/**
 * The workspace's root directory removed under a running session (a temp
 * checkout cleaned up, a volume unmounted): every call fails, and each
 * failure must still speak the tools' language. A write's refusal carried
 * core's default hint, "check the path with list() or glob(), or create it
 * first", naming calls no tool user can make, and a missing file's refusal
 * said how to create it twice ("create it with write_file with your path and
 * your content, giving its path and the whole content"). Every call now
 * says what happened, the backend's EUNAVAILABLE: the root is gone (each
 * answered ENOENT of its own path, and the hints to list or create it
 * failed the same way).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { TOOLS, Toolset } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';

const NAMES = callNames(TOOLS);

const CALLS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['read_file', { path: 'src/a.ts' }],
  ['read_lines', { path: 'src/a.ts', start_line: 1, end_line: 2 }],
  ['list_files', { path: 'src' }],
  ['grep', { pattern: 'a' }],
  ['write_file', { path: 'src/b.ts', content: 'x\n' }],
  ['create_file', { path: 'n.txt', content: 'x\n' }],
  ['replace', { path: 'src/a.ts', old_text: 'a = 1', new_text: 'a = 2' }],
  ['edit_lines', { path: 'src/a.ts', action: 'replace', start_line: 1, end_line: 1, text: 'y\n' }],
  ['apply_patch', { patch: '*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch\n' }],
  ['delete_file', { path: 'src/a.ts' }],
  ['get_file_metadata', { path: 'src/a.ts' }],
];

describe('the root removed under a session', () => {
  it('every refusal names tool calls only, each creation advice said once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ctxfs-root-removed-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
    const fs = await HostFilesystem.open({ root });
    const ctx = await createContext({ fs, safety: { policyFiles: false } });
    try {
      await ctx.scan();
      const tools = new Toolset(ctx.session({ agent: 'llm:test', profile: 'small' }));
      expect((await tools.run('read_file', { path: 'src/a.ts' })).isError).toBe(false);
      rmSync(root, { recursive: true, force: true });
      for (const [name, args] of CALLS) {
        const r = await tools.run(name, args);
        expect(r.isError, `${name}: ${r.text}`).toBe(true);
        expect(r.text, name).toMatch(/^EUNAVAILABLE: .*the workspace's root directory no longer exists/);
        expect(r.text, name).not.toMatch(/\b(list|glob|openWrite|openRead|readBytes|listSnapshots)\(\)/);
        expect(r.text, name).not.toMatch(/giving its path and the whole content/);
        const foreign = findToolCalls(r.text, NAMES).filter((f) => f.kind !== 'call');
        expect(
          foreign.map((f) => f.source),
          `${name}: ${r.text}`,
        ).toEqual([]);
      }
    } finally {
      await ctx.close();
      await fs.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
