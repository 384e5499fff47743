/**
 * Reads of one file through `GET /containers/{id}/archive`: the engine's tar
 * stream is parsed with tar-stream as it arrives and the entry's bytes are
 * handed out on demand, so memory stays at one chunk however large the file.
 *
 * The engine holds its container lock while an archive request streams, so
 * this path serves bounded reads that consume the stream at once
 * (`readBytes`); readers that stay open use an exec stream.
 *
 * @module
 */

import type { IncomingMessage } from 'node:http';
import type Docker from 'dockerode';
import * as tar from 'tar-stream';
import { REPLACED_MESSAGE } from './exec-stream.ts';
import { type ForwardStream, type RemoteFile, sequentialFile } from './sequential-file.ts';

/**
 * Whether a tar header describes the file the helper checked (`identity`: inode, size, mtime in
 * seconds; the header has no inode). The engine reads the path as root and follows links on the
 * way, so a file replaced, or a directory swapped for a link, since the check is refused here.
 */
function sameFile(header: tar.Header, identity: string | undefined): boolean {
  if (identity === undefined) return true;
  const [, size, mtime] = identity.split(':');
  // Within a second: Podman's tar writer rounds the mtime to the nearest second where stat truncates.
  return header.size === Number(size) && header.mtime !== undefined && Math.abs(header.mtime.getTime() / 1000 - Number(mtime)) <= 1;
}

async function openEntry(container: Docker.Container, absPath: string, identity: string | undefined): Promise<{ stream: ForwardStream; size: number }> {
  const response = (await container.getArchive({ path: absPath })) as unknown as IncomingMessage;
  const extract = tar.extract();
  const close = () => {
    response.destroy();
    extract.destroy();
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      close();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    extract.on('entry', (header, entry, next) => {
      if (settled) {
        entry.resume();
        next();
        return;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        fail(Object.assign(new Error(`not a regular file (${header.type})`), { code: 'EINVAL' }));
        return;
      }
      if (!sameFile(header, identity)) {
        fail(new Error(REPLACED_MESSAGE));
        return;
      }
      settled = true;
      const iterator = (entry as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
      const pull = async () => {
        const r = await iterator.next();
        return r.done ? undefined : r.value;
      };
      resolve({ stream: { next: pull, start: 0, close }, size: header.size ?? 0 });
    });
    extract.on('error', fail);
    extract.on('finish', () => fail(Object.assign(new Error('the archive held no file'), { code: 'ENOENT' })));
    response.on('error', fail);
    response.pipe(extract as unknown as NodeJS.WritableStream);
  });
}

/** Opens `absPath` (a regular file, symlinks resolved) through the archive endpoint; with `identity`, only while it is that file. */
export async function openArchiveFile(container: Docker.Container, absPath: string, onError: (err: unknown) => Error, identity?: string): Promise<RemoteFile> {
  let first: Awaited<ReturnType<typeof openEntry>>;
  try {
    first = await openEntry(container, absPath, identity);
  } catch (err) {
    throw onError(err);
  }
  return sequentialFile(first.size, async () => (await openEntry(container, absPath, identity)).stream, onError, first.stream);
}
