// Stands in for just-bash's ReadWriteFs in its tests: the same tree, through ctxfs on the host.
import { ctxfsOnHost } from '../ctxfs-factory.ts';

export class ReadWriteFs {
  constructor(options: { root: string; allowSymlinks?: boolean; maxFileReadSize?: number; readOnly?: boolean }) {
    // biome-ignore lint/correctness/noConstructorReturn: the tests construct the filesystem they are given
    return ctxfsOnHost(options.root, options) as unknown as ReadWriteFs;
  }
}
