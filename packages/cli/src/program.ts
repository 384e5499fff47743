/**
 * The `ctxfs` command line: every command, its arguments, options, help and
 * examples, built with commander. What a command does is loaded only when it
 * runs (`./commands/*.ts`), so `ctxfs --version` and `ctxfs cat --raw` load
 * neither the context layer nor the tools.
 *
 * @module
 */

import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { CONFIG_KEYS, loadCliConfig } from './config-file.ts';
import type { ExitCode } from './exit-codes.ts';
import { type GlobalOptions, PROFILES } from './options.ts';

/** What a command runs: the global options, its positional arguments, its own options. */
/** A command's body; it answers the exit code (one of `EXIT`'s, or for `run` the command's own status). */
export type Action = (globals: GlobalOptions, args: readonly string[], options: Readonly<Record<string, unknown>>) => Promise<ExitCode | number>;

/** The CLI's version, from its package.json (one level above both src/ and dist/). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** The examples section of a command's help. */
function examplesText(examples: readonly string[]): string {
  return `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`;
}

/** A command of `parent`: its usage line, what it does, examples for --help, and its action (loaded when run). */
function command(parent: Command, usage: string, summary: string, examples: readonly string[], load: () => Promise<Action>, isDefault = false): Command {
  const cmd = parent.command(usage, { isDefault }).description(summary);
  // A mistake in one command's arguments is answered with that command's help, not the whole program's list.
  const path = [cmd.name()];
  for (let up = parent; up.parent !== null; up = up.parent) path.unshift(up.name());
  cmd.showHelpAfterError(`(ctxfs ${path.join(' ')} --help shows its arguments, options and examples)`);
  if (examples.length > 0) cmd.addHelpText('after', examplesText(examples));
  cmd.action(async (...params: unknown[]) => {
    const self = params.at(-1) as Command;
    const action = await load();
    let program = self;
    while (program.parent !== null) program = program.parent;
    const typed = new Set(Object.keys(program.opts()).filter((key) => program.getOptionValueSource(key) === 'cli'));
    process.exitCode = await action({ ...(self.optsWithGlobals() as GlobalOptions), typed }, self.args, self.opts());
  });
  return cmd;
}

const int =
  (name: string) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new InvalidArgumentError(`${name} must be a whole number`);
    return n;
  };

const read = () => import('./commands/read.ts');
const edit = () => import('./commands/edit.ts');

/**
 * The program. `main.ts` parses `process.argv` with it; tests and embedders
 * can build it too (a new commander `Command` each time).
 *
 * @example
 * ```ts
 * const program = buildProgram();
 * program.commands.map((c) => c.name()); // ['overview', 'ls', 'cat', 'grep', …, 'serve']
 * await program.parseAsync(['node', 'ctxfs', 'cat', 'README.md']);
 * ```
 */
export function buildProgram(): Command {
  // Set first: subcommands copy the settings their parent has when they are added.
  const program = new Command()
    .exitOverride()
    .name('ctxfs')
    .description('The file layer for LLM agents, from the shell: read within a budget, search, patch, history, audit, snapshots and policy, on any backend.')
    .version(VERSION, '-v, --version', 'print the version')
    .addOption(new Option('-C, --root <dir>', 'the workspace directory').env('CTXFS_ROOT').default(process.cwd(), 'the current directory'))
    .addOption(new Option('-b, --backend <kind>', 'host | memory | docker:<container> | docker-image:<image>').env('CTXFS_BACKEND'))
    .addOption(new Option('--workdir <path>', 'the workspace inside a container (default /work)').env('CTXFS_WORKDIR'))
    .addOption(new Option('-p, --profile <name>', 'the model profile whose budgets apply (default large)').choices(PROFILES).env('CTXFS_PROFILE'))
    .addOption(new Option('--agent <name>', 'who acts, as history and audit record it (default cli)').env('CTXFS_AGENT'))
    .addOption(new Option('--session <id>', 'resume a session (reads, edits and budgets carry over)').env('CTXFS_SESSION'))
    .addOption(
      new Option(
        '--state <location>',
        'where the state lives: a SQLite file, or a postgres://… URL shared by many hosts (default: a file beside the workspace)',
      ).env('CTXFS_STATE'),
    )
    .addOption(new Option('--store <file>', 'the former name of --state').env('CTXFS_STORE').hideHelp())
    .addOption(
      new Option(
        '--request-id <id>',
        'a key for this command, the same when you retry it: a change it already made is not made again (make one UUID per command)',
      ).env('CTXFS_REQUEST_ID'),
    )
    .option('--no-policy-files', "ignore the user's and the project's config.toml")
    .option('--json', 'answer with one JSON document on stdout (see README: --json shapes)')
    .option('--no-color', 'no colours (also NO_COLOR=1; never when not a terminal)')
    .showHelpAfterError('(ctxfs --help lists the commands and options)')
    .addHelpText(
      'after',
      `
Exit codes: 0 done, 1 refused or conflict, 2 usage, 3 not found, 4 denied by policy, 5 backend unavailable.

Examples:
  $ ctxfs overview
  $ ctxfs cat src/auth.ts --lines 40:80
  $ ctxfs grep 'retries\\s*=' src
  $ git diff | ctxfs patch --dry-run
  $ ctxfs --backend docker:dev ls
  $ ctxfs serve --http --port 8765
`,
    );

  // The config files' [cli] table fills what neither a flag nor a variable set; --no-policy-files reads no file.
  program.hook('preAction', async (self) => {
    if (self.opts().policyFiles === false) return;
    const config = await loadCliConfig(resolve(self.opts().root as string));
    for (const key of CONFIG_KEYS) {
      const value = config[key];
      const source = self.getOptionValueSource(key);
      if (value !== undefined && (source === undefined || source === 'default')) self.setOptionValueWithSource(key, value, 'config');
    }
  });

  command(
    program,
    'overview',
    'a map of the workspace within a token budget (project_overview)',
    ['ctxfs overview', 'ctxfs overview --budget 800 --json'],
    async () => (await read()).overview,
  ).option('--budget <tokens>', 'token budget', int('--budget'));

  command(
    program,
    'ls [path]',
    'files and directories with their sizes, named relative to the path (list_files)',
    ['ctxfs ls', 'ctxfs ls src --depth 2', "ctxfs ls --glob '**/*.test.ts'"],
    async () => (await read()).ls,
  )
    .option('--glob <pattern>', 'only entries matching this glob')
    .option('--depth <n>', 'directory levels to expand', int('--depth'))
    .option('--limit <n>', 'entries to show at most', int('--limit'))
    .option('--offset <n>', 'entries to skip', int('--offset'))
    .option('-a, --all', 'also files .gitignore and the default ignores leave out');

  command(
    program,
    'cat <path>',
    'a file within the budget (read_file); --lines for a range (read_lines); --raw for its bytes',
    ['ctxfs cat README.md', 'ctxfs cat src/auth.ts --lines 40:80', 'ctxfs cat logs/build.log --strategy end', 'ctxfs cat --raw assets/logo.png > logo.png'],
    async () => (await read()).cat,
  )
    .option('-l, --lines <range>', 'lines start:end (1-based, inclusive; start: for "to the end")')
    .option('--context <n>', 'with --lines: extra lines around the range', int('--context'))
    .option('--max-tokens <n>', 'budget of this call (at most the profile allows)', int('--max-tokens'))
    .addOption(
      new Option('--strategy <how>', 'cut an over-budget file to its start, end or both ends instead of an outline').choices(['start', 'end', 'middle']),
    )
    .option('--raw', 'write the bytes as they are, unbudgeted, straight from the backend');

  command(
    program,
    'grep <pattern> [path]',
    'lines matching a regular expression across files (grep)',
    ["ctxfs grep 'TODO' src", "ctxfs grep -F 'fetch(' --glob '**/*.ts' --files"],
    async () => (await read()).grep,
  )
    .option('--glob <pattern>', 'only files matching this glob')
    .option('-F, --literal', 'the pattern is literal text')
    .option('-i, --ignore-case', 'ignore case')
    .option('--context <n>', 'lines of context around each match', int('--context'))
    .option('--files', 'list the matching files only')
    .option('--count', 'count matches per file')
    .option('--limit <n>', 'matches to show at most', int('--limit'))
    .option('--offset <n>', 'matches to skip', int('--offset'))
    .option('-a, --all', 'also search files .gitignore and the default ignores leave out');

  command(
    program,
    'outline <path>',
    "a file's definitions with their line ranges (get_outline)",
    ['ctxfs outline src/auth.ts', 'ctxfs outline src/auth.ts --symbol AuthManager'],
    async () => (await read()).outline,
  )
    .option('--symbol <name>', "only this symbol's members")
    .option('-l, --lines <range>', 'only definitions within start:end')
    .option('--max-tokens <n>', 'budget of this call', int('--max-tokens'));

  command(
    program,
    'symbol <name> [file]',
    'one definition from a file (get_symbol); without a file, where it is defined (find_symbol)',
    ['ctxfs symbol AuthManager.login src/auth.ts', 'ctxfs symbol login', 'ctxfs symbol Config --kind class --in src'],
    async () => (await read()).symbol,
  )
    .option('--kind <kind>', 'find: only symbols of this kind (function, class, method, ...)')
    .option('--in <path>', 'find: only under this directory or in this file')
    .option('--limit <n>', 'find: matches to show at most', int('--limit'))
    .option('--max-tokens <n>', 'get: budget of this call', int('--max-tokens'));

  command(
    program,
    'related <path>',
    'files a file imports and files importing it (get_related_files)',
    ['ctxfs related src/auth.ts', 'ctxfs related src/auth.ts --depth 2'],
    async () => (await read()).related,
  ).option('--depth <n>', 'hops, 1 to 3', int('--depth'));

  command(
    program,
    'patch [file]',
    'apply a unified diff or a *** Begin Patch envelope, from a file or stdin (apply_patch)',
    ['git diff | ctxfs patch', 'ctxfs patch fix.diff --dry-run', 'ctxfs patch - --message "bump retries" < fix.patch'],
    async () => (await edit()).patch,
  )
    .option('-n, --dry-run', 'show the resulting diff and change nothing')
    .option('--path <file>', 'the file, for a patch whose hunks have no ---/+++ header')
    .option('-m, --message <text>', 'why, for the history');

  command(
    program,
    'replace <path> <old> <new>',
    'replace exact text in a file (replace)',
    ["ctxfs replace src/config.ts 'retries = 3' 'retries = 5'", "ctxfs replace src/a.ts 'console\\.log\\((.*)\\)' 'log.debug($1)' --regex --all"],
    async () => (await edit()).replace,
  )
    .option('--all', 'replace every match')
    .option('--first', 'replace the first match')
    .option('--nth <n>', 'replace the n-th match', int('--nth'))
    .option('--regex', '<old> is a regular expression; <new> may use $1')
    .option('-m, --message <text>', 'why, for the history');

  command(
    program,
    'history <path>',
    "a file's recorded versions, newest first (get_file_history)",
    ['ctxfs history src/auth.ts', 'ctxfs history src/auth.ts --limit 5 --json'],
    async () => (await edit()).history,
  ).option('--limit <n>', 'versions to list (default 20)', int('--limit'));

  command(
    program,
    'diff <path> [from] [to]',
    'a unified diff between two versions; default what changed outside ctxfs, recorded or not (get_diff)',
    ['ctxfs diff src/auth.ts', 'ctxfs diff src/auth.ts 3 current', 'ctxfs diff src/auth.ts previous'],
    async () => (await edit()).diff,
  );

  command(
    program,
    'undo <path>',
    'revert your newest change not yet undone, or one change (undo)',
    ['ctxfs undo src/auth.ts', 'ctxfs undo src/auth.ts --change 4'],
    async () => (await edit()).undo,
  )
    .option('--change <n>', 'the version number of the change to revert', int('--change'))
    .option('-m, --message <text>', 'why, for the history');

  command(
    program,
    'rollback <path> <to>',
    'make an earlier version current again (rollback)',
    ['ctxfs rollback src/auth.ts 2', 'ctxfs rollback src/auth.ts previous'],
    async () => (await edit()).rollback,
  ).option('-m, --message <text>', 'why, for the history');

  command(
    program,
    'call <tool> [arguments]',
    'any tool by name with its JSON arguments, as a model calls it: the form of every hint ctxfs prints (LLM_FILE_ACCESS.md lists the tools; so does an unknown name)',
    [
      `ctxfs call read_lines '{"path":"src/auth.ts","start_line":40,"end_line":80}'`,
      `ctxfs call get_diff '{"path":"src/auth.ts","from":"previous"}'`,
      `echo '{"pattern":"TODO","output":"count"}' | ctxfs call grep -`,
    ],
    async () => (await import('./commands/call.ts')).call,
  );

  command(
    program,
    'run <command...>',
    'run a shell command in the workspace: in its container, confined on the host, just-bash in memory (run_command)',
    ['ctxfs run npm test', 'ctxfs run --cwd src -- ls -la', 'ctxfs run --timeout 300 make build'],
    async () => (await import('./commands/run.ts')).run,
  )
    .option('--cwd <dir>', 'working directory, relative to the workspace root')
    .option('--timeout <seconds>', 'time limit (default the policy’s, 60 s)', int('--timeout'));

  const audit = program
    .command('audit')
    .description('the audit trail: query it, verify its chain, roll back a session')
    .addHelpText(
      'after',
      '\nIn audit commands --session and --agent choose whose records (or changes); the command itself runs as agent cli in a new session.\n' +
        examplesText(['ctxfs audit --since 1h', 'ctxfs audit verify', 'ctxfs audit rollback --session 6f1c…']),
    );
  command(
    audit,
    'query',
    'records, newest first (the default of "ctxfs audit")',
    ['ctxfs audit', 'ctxfs audit --path src/auth.ts --since 2h', 'ctxfs audit --session 6f1c… --json'],
    async () => (await import('./commands/audit.ts')).query,
    true,
  )
    .option('--path <path>', 'records that touched this path')
    .option('--op <op>', 'records of this operation (readFile, replace, applyPatch, ...)')
    .option('--result <result>', 'ok, refused, denied or error')
    .option('--since <when>', 'an ISO time, or an age: 30m, 2h, 7d')
    .option('--limit <n>', 'records at most (default 50)', int('--limit'));
  command(
    audit,
    'verify',
    'check the HMAC chain of the log; names the first line that does not verify',
    ['ctxfs audit verify'],
    async () => (await import('./commands/audit.ts')).verify,
  );
  command(
    audit,
    'reindex',
    "rebuild the trail's index from the log as it is now, after the log was changed (queries then work again, marking what does not verify)",
    ['ctxfs audit reindex'],
    async () => (await import('./commands/audit.ts')).reindex,
  );
  command(
    audit,
    'rollback',
    'revert every change of a session (or an agent), newest first',
    ['ctxfs audit rollback --session 6f1c…', 'ctxfs audit rollback --agent llm:rogue'],
    async () => (await import('./commands/audit.ts')).rollback,
  ).option('-m, --message <text>', 'why, for the history');

  const snapshot = program
    .command('snapshot')
    .description("snapshots of the whole workspace, on the backend's own store")
    .addHelpText('after', examplesText(['ctxfs snapshot create before-refactor', 'ctxfs snapshot', 'ctxfs snapshot restore before-refactor']));
  const snap = () => import('./commands/snapshot.ts');
  command(snapshot, 'create [tag]', 'capture the workspace', ['ctxfs snapshot create before-refactor'], async () => (await snap()).create);
  command(snapshot, 'list', 'the snapshots, oldest first', ['ctxfs snapshot list --json'], async () => (await snap()).list, true);
  command(
    snapshot,
    'restore <id>',
    'put the workspace back as a snapshot (by id or tag) captured it',
    ['ctxfs snapshot restore before-refactor'],
    async () => (await snap()).restore,
  );
  command(snapshot, 'drop <snapshot>', 'delete a snapshot (by id or tag)', ['ctxfs snapshot drop before-refactor'], async () => (await snap()).drop);

  command(
    program,
    'scan',
    'bring the file registry up to date (and, with --index, the import graph)',
    ['ctxfs scan', 'ctxfs scan --index --json'],
    async () => (await import('./commands/scan.ts')).scan,
  ).option('--index', 'also index the imports of every code file');

  command(
    program,
    'prune',
    "apply the state store's retention: history (versions per file, stored bytes) and the read records",
    ['ctxfs prune', 'ctxfs prune --max-versions 100 --max-idle-days 7 --json'],
    async () => (await import('./commands/prune.ts')).prune,
  )
    .option('--max-versions <n>', 'versions kept per file (default 1,000; the newest is always kept)', int('--max-versions'))
    .option('--max-bytes <n>', 'bytes of stored content kept in all (default 512 MiB)', int('--max-bytes'))
    .option('--max-idle-days <n>', 'a session idle this long keeps only its last read of each file (default 30)', int('--max-idle-days'));

  const policy = program
    .command('policy')
    .description('the policy: what may be read, searched and changed, and who is asked')
    .addHelpText('after', examplesText(['ctxfs policy', 'ctxfs policy check write src/a.ts']));
  command(
    policy,
    'show',
    'the effective policy, with the files it comes from',
    ['ctxfs policy show', 'ctxfs policy show --json'],
    async () => (await import('./commands/policy.ts')).show,
    true,
  );
  command(
    policy,
    'check <op> <path>',
    'the decision for one operation class on one path, and why (exit 0 allow or ask, 4 deny)',
    ['ctxfs policy check write src/a.ts', 'ctxfs policy check read .env --agent llm:claude'],
    async () => (await import('./commands/policy.ts')).check,
  );

  command(
    program,
    'doctor',
    'check Node, the backend, the Docker engine, ripgrep and the state store',
    ['ctxfs doctor', 'ctxfs --backend docker:dev doctor --json'],
    async () => (await import('./commands/doctor.ts')).doctor,
  );

  command(
    program,
    'serve',
    'serve the workspace over MCP: stdio (default) or Streamable HTTP',
    ['ctxfs serve', 'ctxfs serve --http --port 8765 --token "$TOKEN"', "ctxfs --backend docker:dev serve --client-profile 'ollama*=small'"],
    async () => (await import('./commands/serve.ts')).serve,
  )
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .option('--host <addr>', 'HTTP address', '127.0.0.1')
    .option('--port <n>', 'HTTP port (0 for any free one)', int('--port'), 8765)
    .addOption(new Option('--token <t>', 'require Authorization: Bearer <t>').env('CTXFS_MCP_TOKEN'))
    .option('--allow-origin <origin...>', 'Origins allowed besides the server’s own')
    .option('--client-profile <client=profile...>', "profiles by the client's name, e.g. 'ollama*=small'")
    .option('--read-only', 'offer only the tools that read');

  return program;
}
