/**
 * Scripts on a copy of an installed package's tree, run by CtxfsBash on the
 * host backend and by the real /bin/bash on an identical copy: what each
 * prints, its exit status and the tree it leaves must be the same. The
 * commands are the adapter's part of session 34's campaign (pipelines,
 * redirections, globbing, find, grep -r, sed -i, non-UTF-8 bytes, missing
 * files, links inside the tree), those where just-bash's own commands
 * answer as GNU's do, so a difference is the adapter's; where just-bash's
 * commands differ from GNU's by themselves (sort order, od's columns, grep
 * on binary files, error wordings), the command is left out. stderr is not
 * compared: bash says `line 1:` and names paths as written.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBash } from '../src/index.ts';

/** just-bash's own installed package: its README, licence, manifest and type declarations of its filesystems. */
const PACKAGE = join(import.meta.dirname, '../node_modules/just-bash');

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh copy of the tree, with the files and links the campaign added to it. */
function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-against-bash-'));
  made.push(dir);
  for (const name of ['README.md', 'LICENSE', 'package.json']) cpSync(join(PACKAGE, name), join(dir, name));
  cpSync(join(PACKAGE, 'dist/fs'), join(dir, 'fs'), { recursive: true });
  writeFileSync(join(dir, 'latin1.txt'), Buffer.from('caf\xe9\nna\xefve\n', 'latin1'));
  writeFileSync(join(dir, 'bin.dat'), Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 0x41, 0x42, 10]));
  writeFileSync(join(dir, 'crlf.txt'), 'one\r\ntwo\r\n');
  writeFileSync(join(dir, 'noeol.txt'), 'last line');
  writeFileSync(join(dir, 'sp ace.txt'), 'spaced\n');
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
  mkdirSync(join(dir, 'empty'));
  symlinkSync('LICENSE', join(dir, 'lic'));
  symlinkSync('fs', join(dir, 'fsl'));
  symlinkSync('../LICENSE', join(dir, 'fs/up'));
  return dir;
}

/** Every entry below `dir`: its kind and its bytes, or where a link points. */
function picture(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const p = rel === '' ? name : `${rel}/${name}`;
    const st = lstatSync(join(dir, p));
    if (st.isSymbolicLink()) out[p] = `link -> ${readlinkSync(join(dir, p))}`;
    else if (st.isDirectory()) Object.assign(out, { [p]: 'dir' }, picture(dir, p));
    else out[p] = `${(st.mode & 0o777).toString(8)} ${readFileSync(join(dir, p)).toString('base64')}`;
  }
  return out;
}

const SCRIPTS = [
  // pipelines
  "cat package.json | grep -c '\"'",
  'cat fs/*.d.ts | wc -l',
  'head -5 README.md | tee copy.txt | wc -l; cat copy.txt | wc -l',
  'for f in fs/*.d.ts; do echo "$f $(wc -l < $f)"; done | head -4',
  'tr a-z A-Z < package.json | head -2',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's expansion, not JavaScript's
  'cat nope.txt | wc -l; echo "${PIPESTATUS[@]}"',
  'set -o pipefail; cat nope | wc -l; echo $?',
  // redirections
  'echo hi > out.txt && cat out.txt',
  'echo hi >> package.json && tail -1 package.json',
  'echo a > empty/f && ls empty',
  'echo x > nodir/f; echo "after $?"',
  'echo x > fs; echo $?',
  'echo x 2> nodir/e; echo "s=$?"',
  '{ echo a; } > nodir/x; echo "s=$?"',
  'set -e; echo x > nodir/f; echo after',
  'echo x > nodir/f || echo handled',
  'echo x > empty/; echo "s=$?"',
  '{ cat package.json; cat nope; } > both.txt 2>&1; wc -l < both.txt',
  'cat package.json > package.json; wc -c package.json',
  "cat <<'E' > h.txt\nhello $HOME\nE\ncat h.txt",
  'exec 3>fd3.txt; echo via3 >&3; exec 3>&-; cat fd3.txt',
  'cat fs/interface.d.ts > /dev/null && echo ok',
  // globbing
  'echo fs/*.d.ts | wc -w',
  'echo *.md',
  'echo nomatch*',
  'shopt -s nullglob; echo none*; echo end',
  'echo fs/[a-i]*.d.ts',
  // find
  'find fs -type f | sort',
  'find . -type d | sort',
  'find . -empty | sort',
  'find nope; echo $?',
  "find fs -name '*.d.ts' -exec grep -l IFileSystem {} + | sort",
  "find . -name 'sp*'",
  // grep -r
  'grep -r IFileSystem fs | wc -l',
  'grep -rn readFile fs | wc -l',
  'grep -r nothing-here fs; echo $?',
  'grep -c x nope.txt; echo $?',
  'grep -rl Copyright . | wc -l',
  // sed -i
  "sed -i 's/interface/INTERFACE/g' fs/interface.d.ts && grep -c INTERFACE fs/interface.d.ts",
  "sed -i 's/run/RUN/' run.sh; stat -c %a run.sh; cat run.sh",
  "sed -i 's/line/LINE/' noeol.txt && cat noeol.txt",
  "sed -i 's/one/ONE/' crlf.txt && cat crlf.txt",
  // bytes that are not UTF-8
  'cat latin1.txt',
  'cat latin1.txt | wc -c',
  'cat latin1.txt bin.dat > both && wc -c < both',
  'cp bin.dat b2 && cat b2',
  'mv latin1.txt l3 && cat l3',
  'cat latin1.txt >> LICENSE && tail -c 11 LICENSE',
  'tee t.bin < bin.dat > /dev/null; cat t.bin',
  "sed -i 's/caf/CAF/' latin1.txt && cat latin1.txt",
  "sed -i 's/AB/ab/' bin.dat && cat bin.dat",
  "awk '{ print > FILENAME }' latin1.txt; cat latin1.txt",
  // missing files, directories
  'cat nope.txt; echo "status $?"',
  'ls nope; echo $?',
  'rm nope.txt; echo $?',
  'rm -f nope; echo $?',
  'mkdir fs; echo $?',
  'cat fs; echo $?',
  'cp nope x; echo $?',
  'mv nope x; echo $?',
  'cd nope; echo $?',
  'rmdir fs; echo $?',
  'rm -r fs && ls | wc -l',
  'mv README.md empty/ && ls empty',
  'mkdir -p a/b/c && touch a/b/c/d && find a | sort',
  'cd fs && cat ../package.json | head -1 && ls .. | wc -l',
  // links inside the tree
  'cat lic | head -2',
  'cat fs/up | head -1',
  'ls fsl | wc -l',
  'test -L lic && echo link',
  'readlink lic fs/up; readlink -f lic',
  'echo hi >> lic; tail -1 LICENSE',
  'rm lic && ls LICENSE',
  'cp lic c && test ! -L c && echo regular',
];

describe('CtxfsBash on the host backend answers as /bin/bash on the same tree', () => {
  it.each(SCRIPTS)('%s', async (script) => {
    const real = tree();
    const ours = tree();
    const bash = spawnSync('/bin/bash', ['-c', script], { cwd: real, encoding: 'latin1', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8', HOME: '/' } });
    const fs = new HostFilesystem({ root: ours });
    const ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
    try {
      const r = await new CtxfsBash(ctx).exec(script);
      // just-bash's stdout holds the bytes written, one character each; bash's is read as latin1 for the same.
      // The workspace root is bash's `/`.
      const stdout = bash.stdout.replaceAll(`${realpathSync(real)}/`, '/');
      expect({ stdout: r.stdout, exitCode: r.exitCode }).toEqual({ stdout, exitCode: bash.status });
      expect(picture(ours)).toEqual(picture(real));
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
