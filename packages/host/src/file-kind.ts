/**
 * The protocol's kind of a host entry, from its `lstat` or directory entry.
 *
 * @module
 */

import type nodeFs from 'node:fs';
import type { FileKind } from '@ctxfs/core';

/** What `s` names; a symlink is reported as itself, never followed. */
export function kindOfStats(s: nodeFs.Stats | nodeFs.Dirent): FileKind {
  return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : s.isSymbolicLink() ? 'symlink' : 'other';
}
