/**
 * A workspace error that reaches a tool with the protocol's default hint
 * (no call wrote one of its own) is given to the model in the tools' words:
 * the defaults name the protocol's calls (`list()`, `openRead()`,
 * `{ recursive: true }`, `fs.capabilities`), which no tool makes. Only four
 * codes were translated; an `EROFS`, `EUNSUPPORTED` or `EDECODE` from a
 * backend reached the model as "open it writable", "check fs.capabilities",
 * "pass the right { encoding } or read bytes".
 */
import { FsError, type FsErrorCode } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { toolHint } from '../src/dispatch.ts';

// Every code, checked by the compiler: a new one fails here until it is listed.
const CODES = {
  ENOENT: true,
  EEXIST: true,
  EISDIR: true,
  ENOTDIR: true,
  ENOTEMPTY: true,
  EACCES: true,
  EPERM: true,
  EROFS: true,
  EINVAL: true,
  ENAMETOOLONG: true,
  ENOSPC: true,
  EMFILE: true,
  ELOOP: true,
  EIO: true,
  EBUSY: true,
  EPATHESCAPE: true,
  ETOOLARGE: true,
  ELOCKTIMEOUT: true,
  ECONFLICT: true,
  EUNSUPPORTED: true,
  EUNAVAILABLE: true,
  EBINARY: true,
  EDECODE: true,
  ECLOSED: true,
  ENOSNAPSHOT: true,
  EBADPATTERN: true,
  EDENIED: true,
  ELIMIT: true,
} satisfies Record<FsErrorCode, true>;

/** What only a program on the protocol could do. */
const PROTOCOL = /\w\(\)|\{ ?\w+: |fs\.\w|capabilities|openRead|openText|readBytes|listSnapshots|existOk/;

describe('default hints through the tools', () => {
  it('every code: the protocol’s default is said in the tools’ words, never naming its calls', () => {
    for (const code of Object.keys(CODES) as FsErrorCode[]) {
      const hint = toolHint(new FsError({ code, op: 'readBytes', path: 'a.txt' }));
      expect(hint.length, code).toBeGreaterThan(10);
      expect(hint, code).not.toMatch(PROTOCOL);
    }
  });

  it('a hint written for the call is kept as written', () => {
    const err = new FsError({ code: 'EROFS', op: 'write', path: 'a.txt', hint: 'the policy keeps a.txt read-only' });
    expect(toolHint(err)).toBe('the policy keeps a.txt read-only');
  });
});
