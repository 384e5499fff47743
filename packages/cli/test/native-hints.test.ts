/**
 * Hints as the CLI's own commands (native-call.ts): each form is checked
 * by running it beside the `ctxfs call` it stands for, in the built binary
 * through a real shell, and comparing what the two print; a call a command
 * has no place for keeps the `ctxfs call` form.
 */

import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { shellArgument } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { commandPrefix, genericCall } from '../src/call-text.ts';
import { nativeCall } from '../src/native-call.ts';
import type { GlobalOptions } from '../src/options.ts';
import { ctxfs, pasted, useProject } from './support/cli.ts';

const LONG = Array.from({ length: 300 }, (_, i) => `line ${i + 1}: ${i % 7 === 0 ? 'TODO check' : 'fine'}`).join('\n');

/** Calls with a native form: the form, then the call each must equal. */
const NATIVE: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ['project_overview', { budget_tokens: 600 }, 'ctxfs overview --budget 600'],
  ['list_files', {}, 'ctxfs ls'],
  ['list_files', { path: '.', depth: 2 }, 'ctxfs ls --depth 2'],
  ['list_files', { path: 'src', glob: '**/*.ts', limit: 5, offset: 1, include_ignored: true }, "ctxfs ls src --glob '**/*.ts' --limit 5 --offset 1 -a"],
  ['list_files', { include_ignored: false }, 'ctxfs ls'],
  ['grep', { pattern: 'TODO' }, 'ctxfs grep TODO'],
  ['grep', { pattern: 'a + b', path: 'src', literal: true, ignore_case: true, context_lines: 1 }, "ctxfs grep 'a + b' src -F -i --context 1"],
  ['grep', { pattern: 'line', output: 'files' }, 'ctxfs grep line --files'],
  ['grep', { pattern: 'line', output: 'count', glob: '*.txt' }, "ctxfs grep line --glob '*.txt' --count"],
  ['grep', { pattern: 'TODO', output: 'content', limit: 3, offset: 2 }, 'ctxfs grep TODO --limit 3 --offset 2'],
  ['read_file', { path: 'src/math.ts' }, 'ctxfs cat src/math.ts'],
  ['read_file', { path: 'long.txt', max_tokens: 200, strategy: 'end' }, 'ctxfs cat long.txt --max-tokens 200 --strategy end'],
  ['read_lines', { path: 'long.txt', start_line: 10, end_line: 20 }, 'ctxfs cat long.txt --lines 10:20'],
  ['read_lines', { path: 'long.txt', start_line: 290 }, 'ctxfs cat long.txt --lines 290:'],
  [
    'read_lines',
    { path: 'long.txt', start_line: 40, end_line: 40, context: 2, max_tokens: 300 },
    'ctxfs cat long.txt --lines 40:40 --context 2 --max-tokens 300',
  ],
  ['read_file', { path: "it's here.txt" }, "ctxfs cat 'it'\\''s here.txt'"],
  ['get_outline', { path: 'src/math.ts' }, 'ctxfs outline src/math.ts'],
  ['get_outline', { path: 'src/math.ts', start_line: 2, end_line: 4, max_tokens: 400 }, 'ctxfs outline src/math.ts --lines 2:4 --max-tokens 400'],
  ['get_outline', { path: 'src/math.ts', start_line: 2 }, 'ctxfs outline src/math.ts --lines 2:'],
  ['get_symbol', { path: 'src/math.ts', name: 'add' }, 'ctxfs symbol add src/math.ts'],
  ['find_symbol', { query: 'add', kind: 'function', path: 'src', limit: 3 }, 'ctxfs symbol add --kind function --in src --limit 3'],
  ['get_related_files', { path: 'src/main.ts', depth: 2 }, 'ctxfs related src/main.ts --depth 2'],
  ['get_file_history', { path: 'src/math.ts', limit: 3 }, 'ctxfs history src/math.ts --limit 3'],
  ['get_diff', { path: 'src/math.ts' }, 'ctxfs diff src/math.ts'],
  ['get_diff', { path: 'src/math.ts', from: 1, to: 'current' }, 'ctxfs diff src/math.ts 1 current'],
  ['grep', { pattern: 'x', glob: '-odd' }, "ctxfs grep x '--glob=-odd'"],
];

/** Edits with a native form (not run twice: the second would find the change made), checked by what they do below. */
const EDITS: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ['replace', { path: 'notes.txt', old_text: 'draft', new_text: 'final' }, 'ctxfs replace notes.txt draft final'],
  ['replace', { path: 'a.ts', old_text: 'x = 1', new_text: '', occurrence: 'all' }, "ctxfs replace a.ts 'x = 1' '' --all"],
  ['replace', { path: 'a.ts', old_text: 'x', new_text: 'y', occurrence: 'first', message: 'why' }, 'ctxfs replace a.ts x y --first --message why'],
  ['replace', { path: 'a.ts', old_text: '(\\w+)', new_text: '$1!', occurrence: 2, regex: true }, "ctxfs replace a.ts '(\\w+)' '$1!' --nth 2 --regex"],
  ['replace', { path: 'a.ts', old_text: 'x', new_text: 'y', occurrence: 'unique' }, 'ctxfs replace a.ts x y'],
  ['rollback', { path: 'a.ts', to: 3 }, 'ctxfs rollback a.ts 3'],
  ['rollback', { path: 'a.ts', to: 'previous', message: 'back' }, 'ctxfs rollback a.ts previous --message back'],
];

/** Calls a command has no place for: the hint stays `ctxfs call`. */
const GENERIC: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['read_lines', { path: 'a.ts', start_line: 3, column: 40 }],
  ['grep', { pattern: '-v' }],
  ['grep', { pattern: 'a\nb' }],
  ['read_file', { path: '--help' }],
  ['find_symbol', { query: 'add', match: 'all' }],
  ['get_diff', { path: 'a.ts', to: 3 }],
  // A hash of digits only would be read back as a version number.
  ['get_diff', { path: 'a.ts', from: '123456789012' }],
  ['list_files', { depth: 1.5 }],
  ['glob', { pattern: '**/a.ts' }],
  ['check_conflicts', { path: 'a.ts' }],
  ['read_lines', { path: 'a.ts' }],
  ['get_outline', { path: 'a.ts', end_line: 4 }],
  // An option-like text, a text of two lines, a hash of digits, an occurrence replace has no flag for.
  ['replace', { path: 'a.ts', old_text: '--x', new_text: 'y' }],
  ['replace', { path: 'a.ts', old_text: 'a\nb', new_text: 'y' }],
  ['rollback', { path: 'a.ts', to: '123456789012' }],
  ['replace', { path: 'a.ts', old_text: 'x', new_text: 'y', occurrence: 0 }],
];

describe('hints as the CLI’s own commands', () => {
  const project = useProject(undefined, (p) => {
    p.write('long.txt', `${LONG}\n`);
    p.write("it's here.txt", 'quoted name\n');
  });

  it('writes a call as the command that makes it, shell-quoted, where the command has a place for every argument', () => {
    for (const [tool, args, expected] of [...NATIVE, ...EDITS]) expect(nativeCall(tool, args), `${tool} ${JSON.stringify(args)}`).toBe(expected);
    for (const [tool, args] of GENERIC) expect(nativeCall(tool, args), `${tool} ${JSON.stringify(args)}`).toBeUndefined();
  });

  it('each native form prints what its ctxfs call prints, run through a shell', () => {
    // Both are commands to paste: each runs as a shell would run it, `ctxfs` being the built binary.
    const shell = (command: string) => {
      const r = pasted(project, command);
      // A read's nonce is drawn for each answer; nothing else may differ.
      const plain = (s: string) => s.replaceAll(/nonce="\d+"/g, 'nonce="N"');
      return { status: r.status, stdout: plain(r.stdout), stderr: plain(r.stderr) };
    };
    for (const [tool, args, native] of NATIVE) {
      const viaCommand = shell(native);
      const viaCall = shell(genericCall(tool, args));
      // No file matches the glob that starts with a dash: both say so alike.
      if (args.glob !== '-odd') expect(viaCommand.status, `${native}: ${viaCommand.stderr}`).toBe(0);
      expect(viaCommand, native).toEqual(viaCall);
    }
  });

  // A text found more than once offered `ctxfs call replace '{…,"occurrence":"all"}'` where `ctxfs replace … --all` does it.
  it('a replace refused for a text found twice offers the replace command that does it, which runs pasted', () => {
    project.write('twice.txt', 'x = 1;\nx = 1;\n');
    const r = ctxfs(project, ['replace', 'twice.txt', 'x = 1', 'x = 2']);
    expect(r.status).toBe(2);
    const offered = /ctxfs replace twice\.txt 'x = 1' 'x = 2' --all/.exec(r.stderr)?.[0];
    expect(offered, r.stderr).toBeDefined();
    const done = pasted(project, offered ?? '');
    expect(done.status, done.stderr).toBe(0);
    expect(ctxfs(project, ['cat', '--raw', 'twice.txt']).stdout).toBe('x = 2;\nx = 2;\n');
    // Rolled back by the command its history names.
    const back = pasted(project, 'ctxfs rollback twice.txt 1');
    expect(back.status, back.stderr).toBe(0);
    expect(ctxfs(project, ['cat', '--raw', 'twice.txt']).stdout).toBe('x = 1;\nx = 1;\n');
  });

  it('hints a person is given run as written, in either form', () => {
    const hints = new Set<string>();
    for (const args of [
      ['-p', 'small', '--json', 'cat', 'long.txt'],
      ['--json', 'cat', 'long.txt', '--lines', '400:401'],
    ]) {
      const r = ctxfs(project, args);
      const body = JSON.parse(r.stdout) as { next?: string; error?: { hint?: string } };
      if (body.next !== undefined) hints.add(body.next);
      const hint = body.error?.hint?.match(/ctxfs (?:cat|ls|grep) [^\s)]+(?: --[^\s)]+ [^\s)]+)*/)?.[0];
      if (hint !== undefined) hints.add(hint);
    }
    // `-p small` was typed, so each hint repeats it.
    expect([...hints].filter((h) => h.startsWith('ctxfs --profile small cat ')).length).toBe(1);
    expect([...hints].filter((h) => h.startsWith('ctxfs cat ')).length).toBe(1);
    expect(hints.size).toBe(2);
    for (const hint of hints) {
      const r = pasted(project, hint);
      expect(r.status, `${hint}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^<file path="long\.txt"/);
    }
  });

  it('a hint repeats the global options typed on its command line, and runs where that command ran', () => {
    // From a directory beside the project: a hint without --root would look for long.txt there.
    const cwd = join(project.base, 'elsewhere');
    mkdirSync(cwd, { recursive: true });
    const args = ['--root', '../proj', '-p', 'small', '--agent', 'llm:probe', '--no-policy-files', '--request-id', 'r-1', '--json', 'cat', 'long.txt'];
    const r = ctxfs(project, args, { cwd });
    expect(r.status, r.stderr).toBe(0);
    const next = (JSON.parse(r.stdout) as { next?: string }).next ?? '';
    // Not --json (how this command answers) nor --request-id (the next command with it would be taken for this one's retry).
    expect(next).toMatch(/^ctxfs --root \.\.\/proj --profile small --agent llm:probe --no-policy-files cat long\.txt --lines 1:\d+$/);
    const run = pasted(project, next, { cwd });
    expect(run.status, `${next}: ${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^<file path="long\.txt"/);
    const bare = pasted(project, next.replace('--root ../proj ', ''), { cwd });
    expect(bare.status, bare.stderr).toBe(3);
  });

  it('an option a variable set is not repeated: the next command reads the variable again', () => {
    const r = ctxfs(project, ['--json', 'cat', 'long.txt'], { env: { CTXFS_PROFILE: 'small' } });
    const next = (JSON.parse(r.stdout) as { next?: string }).next ?? '';
    expect(next).toMatch(/^ctxfs cat long\.txt --lines 1:\d+$/);
    const run = pasted(project, next, { env: { CTXFS_PROFILE: 'small' } });
    expect(run.status, run.stderr).toBe(0);
  });

  it('writes the typed options shell-quoted, under their current names, without a password', async () => {
    const given = (typed: string[], extra: Partial<GlobalOptions>): Promise<string> =>
      commandPrefix({ root: '/srv/my repo', policyFiles: true, color: true, ...extra, typed: new Set(typed) });
    expect(await given([], { backend: 'docker:dev', profile: 'small' })).toBe('ctxfs');
    // An absolute root or state file is written from the current directory (a refusal's text keeps host paths out).
    expect(await given(['root', 'backend', 'workdir'], { backend: 'docker:dev', workdir: '/work' })).toBe(
      `ctxfs --root ${shellArgument(relative(process.cwd(), '/srv/my repo'))} --backend docker:dev --workdir /work`,
    );
    expect(await given(['state'], { state: 'postgres://app:s3cret@db/ctxfs?password=x&sslmode=require' })).toBe(
      "ctxfs --state 'postgres://app@db/ctxfs?sslmode=require'",
    );
    // --store is the former name of --state; a file path is not a URL, whatever it contains.
    expect(await given(['store'], { store: '/tmp/a:b@c.db' })).toBe(`ctxfs --state ${shellArgument(relative(process.cwd(), '/tmp/a:b@c.db'))}`);
    expect(await given(['session', 'agent'], { session: '-s1', agent: 'llm:claude' })).toBe("ctxfs --agent llm:claude '--session=-s1'");
    expect(await given(['policyFiles', 'json', 'color', 'requestId'], { policyFiles: false, json: true, color: false, requestId: 'r' })).toBe(
      'ctxfs --no-policy-files',
    );
  });
});
