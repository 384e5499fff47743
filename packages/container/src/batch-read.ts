/**
 * Many small reads in one go. Reads that arrive in the same turn of the
 * event loop (`Promise.all(paths.map(readBytes))`) are answered by one helper
 * request per 256 paths: the helper checks the paths' symlinks, keeps the
 * small regular files (`find -size`) and sends them as one `tar`, parsed here
 * with tar-stream. Everything a batch cannot answer (missing, a directory, a
 * larger file, a symlink at the end, a link leaving the workspace) takes the
 * single-file path, which reports the precise error.
 *
 * @module
 */

import { Readable } from 'node:stream';
import * as tar from 'tar-stream';

/** Extracts the regular files of a tar held in memory: entry name → bytes. */
export async function untarFiles(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, entry, next) => {
      const parts: Buffer[] = [];
      entry.on('data', (d: unknown) => parts.push(d as Buffer));
      entry.on('end', () => {
        if (header.type === 'file' || header.type === 'contiguous-file') files.set(header.name, Buffer.concat(parts));
        next();
      });
      entry.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  Readable.from([archive]).pipe(extract as unknown as NodeJS.WritableStream);
  await done;
  return files;
}
