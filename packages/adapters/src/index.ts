/**
 * `@ctxfs/adapters` — ctxfs as the workspace of agent frameworks, each
 * adapter thin over one context-layer session so an agent gets the same
 * budgets, stale detection by content, merges, history, policy and audit
 * whatever framework it runs in. One subpath per framework, each framework
 * an optional peer dependency:
 *
 * - `@ctxfs/adapters/ai-sdk`: the AI SDK's sandbox session;
 * - `@ctxfs/adapters/deepagents`: deepagents' `BackendProtocolV2` and its sandbox variant (VoltAgent's backend shape too);
 * - `@ctxfs/adapters/mastra`: Mastra's `WorkspaceFilesystem`.
 *
 * This entry point holds what they share.
 *
 * @example
 * ```ts
 * import { WorkspaceFiles } from '@ctxfs/adapters';
 * const files = new WorkspaceFiles({ context: await createContext({ fs }) });
 * await files.readLineRange('big.log', 1000, 1100);
 * ```
 *
 * @module
 */

export { type CommandRunner, CommandsUnavailableError, NO_COMMANDS, type RunCommandOptions, type RunningCommand } from './command-runner.ts';
export { EDITABLE_WRITE_BYTES, type FilesGrepOptions, WorkspaceFiles, type WorkspaceFilesOptions, type WriteBytesOptions } from './workspace-files.ts';
