/**
 * just-bash over any ctxfs backend: {@link CtxfsBashFs} is just-bash's
 * `IFileSystem` over a context session (policy, history, audit), and
 * {@link CtxfsBash} a `Bash` whose every exec is one audited, undoable command.
 *
 * @example
 * ```ts
 * import { CtxfsBash } from '@ctxfs/just-bash';
 * const bash = new CtxfsBash(await createContext({ fs }));
 * await bash.exec('for f in src/*.ts; do sed -i s/foo/bar/ "$f"; done');
 * ```
 *
 * @module
 */

export { asBashResult, type BashErrorCode, BashFsError, RedirectionError, toBashError } from './bash-errors.ts';
export { CtxfsBash, type CtxfsBashOptions, type CtxfsExecResult } from './ctxfs-bash.ts';
export { CtxfsBashFs, type CtxfsBashFsOptions, type CtxfsDirent } from './ctxfs-bash-fs.ts';
export { DEVICES, type Device, deviceAt } from './devices.ts';
export { opensRedirection, redirectionGroups } from './redirection-groups.ts';
export { resolveVirtual, virtualPath, workspacePath } from './virtual-path.ts';
