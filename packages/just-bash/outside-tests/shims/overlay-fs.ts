// Stands in for just-bash's OverlayFs in its tests: the same tree, through ctxfs on the host.
import { ctxfsOnHost } from '../ctxfs-factory.ts';

export class OverlayFs {
  constructor(options: { root: string; allowSymlinks?: boolean; maxFileReadSize?: number; readOnly?: boolean }) {
    // biome-ignore lint/correctness/noConstructorReturn: the tests construct the filesystem they are given
    return ctxfsOnHost(options.root, options) as unknown as OverlayFs;
  }
}
