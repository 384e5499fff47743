/**
 * `@ctxfs/adapters/mastra` — a ctxfs workspace as Mastra's `WorkspaceFilesystem`.
 *
 * @example
 * ```ts
 * import { Workspace } from '@mastra/core/workspace';
 * import { CtxfsWorkspaceFilesystem } from '@ctxfs/adapters/mastra';
 * const workspace = new Workspace({ filesystem: new CtxfsWorkspaceFilesystem({ context: await createContext({ fs }) }) });
 * ```
 *
 * @module
 */

export { CtxfsWorkspaceFilesystem, type CtxfsWorkspaceFilesystemOptions } from './workspace-filesystem.ts';
