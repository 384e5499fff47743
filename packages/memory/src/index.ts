/**
 * `@ctxfs/memory` — the in-memory ctxfs backend.
 *
 * @example
 * ```ts
 * import { MemoryFilesystem } from '@ctxfs/memory';
 * const fs = new MemoryFilesystem();
 * await fs.write('hello.txt', 'hi\n');
 * ```
 *
 * @module
 */

export { MemoryFilesystem, type MemoryFilesystemOptions } from './memory-filesystem.ts';
