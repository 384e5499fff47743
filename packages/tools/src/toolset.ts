/**
 * `@ctxfs/tools/toolset` — the tool set bound to a session ({@link Toolset})
 * and every tool, without the rest of the package's exports: what a process
 * that runs tool calls imports when it wants to start fast. The package's
 * index also builds the shared result shapes (`servedData`, `searchData`,
 * `editData`) as it loads; this entry builds a schema only when it is read
 * (the arguments of the tool a call runs).
 *
 * @example
 * ```ts
 * const { Toolset } = await import('@ctxfs/tools/toolset');
 * const r = await new Toolset(ctx).run('read_file', { path: 'README.md' });
 * ```
 *
 * @module
 */

export * from './catalog/index.ts';
export { type CallResult, type RunOptions, Toolset, type ToolsetOptions } from './dispatch.ts';
