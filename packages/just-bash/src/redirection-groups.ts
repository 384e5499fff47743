/**
 * A redirection whose target cannot be opened fails its command, as in
 * bash, instead of ending the whole script.
 *
 * Bash prints `bash: a.txt/: Is a directory`, gives the command exit
 * status 1 and goes on with the next one. just-bash 3.4 opens the target of
 * `>`, `>>`, `2>`, `&>`, `&>>` and `>&file` by writing it empty
 * (`openOutputEntry` in src/interpreter/redirections.ts) and lets the
 * filesystem's error of that write leave the command
 * (`handleWriteError = false`). A statement of the script does not catch
 * it (`executeScript` in src/interpreter/interpreter.ts rethrows what is
 * not one of its own errors), so `exec` rejects and what the script printed
 * before is gone. A group `{ …; }` does catch it (`executeGroupBody` in
 * src/interpreter/subshell-group.ts): its output so far, the error's
 * message on stderr, exit status 1, and the script goes on.
 *
 * So this transform (just-bash's `registerTransformPlugin`) puts each
 * command with an output redirection into a group of its own before the
 * script runs: `echo x > a.txt` runs as `{ echo x > a.txt; }`, in the same
 * shell (variables, `cd`, functions as before). The filesystem gives the
 * refusal bash's line as its message (`RedirectionError`), so the
 * group prints what bash prints. `eval`, `source` and `.` are grouped too:
 * what they run is parsed when they run, after this transform.
 *
 * What the group does with the other errors just-bash throws is what any
 * compound command of just-bash does with them (an `if`, a loop): `exit`,
 * `return`, `break`, `continue`, `set -e` and the execution limits go
 * through; the rest fail the group with their message.
 *
 * @module
 */

import type { CommandNode, PipelineNode, ScriptNode, StatementNode, TransformPlugin } from 'just-bash';

type Redirection = Extract<CommandNode, { type: 'SimpleCommand' }>['redirections'][number];
type Group = Extract<CommandNode, { type: 'Group' }>;

/** The operators that open a file for writing; `>&` only with a file as its target (`>&out.txt`, not `2>&1`). */
const WRITES: ReadonlySet<string> = new Set(['>', '>|', '>>', '&>', '&>>', '>&']);

/** Targets just-bash opens itself, never through the filesystem, or that never fail to open. */
const STREAMS: ReadonlySet<string> = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/** The text of a word written without expansions, or undefined. */
function literal(word: { parts: ReadonlyArray<{ type: string; value?: unknown }> } | null | undefined): string | undefined {
  if (!word || word.parts.length === 0) return undefined;
  let text = '';
  for (const part of word.parts) {
    if (part.type !== 'Literal' || typeof part.value !== 'string') return undefined;
    text += part.value;
  }
  return text;
}

/** Whether a redirection opens a file for writing, one that can fail to open. */
function opensFile(r: Redirection): boolean {
  if (!WRITES.has(r.operator) || r.target.type !== 'Word') return false;
  const target = literal(r.target);
  if (target !== undefined && STREAMS.has(target)) return false;
  // `>&` duplicates a descriptor (`2>&1`, `>&-`, `>&$fd`); only a literal other target is a file.
  if (r.operator === '>&') return target !== undefined && !/^(\d+-?|-)$/.test(target);
  return true;
}

/** Builtins that run shell text parsed after the transform. */
const RUNS_TEXT: ReadonlySet<string> = new Set(['eval', 'source', '.']);

/** Whether `command` goes into a group of its own. */
function grouped(command: CommandNode): boolean {
  const name = command.type === 'SimpleCommand' ? literal(command.name) : undefined;
  // `exec`'s redirections are the shell's own from then on: it stays as written.
  if (name === 'exec') return false;
  if (name !== undefined && RUNS_TEXT.has(name)) return true;
  const redirections = (command as { redirections?: Redirection[] }).redirections ?? [];
  return redirections.some(opensFile);
}

function group(command: CommandNode): Group {
  const statement: StatementNode = {
    type: 'Statement',
    pipelines: [{ type: 'Pipeline', commands: [command], negated: false }],
    operators: [],
    background: false,
  };
  return { type: 'Group', body: [statement], redirections: [] };
}

/** Groups the commands of every pipeline in `node`, at any depth (bodies, functions, `$(…)`). */
function visit(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const value of Object.values(node)) visit(value);
  const pipeline = node as Partial<PipelineNode>;
  if (pipeline.type === 'Pipeline' && Array.isArray(pipeline.commands)) {
    pipeline.commands = pipeline.commands.map((c) => (grouped(c) ? group(c) : c));
  }
}

/**
 * The transform, for just-bash's `registerTransformPlugin`; `CtxfsBash`
 * registers it. With a plain `Bash` over `CtxfsBashFs`, register it to
 * have the same.
 *
 * @example
 * ```ts
 * const bash = new Bash({ fs: new CtxfsBashFs(ctx), cwd: '/' });
 * bash.registerTransformPlugin(redirectionGroups);
 * (await bash.exec('echo one; echo x > locked.txt; echo two')).stdout; // 'one\ntwo\n'
 * ```
 */
export const redirectionGroups: TransformPlugin = {
  name: 'ctxfs-redirection-groups',
  transform({ ast }): { ast: ScriptNode } {
    visit(ast);
    return { ast };
  },
};

/**
 * Whether a write is just-bash opening a redirection's target: the only
 * call it makes with empty content and the encoding given as the string
 * `'binary'` (commands pass an options object, or no encoding).
 */
export function opensRedirection(content: unknown, options: unknown): boolean {
  return content === '' && options === 'binary';
}
