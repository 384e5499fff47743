/**
 * `ctxfs scan`: brings the registry up to date with the disk (incremental
 * after the first time) and, with `--index`, the import graph that
 * `related` reads — each with a progress bar on a terminal.
 *
 * @module
 */

import { plural } from '@ctxfs/context';
import { EXIT } from '../exit-codes.ts';
import { out, outJson } from '../output.ts';
import type { Action } from '../program.ts';
import { progressBar } from '../progress.ts';
import type { ScanJson } from '../schemas.ts';
import { withContext } from '../workspace.ts';

/** `ctxfs scan [--index]`. */
export const scan: Action = (g, _args, o) =>
  withContext(g, async ({ ctx }) => {
    const bar = await progressBar('scan');
    const r = await ctx.scan({
      onProgress: (p) => bar.update(p.phase === 'hash' ? p.hashed : p.checked, p.phase === 'hash' ? (p.toHash ?? p.files) : p.files, p.phase),
    });
    bar.stop();
    let index: ScanJson['index'];
    if (o.index === true) {
      const ibar = await progressBar('index');
      index = await ctx.indexRelations({ onProgress: (p) => ibar.update(p.done, p.total, 'imports') });
      ibar.stop();
    }
    const data: ScanJson = {
      files: r.files,
      added: [...r.added],
      changed: [...r.changed],
      removed: [...r.removed],
      unchanged: r.unchanged,
      hashed: r.hashed,
      bytes_hashed: r.bytesHashed,
      skipped: r.skipped.map((s) => ({ path: s.path, code: s.code })),
      duration_ms: Math.round(r.durationMs),
      index,
    };
    if (g.json) await outJson(data);
    else {
      // The registry's `unchanged` leaves out a file hashed to find its content the same (touched, restored): said here, those are unchanged too, so the counts add up to the files.
      const same = r.files - r.added.length - r.changed.length;
      const lines = [
        `${plural(r.files, 'file')}: ${r.added.length} added, ${r.changed.length} changed, ${r.removed.length} removed, ${same} unchanged (${r.hashed} hashed)`,
      ];
      if (r.skipped.length > 0) lines.push(`skipped ${r.skipped.length}: ${r.skipped.map((s) => `${s.path} (${s.code})`).join(', ')}`);
      if (index !== undefined) lines.push(`imports: ${plural(index.relations, 'relation')} in ${plural(index.files, 'file')} (${index.parsed} parsed)`);
      await out(lines.join('\n'));
    }
    return EXIT.ok;
  });
