/**
 * `ctxfs prune`: applies the state store's retention — history (versions per
 * file, bytes of stored content) and the read records — now, rather than
 * whenever a program embedding the context layer asks for it.
 *
 * @module
 */

import { plural } from '@ctxfs/context';
import { CliError, EXIT } from '../exit-codes.ts';
import { out, outJson } from '../output.ts';
import type { Action } from '../program.ts';
import type { PruneJson } from '../schemas.ts';
import { withContext } from '../workspace.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A positive whole number from an option, or undefined when not given. */
function positive(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new CliError('EINVAL', `${flag} must be a whole number of at least 1, not ${String(value)}`, `for example ${flag} 100`);
  }
  return value;
}

/** `ctxfs prune [--max-versions N] [--max-bytes N] [--max-idle-days N]`. */
export const prune: Action = (g, _args, o) => {
  const maxVersionsPerFile = positive(o.maxVersions, '--max-versions');
  const maxBytes = positive(o.maxBytes, '--max-bytes');
  const maxIdleDays = positive(o.maxIdleDays, '--max-idle-days');
  return withContext(g, async ({ ctx }) => {
    const history = await ctx.pruneHistory({ maxVersionsPerFile, maxBytes });
    const reads = await ctx.pruneReads(maxIdleDays === undefined ? {} : { maxIdleMs: maxIdleDays * DAY_MS });
    const data: PruneJson = {
      history: { versions_removed: history.versionsRemoved, blobs_removed: history.blobsRemoved, bytes_freed: history.bytesFreed },
      reads: { repeats_removed: reads.repeatsRemoved, idle_sessions: reads.idleSessions, idle_reads_removed: reads.idleReadsRemoved },
    };
    if (g.json) await outJson(data);
    else
      await out(
        [
          `history: ${plural(history.versionsRemoved, 'version')} removed, ${plural(history.blobsRemoved, 'stored content')} (${plural(history.bytesFreed, 'byte')}) freed`,
          `reads: ${plural(reads.repeatsRemoved, 'repeated read')} folded; ${plural(reads.idleSessions, 'idle session')} kept only ${reads.idleSessions === 1 ? 'its' : 'their'} last read of each file (${plural(reads.idleReadsRemoved, 'older read')} removed)`,
        ].join('\n'),
      );
    return EXIT.ok;
  });
};
