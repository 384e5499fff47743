/**
 * An absolute path inside the workspace root (`/tmp/repo/lib/view.js` for
 * the root `/tmp/repo`, as a model copies it from a stack trace) is refused
 * with the relative path to use (`lib/view.js`) where the caller knows the
 * root's host spellings; it had only the generic "e.g. src/index.ts". One
 * outside the root is refused exactly as before: nothing about it, or about
 * where the root is, is told back.
 */
import { describe, expect, test } from 'vitest';
import { type FsError, isFsError, relativeToRoot, resolvePath } from '../src/index.ts';

const ROOTS = ['/private/tmp/repo', '/tmp/repo'];

function refusal(input: string, roots: string | readonly string[] = ROOTS): FsError {
  try {
    resolvePath(input, 'readBytes', undefined, roots);
  } catch (err) {
    if (isFsError(err)) return err;
    throw err;
  }
  throw new Error(`${input} resolved`);
}

/** The path a hint says to use. */
function suggested(hint: string | undefined): string {
  const m = /: "([^"]*)"$/.exec(hint ?? '');
  if (m === null) throw new Error(`no path in the hint: ${hint}`);
  return m[1] as string;
}

describe('an absolute path inside the root', () => {
  test('is refused with the relative path to use, which resolves to the file meant', () => {
    for (const [input, want] of [
      ['/tmp/repo/lib/view.js', 'lib/view.js'],
      ['/private/tmp/repo/lib/view.js', 'lib/view.js'],
      ['/tmp/repo//lib/./x/../view.js', 'lib/view.js'],
      ['/tmp/repo/docs/', 'docs'],
      ['\\tmp\\repo\\src\\a.ts', 'src/a.ts'],
    ] as const) {
      const err = refusal(input);
      expect(err.code).toBe('EPATHESCAPE');
      expect(err.reason).toBe('absolute paths are not accepted');
      expect(err.hint).toBe(`use the path relative to the workspace root: "${want}"`);
      expect(resolvePath(suggested(err.hint), 'readBytes').path).toBe(want);
    }
  });

  test('the root itself is named "."', () => {
    const err = refusal('/tmp/repo/');
    expect(err.hint).toContain('"."');
    expect(resolvePath('.', 'list').path).toBe('');
  });

  test('a drive-letter path inside a Windows root names the relative path, the drive in either case', () => {
    const err = refusal('c:\\work\\repo\\src\\a.ts', 'C:\\work\\repo');
    expect(err.code).toBe('EPATHESCAPE');
    expect(suggested(err.hint)).toBe('src/a.ts');
  });
});

describe('an absolute path outside the root', () => {
  test('is refused as without the roots: same code, reason and hint', () => {
    for (const input of ['/etc/passwd', '/tmp/repo2/x.js', '/tmp/repo/../repo2/x.js', '/tmp', '/tmp/repo/lib/../../../etc/passwd', 'D:\\repo\\x']) {
      const known = refusal(input);
      const unknown = refusal(input, []);
      expect({ code: known.code, reason: known.reason, hint: known.hint, path: known.path }).toEqual({
        code: unknown.code,
        reason: unknown.reason,
        hint: unknown.hint,
        path: unknown.path,
      });
      expect(known.hint).not.toContain('/tmp/repo');
    }
  });

  test('relativeToRoot answers only for absolute paths that lie inside a root', () => {
    expect(relativeToRoot('/tmp/repo/lib/view.js', '/tmp/repo')).toBe('lib/view.js');
    expect(relativeToRoot('/tmp/repo', '/tmp/repo/')).toBe('');
    expect(relativeToRoot('/tmp/repository/x', '/tmp/repo')).toBeUndefined();
    expect(relativeToRoot('lib/view.js', '/tmp/repo')).toBeUndefined();
    expect(relativeToRoot('/tmp/repo/x', 'memory:')).toBeUndefined();
    expect(relativeToRoot('/tmp/repo/x', [])).toBeUndefined();
  });
});
