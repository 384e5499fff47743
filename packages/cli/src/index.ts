/**
 * `@ctxfs/cli` — the `ctxfs` command line. The binary is
 * `dist/bundle/ctxfs.js` (`dist/bin.js` bundled by the repository's `scripts/bundle-bins.ts`); this
 * module exposes the program and what the tests and docs read from it: the
 * exit codes and the `--json` shape of every command.
 *
 * @example
 * ```ts
 * import { buildProgram, EXIT } from '@ctxfs/cli';
 * buildProgram().commands.map((c) => c.name()); // ['overview', 'ls', 'cat', …]
 * EXIT.denied; // 4
 * ```
 *
 * @module
 */

export { type CliBackend, parseBackendOption } from './backend.ts';
export { CliError, EXIT, type ExitCode, exitCodeOf } from './exit-codes.ts';
export type { GlobalOptions } from './options.ts';
export { type Action, buildProgram, VERSION } from './program.ts';
export { JSON_SHAPES } from './schemas.ts';
