/**
 * A buffer against the disk as a unified diff under a short metadata header
 * (seed 003's format): which file, its state, when the disk last changed and
 * the buffer's version, so an agent can tell what a save would write.
 *
 * @module
 */

import { formatUnifiedDiff } from '../history/unified-diff.ts';
import type { FileBuffer } from './file-buffer.ts';

/** Result of {@link bufferDiff}. */
export interface BufferDiff {
  readonly path: string;
  readonly status: string;
  readonly diskMtime: string | undefined;
  readonly bufferVersion: number;
  /** Header and diff together. */
  readonly text: string;
  /** The diff alone (`''`: no difference). */
  readonly diff: string;
  readonly linesAdded: number;
  readonly linesRemoved: number;
}

/**
 * Disk → buffer; with a pending conflict, the disk side is the new disk
 * content the conflict is about.
 *
 * @example
 * ```ts
 * bufferDiff(buffer).text;
 * // [file:src/a.ts]
 * // status: modified
 * // disk_mtime: 2026-01-01T10:30:00.000Z
 * // buffer_version: 3
 * // ---
 * // --- disk
 * // +++ buffer
 * // @@ -1 +1 @@ ...
 * ```
 */
export function bufferDiff(buffer: FileBuffer): BufferDiff {
  const disk = buffer.pending?.disk ?? buffer.disk;
  const d = formatUnifiedDiff(disk.file?.text ?? '', buffer.text, { oldLabel: disk.file ? 'disk' : '/dev/null (absent on disk)', newLabel: 'buffer' });
  const diskMtime = disk.mtime?.toISOString();
  const header = [
    `[file:${buffer.path}]`,
    `status: ${buffer.status}`,
    `disk_mtime: ${diskMtime ?? 'absent'}`,
    `buffer_version: ${buffer.version}`,
    ...(buffer.pending ? [`collisions: ${buffer.pending.collisions.length} (text both you and the disk changed)`] : []),
    '---',
  ].join('\n');
  return {
    path: buffer.path,
    status: buffer.status,
    diskMtime,
    bufferVersion: buffer.version,
    text: `${header}\n${d.text}`,
    diff: d.text,
    linesAdded: d.linesAdded,
    linesRemoved: d.linesRemoved,
  };
}
