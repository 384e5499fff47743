/**
 * `run_command` through the tool set: small output whole, output over the
 * caller's budget kept with a head-and-tail preview, and every call the
 * result names made as written, in the same profile, until the whole
 * output has been read back — nothing lost, nothing over the budget.
 */

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, o200kTokenizer } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, describe, expect, it } from 'vitest';
import { type CallResult, TOOLS, Toolset } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';

const NAMES = callNames(TOOLS);
const LINES = 400;
const SCRIPT = `i=1; while [ $i -le ${LINES} ]; do echo "row $i of the report: $(printf '%s' "$i" | wc -c) digits"; i=$((i+1)); done; echo "done" >&2`;

// Each host root and the state file beside it, removed after the file's tests.
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const BACKENDS = {
  memory: () => new MemoryFilesystem({ files: { 'a.txt': 'alpha\n' } }),
  host: () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-run-command-'));
    made.push(base);
    const root = join(base, 'ws');
    mkdirSync(root);
    const fs = new HostFilesystem({ root });
    return fs;
  },
};

describe.each(Object.entries(BACKENDS))('run_command on %s', (_name, make) => {
  const open = async (profile: 'small' | 'large' = 'small') => {
    const fs = make();
    // The state on disk for the host (the kept output goes beside it), in memory otherwise.
    const ctx = await createContext({
      fs,
      store: fs instanceof HostFilesystem ? join(fs.root, '..', `.${fs.root.split('/').at(-1)}.state.db`) : undefined,
      safety: { policyFiles: false },
    });
    const tools = new Toolset(ctx.session({ agent: 'llm:test', profile }));
    return { fs, ctx, tools };
  };

  it('returns a small output whole, numbered, with the exit status', async () => {
    const { ctx, tools } = await open();
    try {
      const r = await tools.run('run_command', { command: 'echo hi; echo there >&2; exit 2' });
      expect(r.isError).toBe(false);
      expect(r.text).toMatch(/^\$ echo hi; echo there >&2; exit 2\nexit 2 \((just-bash|bubblewrap)\)\n1\thi\n2\t\[stderr\]\n3\tthere$/);
      expect(r.data).toMatchObject({ exit_code: 2, total_lines: 3, shown_lines: [{ start_line: 1, end_line: 3 }], limits: [] });
    } finally {
      await ctx.close();
    }
  });

  it('keeps an output over the budget and reads it all back by following the calls it names, each within the budget', async () => {
    const { ctx, tools } = await open();
    const budget = tools.session.profile.perCallTokens;
    try {
      const first = await tools.run('run_command', { command: SCRIPT });
      expect(first.isError, first.text).toBe(false);
      expect(o200kTokenizer.count(first.text)).toBeLessThanOrEqual(budget);
      expect(first.data.output_id).toMatch(/^[0-9a-f]{12}$/);
      expect(first.text).toContain(`output: ${LINES + 2} lines, over this call's budget`);
      // The head and the tail are shown: the first row and the stderr at the end.
      expect(first.text).toContain('1\trow 1 of the report');
      expect(first.text).toMatch(/\n\d+\tdone$/);

      const seen = new Map<number, string>();
      const collect = (r: CallResult): void => {
        for (const line of r.text.split('\n')) {
          const m = /^(\d+)\t(.*)$/.exec(line);
          if (m) seen.set(Number(m[1]), m[2] as string);
        }
      };
      collect(first);
      let previous = first;
      let calls = 0;
      while (previous.data.next !== undefined) {
        // The call as the text writes it, found as a model finds it, and made as written.
        const [call, ...others] = findToolCalls(previous.text, NAMES);
        expect(others).toEqual([]);
        expect(call?.kind).toBe('call');
        if (call?.kind !== 'call') break;
        expect(call.source).toBe(previous.data.next);
        const r = await tools.run(call.name, call.args);
        expect(r.isError, r.text).toBe(false);
        expect(o200kTokenizer.count(r.text)).toBeLessThanOrEqual(budget);
        collect(r);
        previous = r;
        expect(++calls).toBeLessThan(50);
      }
      expect(calls).toBeGreaterThan(0);
      expect(seen.size).toBe(LINES + 2);
      for (let i = 1; i <= LINES; i++) expect(seen.get(i)).toBe(`row ${i} of the report: ${String(i).length} digits`);
      expect(seen.get(LINES + 1)).toBe('[stderr]');
      expect(seen.get(LINES + 2)).toBe('done');
    } finally {
      await ctx.close();
    }
  });

  it('states the time limit it hit, and refuses a command the policy denies as an error result', async () => {
    const { ctx, tools } = await open('large');
    try {
      const slow = await tools.run('run_command', { command: 'echo begun; sleep 30', timeout_seconds: 1 });
      expect(slow.isError).toBe(false);
      expect(slow.text).toContain('stopped (');
      expect(slow.text).toContain('limit hit: time: stopped after 1 s');
      expect(slow.data).toMatchObject({ exit_code: null, limits: [{ limit: 'time' }] });
      const missing = await tools.run('read_command_output', { id: '000000000000', start_line: 1 });
      expect(missing).toMatchObject({ isError: true });
      expect(missing.text).toContain('ENOENT');
    } finally {
      await ctx.close();
    }
    const fs = make();
    const strict = await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy: { commands: { deny: ['curl *'] } } } });
    try {
      const refused = await new Toolset(strict.session({ agent: 'llm:test' })).run('run_command', { command: 'ls; curl http://example.com' });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^EDENIED: .*deny "curl \*"/);
    } finally {
      await strict.close();
    }
  });
});

describe('run_command with a working directory through a link out of the workspace', () => {
  it('is refused without saying where the link leads', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-run-command-link-'));
    mkdirSync(join(base, 'ws'));
    mkdirSync(join(base, 'outside-secret-place'));
    writeFileSync(join(base, 'outside-secret-place', 'victim.txt'), 'x\n');
    symlinkSync(join(base, 'outside-secret-place'), join(base, 'ws', 'out'));
    symlinkSync(join(base, 'outside-secret-place', 'victim.txt'), join(base, 'ws', 'out-file'));
    const fs = new HostFilesystem({ root: join(base, 'ws') });
    const ctx = await createContext({ fs, store: join(base, 'state.db'), safety: { policyFiles: false } });
    try {
      const tools = new Toolset(ctx.session({ agent: 'llm:test' }));
      for (const cwd of ['out', 'out-file', 'out-file/x']) {
        const r = await tools.run('run_command', { command: 'ls', cwd });
        expect(r.isError, cwd).toBe(true);
        expect(r.text, cwd).not.toContain('outside-secret-place');
        expect(r.text, cwd).not.toContain(base);
      }
    } finally {
      await ctx.close();
      await fs.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
