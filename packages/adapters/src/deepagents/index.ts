/**
 * `@ctxfs/adapters/deepagents` — a ctxfs workspace as a deepagents backend
 * (`BackendProtocolV2` and its sandbox variant), and as VoltAgent's
 * `FilesystemBackend`.
 *
 * @example
 * ```ts
 * import { CtxfsBackend } from '@ctxfs/adapters/deepagents';
 * const backend = new CtxfsBackend({ context: await createContext({ fs }) });
 * const agent = createDeepAgent({ model, backend });
 * ```
 *
 * @module
 */

export type { CommandRunner, RunCommandOptions, RunningCommand } from '../command-runner.ts';
export {
  CtxfsBackend,
  type CtxfsBackendOptions,
  type CtxfsBackendSettings,
  type CtxfsDownloadResponse,
  type CtxfsUploadResponse,
  type DeferredWorkspace,
  EMPTY_CONTENT_WARNING,
} from './backend.ts';
export { numberLines } from './line-numbers.ts';
export { toVoltAgentBackend, type VoltAgentFileData, type VoltAgentFilesystemBackend, type VoltAgentResult } from './voltagent.ts';
