/**
 * Snapshot images of a memfs tree. Capturing records each entry's metadata
 * and a reference to each file's buffer with its used size — never the bytes
 * themselves — so a snapshot of 10,000 files allocates under 1 MiB, not the
 * content. Per file it allocates one small record and nothing else: the name
 * is memfs's own key string and the parent a reference, because a view or a
 * joined path per file costs more than the record itself (the bench measures
 * this against a 2 MiB budget).
 *
 * @module
 */

import type { Volume } from 'memfs';
import { type ContentNode, setContent } from './node-content.ts';

interface LinkLike {
  children: Map<string, LinkLike | undefined>;
  getNode(): ContentNode;
  createChild(name: string, node: ContentNode): LinkLike;
}

interface DirImage {
  /** Undefined for the root. */
  readonly parent: DirImage | undefined;
  readonly name: string;
  readonly mode: number;
  readonly mtime: Date;
  readonly btime: Date;
}

interface FileImage {
  readonly dir: DirImage;
  readonly name: string;
  readonly mode: number;
  readonly mtime: Date;
  readonly btime: Date;
  /** memfs's buffer; only `[0, size)` belongs to the snapshot (appends write past it). */
  readonly buf: Uint8Array;
  readonly size: number;
}

/** An immutable picture of a whole tree. */
export interface TreeImage {
  /** Directories, parents before children; the root first. */
  readonly dirs: readonly DirImage[];
  readonly files: readonly FileImage[];
}

/** Captures the tree below `root` (memfs's root link). */
export function captureTree(root: LinkLike): TreeImage {
  const dirs: DirImage[] = [];
  const files: FileImage[] = [];
  const stack: Array<[LinkLike, DirImage | undefined, string]> = [[root, undefined, '']];
  while (stack.length > 0) {
    const [link, parent, dirName] = stack.pop() as [LinkLike, DirImage | undefined, string];
    const node = link.getNode();
    const dir: DirImage = { parent, name: dirName, mode: node.mode, mtime: node.mtime, btime: node.btime };
    dirs.push(dir);
    for (const [name, child] of link.children) {
      if (child === undefined || name === '.' || name === '..') continue;
      const childNode = child.getNode();
      if (childNode.isDirectory()) stack.push([child, dir, name]);
      else if (childNode.isFile()) {
        files.push({ dir, name, mode: childNode.mode, mtime: childNode.mtime, btime: childNode.btime, buf: childNode.buf, size: childNode.getSize() });
      }
    }
  }
  return { dirs, files };
}

interface VolumeCore {
  readonly root: LinkLike;
  createNode(mode: number): ContentNode;
}

/**
 * Rebuilds `image` into an empty volume, sharing the captured buffers. Links
 * are created under their parent directly, as memfs's own mkdir and open do
 * once they have resolved the parent: going through mkdirSync/writeFileSync
 * re-resolved every path and opened a descriptor per file, most of the cost.
 */
export function restoreTree(vol: Volume, image: TreeImage): void {
  const core = vol._core as unknown as VolumeCore;
  const links = new Map<DirImage, LinkLike>();
  const dated: Array<[ContentNode, { readonly mode: number; readonly mtime: Date; readonly btime: Date }]> = [];
  for (const dir of image.dirs) {
    const parent = dir.parent === undefined ? undefined : links.get(dir.parent);
    if (dir.parent !== undefined && parent === undefined) throw new Error(`snapshot image: directory '${dir.name}' precedes its parent`);
    const link = parent === undefined ? core.root : parent.createChild(dir.name, core.createNode(dir.mode));
    links.set(dir, link);
    dated.push([link.getNode(), dir]);
  }
  for (const file of image.files) {
    const parent = links.get(file.dir);
    if (parent === undefined) throw new Error(`snapshot image: file '${file.name}' has no directory`);
    const node = parent.createChild(file.name, core.createNode(file.mode)).getNode();
    // Capacity exactly `size`: an append to the restored file reallocates
    // instead of writing where another restore of this image could look.
    setContent(node, new Uint8Array(file.buf.buffer, file.buf.byteOffset, file.size));
    dated.push([node, file]);
  }
  // Times and modes last: creating children touches their parents.
  for (const [node, meta] of dated) {
    node.mode = meta.mode;
    node.mtime = meta.mtime;
    node.btime = meta.btime;
  }
}
