import { describe, expect, it } from 'vitest';
import { FsError, type FsErrorCode, fsError, toFsError } from '../src/errors.ts';
import { errno } from '../src/filesystem-base.ts';

const CODES: FsErrorCode[] = [
  'ENOENT',
  'EEXIST',
  'EISDIR',
  'ENOTDIR',
  'ENOTEMPTY',
  'EACCES',
  'EPERM',
  'EROFS',
  'EINVAL',
  'ENAMETOOLONG',
  'ENOSPC',
  'EMFILE',
  'ELOOP',
  'EIO',
  'EBUSY',
  'EPATHESCAPE',
  'ETOOLARGE',
  'ELOCKTIMEOUT',
  'ECONFLICT',
  'EUNSUPPORTED',
  'EUNAVAILABLE',
  'EBINARY',
  'EDECODE',
  'ECLOSED',
  'ENOSNAPSHOT',
  'EBADPATTERN',
];

/** Words that appear twice in a row, ignoring case and punctuation: "EBINARY: EBINARY", "expression: Invalid regular". */
function repeatedPhrase(message: string): string | undefined {
  const words = message.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  for (let n = 1; n <= 4; n++) {
    for (let i = 0; i + 2 * n <= words.length; i++) {
      const a = words.slice(i, i + n).join(' ');
      if (a === words.slice(i + n, i + 2 * n).join(' ')) return a;
    }
  }
  return undefined;
}

describe('FsError messages say each thing once', () => {
  it.each(CODES)('%s without a reason is described, not repeated', (code) => {
    const err = fsError(code, 'readFile', 'a.bin');
    expect(err.reason).not.toBe(code);
    expect(err.message.startsWith(`${code}: ${err.reason}, readFile 'a.bin' (`)).toBe(true);
    expect(repeatedPhrase(`${code}: ${err.reason}`)).toBeUndefined();
  });

  it('EBINARY from a text read is "binary content", not "EBINARY: EBINARY"', () => {
    expect(fsError('EBINARY', 'readFile', 'logo.png').message).toBe(
      "EBINARY: binary content, readFile 'logo.png' (the file is binary; use readBytes() or openRead() instead of a text read)",
    );
  });

  it('a wrapped engine message that restates the prefix keeps one copy', () => {
    const err = new FsError({ code: 'EBADPATTERN', op: 'grep', reason: 'invalid regular expression: Invalid regular expression: /(/: Unterminated group' });
    expect(err.reason).toBe('invalid regular expression: /(/: Unterminated group');
    expect(repeatedPhrase(err.message)).toBeUndefined();
  });

  it('a reason that starts with the code (a wrapped Node-style message) loses it', () => {
    const err = toFsError(errno('EUNSUPPORTED', 'EUNSUPPORTED: snapshots are off'), 'snapshot');
    expect(err.message).toMatch(/^EUNSUPPORTED: snapshots are off, snapshot \(/);
    expect(toFsError(errno('ECLOSED'), 'read', 'f').message).toMatch(/^ECLOSED: already closed, read 'f' \(/);
  });

  it('a reason of its own is kept word for word', () => {
    const err = fsError('EINVAL', 'grep', undefined, { reason: 'maxMatches must be a non-negative integer' });
    expect(err.reason).toBe('maxMatches must be a non-negative integer');
    expect(err.withOperation('read').message).toBe(`EINVAL: maxMatches must be a non-negative integer, read (${err.hint})`);
  });
});
