/**
 * What of an error a model may see: host paths and server addresses are
 * named as outside the workspace; workspace paths, globs and ratios stay.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FsError, linkOutsideRoot } from '@ctxfs/core';
import { expect, test } from 'vitest';
import { type CallStyle, createContext, errorText, withCallStyle, withoutHostPaths } from '../src/index.ts';
import { hostBackend } from './backends.ts';
import { testState } from './support/test-state.ts';

test('a PostgreSQL URL with its socket directory, an engine address and a host path are hidden; the original is the cause', () => {
  const err = new FsError({
    code: 'EUNAVAILABLE',
    op: 'query',
    path: 'postgres://ctxfs@/ctxfs?host=/var/run/secret-socket&schema=w',
    reason:
      'the PostgreSQL server at postgres://ctxfs@/ctxfs?host=/var/run/secret-socket cannot be reached: connect ENOENT /var/run/secret-socket/.s.PGSQL.5432',
    hint: 'or try tcp://10.0.0.5:2376 with certificates in /home/me/.docker',
  });
  const safe = withoutHostPaths(err);
  for (const text of [safe.message, safe.reason, safe.hint, safe.path]) {
    expect(text).not.toMatch(/secret-socket|10\.0\.0\.5|\/home\/me/);
  }
  expect(safe.reason).toBe('the PostgreSQL server at (an address outside the workspace) cannot be reached: connect ENOENT (a path outside the workspace)');
  expect(safe.path).toBe('(an address outside the workspace)');
  expect(safe.cause).toBe(err);
});

test('workspace paths, globs and ratios are left as they are', () => {
  const err = new FsError({
    code: 'ENOENT',
    op: 'read',
    path: 'src/a.ts',
    reason: 'no match for src/**/*.ts in docs/api (3/4 tried)',
    hint: 'list src/',
  });
  expect(withoutHostPaths(err)).toBe(err);
});

test('a host path already in brackets is named in them, never in brackets of its own; a hint is read inside the brackets of the message', () => {
  const err = new FsError({
    code: 'EPATHESCAPE',
    op: 'readBytes',
    path: 'out',
    reason: "the symbolic link points outside the workspace (to '/etc/passwd')",
    hint: 'keep the state outside the workspace: the default is beside it (/var/lib/ctxfs/state.db), or in /tmp/state',
  });
  const safe = withoutHostPaths(err);
  expect(safe.reason).toBe('the symbolic link points outside the workspace (to a path outside the workspace)');
  expect(safe.hint).toBe('keep the state outside the workspace: the default is beside it (a path outside the workspace), or in a path outside the workspace');
  // The message wraps the hint in brackets: nothing in it is bracketed again.
  expect(safe.message).toBe(
    "EPATHESCAPE: the symbolic link points outside the workspace (to a path outside the workspace), readBytes 'out' (keep the state outside the workspace: the default is beside it (a path outside the workspace), or in a path outside the workspace)",
  );
  expect(safe.message).not.toMatch(/\(\(|\)\)/);
});

test('an address in brackets is named in them too', () => {
  const err = new FsError({ code: 'EUNAVAILABLE', op: 'open', reason: 'the engine does not answer (tcp://10.0.0.5:2376)' });
  expect(withoutHostPaths(err).reason).toBe('the engine does not answer (an address outside the workspace)');
});

test('a link out of the root, served through the context layer on the host, is refused in one phrase without where it leads', async () => {
  // It read "the path resolves outside the workspace root (to (a path outside the workspace))".
  const ws = await hostBackend.create({ 'ok.txt': 'ok\n' });
  const root = ws.fs.root as string;
  const outside = join(dirname(root), 'outside-served');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'out'));
  symlinkSync(outside, join(root, 'outdir'));
  const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test', safety: { policyFiles: false } });
  try {
    for (const [path, call] of [
      ['out', () => ctx.readFile('out')],
      ['outdir/secret.txt', () => ctx.readFile('outdir/secret.txt')],
      ['outdir', () => ctx.listFiles('outdir')],
    ] as const) {
      const err = (await call().catch((e: unknown) => e)) as FsError;
      expect(err, `expected a refusal of ${path}`).toBeInstanceOf(FsError);
      const expected = linkOutsideRoot(err.op, path);
      expect(err.message).toBe(expected.message);
      expect(errorText(err)).toBe(`${path}: ${expected.reason}; ${expected.hint}`);
      expect(err.message).not.toContain(outside);
    }
  } finally {
    await ctx.close();
    await ws.cleanup();
  }
});

test("the words a call style keeps verbatim stay as written, in the style's calls and when passed; a host path beside them is still hidden", () => {
  // The CLI writes its hints after the command line its reader typed: `ctxfs --workdir /srv scan` came out as
  // `ctxfs --workdir a path outside the workspace scan`, no command at all.
  const prefix = 'ctxfs --backend docker:dev --workdir /srv';
  const style: CallStyle = { name: 'cli', format: (op) => `${prefix} ${op}`, verbatim: [prefix] };
  const err = new FsError({
    code: 'ENOENT',
    op: 'readFile',
    path: 'a.ts',
    reason: 'no file at a.ts (it was /etc/hosts before)',
    hint: `find it with ${prefix} scan first, then ${prefix} glob; the state is in /var/lib/ctxfs`,
  });
  const expected = `find it with ${prefix} scan first, then ${prefix} glob; the state is in a path outside the workspace`;
  const inStyle = withCallStyle(style, () => withoutHostPaths(err));
  expect(inStyle.hint).toBe(expected);
  expect(inStyle.reason).toBe('no file at a.ts (it was a path outside the workspace before)');
  expect(withCallStyle(style, () => errorText(err))).toBe(`no file at a.ts (it was a path outside the workspace before); ${expected}`);
  expect(withoutHostPaths(err, [prefix]).hint).toBe(expected);
  // Outside the style, nothing is kept: a model's surface keeps no words.
  expect(withoutHostPaths(err).hint).toBe(
    'find it with ctxfs --backend docker:dev --workdir a path outside the workspace scan first, then ctxfs --backend docker:dev --workdir a path outside the workspace glob; the state is in a path outside the workspace',
  );
});
