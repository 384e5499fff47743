import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What `git apply` makes of `text` (as a.txt) with `patch`, or `undefined`
 * when it refuses. `zero` adds `--unidiff-zero`: hunks without context are
 * then placed by their numbers alone, as ctxfs places them; without it git
 * also refuses an insertion before line 2 that is not at the file's start.
 * Read as bytes decoded as UTF-8, so CRLF and a missing final newline show.
 */
export function gitApplied(text: string, patch: string, zero: boolean): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-git-apply-'));
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'a.txt'), text);
    try {
      execFileSync('git', ['apply', ...(zero ? ['--unidiff-zero'] : []), '-'], { cwd: dir, input: patch, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch {
      return undefined;
    }
    return readFileSync(join(dir, 'a.txt'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A unified diff of a.txt with `hunks`. */
export const unified = (hunks: string): string => `--- a/a.txt\n+++ b/a.txt\n${hunks}`;
