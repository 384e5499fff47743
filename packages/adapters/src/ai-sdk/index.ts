/**
 * `@ctxfs/adapters/ai-sdk` — a ctxfs workspace as the AI SDK's sandbox session.
 *
 * @example
 * ```ts
 * import { createSandboxSession } from '@ctxfs/adapters/ai-sdk';
 * const sandbox = createSandboxSession({ context: await createContext({ fs }) });
 * await generateText({ model, tools, experimental_sandbox: sandbox, prompt });
 * ```
 *
 * @module
 */

export type { CommandRunner, RunCommandOptions, RunningCommand } from '../command-runner.ts';
export { createSandboxSession, type SandboxSessionOptions } from './sandbox-session.ts';
