/**
 * How the ripgrep path reads output the installed rg does not print: the
 * binary notice after a NUL, as later ripgrep versions may write it, and a
 * line that is neither a match nor a notice. A script stands in for rg on
 * PATH and prints exactly those lines; the real rg's output is compared
 * with the JS scanner in grep-parity.test.ts.
 */
import nodeFs from 'node:fs';
import path from 'node:path';
import { collect } from '@ctxfs/conformance';
import { isFsError } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const ws = tempWorkspace('ctxfs-rg-output-');
const bin = path.join(ws.base, 'bin');
let viaScript: HostFilesystem;
let js: HostFilesystem;

const LATE_NUL = Buffer.concat([Buffer.from('alpha line\n'.repeat(1000)), Buffer.from([0]), Buffer.from('alpha after\n')]);

beforeAll(async () => {
  nodeFs.writeFileSync(path.join(ws.root, 'a.txt'), 'alpha\n');
  nodeFs.writeFileSync(path.join(ws.root, 'late.dat'), LATE_NUL);
  nodeFs.mkdirSync(bin);
  // Prints what CTXFS_TEST_RG_OUTPUT names, whatever it is asked.
  nodeFs.writeFileSync(
    path.join(bin, 'rg'),
    [
      '#!/bin/sh',
      'case "$CTXFS_TEST_RG_OUTPUT" in',
      `  nul-notice) printf './a.txt\\0001:alpha\\n./late.dat\\0: binary file matches (found "\\\\0" byte around offset 11000)\\n' ;;`,
      "  garbage) printf './a.txt\\0001:alpha\\nsomething else entirely\\n' ;;",
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  process.env.PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  viaScript = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, grep: 'ripgrep' });
  js = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, grep: 'js' });
});

afterAll(async () => {
  await viaScript.close();
  await js.close();
  ws.remove();
});

describe('grep: reading ripgrep output', () => {
  it('takes a binary notice written after the path NUL, and searches that file again with the scanner', async () => {
    process.env.CTXFS_TEST_RG_OUTPUT = 'nul-notice';
    const found = await collect(viaScript.grep('alpha', { maxMatches: 10_000 }));
    expect(found).toEqual(await collect(js.grep('alpha', { maxMatches: 10_000 })));
    // The scanner stops at the NUL, as rg does: 1,000 lines of late.dat, none after it.
    expect(found.filter((m) => m.path === 'late.dat')).toHaveLength(1000);
    expect(found[0]).toMatchObject({ path: 'a.txt', line: 1, text: 'alpha' });
  });

  it('refuses output it cannot read with EIO, the scope and what to do, never a guess', async () => {
    process.env.CTXFS_TEST_RG_OUTPUT = 'garbage';
    let error: unknown;
    try {
      await collect(viaScript.grep('alpha', {}));
    } catch (err) {
      error = err;
    }
    expect(isFsError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'EIO', op: 'grep', path: '' });
    expect((error as Error).message).toContain('something else entirely');
    expect((error as Error).message).toContain("grep: 'js'");
  });
});
