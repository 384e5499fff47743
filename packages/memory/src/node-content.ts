/**
 * The one place that reaches into memfs's inode to share buffers instead of
 * copying them. memfs keeps `buf` (capacity) and `size` (used bytes); its
 * private `_setBuf` installs a buffer as-is, where the public `setBuffer`
 * copies. Pinning memfs's version and the snapshot tests guard this contract.
 *
 * @module
 */

/** The part of memfs's `Node` this backend uses. */
export interface ContentNode {
  buf: Uint8Array;
  mode: number;
  mtime: Date;
  ctime: Date;
  btime: Date;
  getSize(): number;
  isSymlink(): boolean;
  isDirectory(): boolean;
  isFile(): boolean;
  touch(): void;
  write(buf: Buffer, off: number, len: number, pos: number): number;
  setBuffer(buf: Buffer): void;
  _setBuf?: (buf: Buffer) => void;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Makes `bytes` the node's content without copying. The node's capacity
 * becomes exactly `bytes.length`, so a later append reallocates instead of
 * writing into memory another reader or snapshot may share.
 */
export function setContent(node: ContentNode, bytes: Uint8Array): void {
  if (typeof node._setBuf === 'function') node._setBuf(asBuffer(bytes));
  else node.setBuffer(asBuffer(bytes));
}

/**
 * The node's current content as a view (no copy); never mutate it. A plain
 * Uint8Array, not a Buffer: `Buffer#slice` shares memory, so a caller's
 * `view.slice()` meant as a copy would hand out the stored bytes.
 */
export function viewOf(node: ContentNode): Uint8Array {
  const buf = node.buf;
  return new Uint8Array(buf.buffer, buf.byteOffset, node.getSize());
}
