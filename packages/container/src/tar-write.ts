/**
 * Streaming writes through `PUT /containers/{id}/archive`: a tar stream is
 * generated on the fly with tar-stream and piped into the request. Entries
 * carry their mode, owner and mtime explicitly; tar-stream switches to PAX
 * headers for names over 100 bytes, and every entry here is at most one part
 * (a few MiB), far below the 8 GiB limit of the classic size field.
 *
 * Used for writes whose size is known when they are sent (up to a few MiB,
 * staged in memory): the engine holds its container lock while an archive
 * request runs, so longer streams go through an exec instead (exec-stream.ts).
 *
 * @module
 */

import type Docker from 'dockerode';
import * as tar from 'tar-stream';

/** Ownership and permissions of an uploaded entry. */
export interface EntryOwner {
  mode: number;
  uid: number;
  gid: number;
}

/** One archive upload in progress. */
export class ArchiveUpload {
  readonly #pack: tar.Pack;
  readonly #done: Promise<void>;
  #failed: Error | undefined;
  #finished = false;

  constructor(container: Docker.Container, dirAbs: string) {
    this.#pack = tar.pack();
    this.#done = container.putArchive(this.#pack as unknown as NodeJS.ReadableStream, { path: dirAbs }).then(
      () => undefined,
      (err: unknown) => {
        this.#failed = err instanceof Error ? err : new Error(String(err));
        throw this.#failed;
      },
    );
    // The rejection is observed by finish(); keep Node from flagging it early.
    this.#done.catch(() => {});
  }

  /** Adds one complete entry named `name` (relative to the upload directory). */
  async add(name: string, data: Uint8Array, owner: EntryOwner): Promise<void> {
    if (this.#failed) throw this.#failed;
    const header: tar.Header = {
      name,
      size: data.byteLength,
      mode: owner.mode,
      uid: owner.uid,
      gid: owner.gid,
      uname: '',
      gname: '',
      linkname: '',
      devmajor: 0,
      devminor: 0,
      mtime: new Date(),
      type: 'file',
    };
    // Race the entry against the request: if the engine drops the upload,
    // the pack is never drained and the entry callback would never come.
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        this.#pack.entry(header, Buffer.from(data.buffer, data.byteOffset, data.byteLength), (err) => (err ? reject(err) : resolve()));
      }),
      this.#done.then(() => {
        throw new Error('the archive upload ended early');
      }),
    ]);
    if (this.#failed) throw this.#failed;
  }

  /** Ends the archive and waits for the engine to have extracted it. */
  async finish(): Promise<void> {
    if (!this.#finished) {
      this.#finished = true;
      this.#pack.finalize();
    }
    await this.#done;
  }

  /** Abandons the upload; whatever the engine extracted is left for the caller to remove. */
  async abort(): Promise<void> {
    this.#finished = true;
    this.#pack.destroy(new Error('upload aborted'));
    await this.#done.catch(() => {});
  }
}

/** Uploads one file of known content as `name` inside `dirAbs`. */
export async function putFile(container: Docker.Container, dirAbs: string, name: string, data: Uint8Array, owner: EntryOwner): Promise<void> {
  const upload = new ArchiveUpload(container, dirAbs);
  try {
    await upload.add(name, data, owner);
    await upload.finish();
  } catch (err) {
    await upload.abort();
    throw err;
  }
}
