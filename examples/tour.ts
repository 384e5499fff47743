/**
 * The tour: what a model sees when it works on a project through ctxfs.
 *
 * A copy of examples/sample-project is made in a temporary directory (the
 * repository is never touched), opened with the host backend, and worked on
 * through the same tools an agent calls over MCP, in the `small` profile
 * (an 8k-context model: 1,500 tokens a call). Run with `pnpm demo`, or
 * `./start` on a fresh machine.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { type CallResult, Toolset } from '@ctxfs/tools';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLE = join(REPO, 'examples', 'sample-project');

// Colour only for a person at a terminal: piped output (CI logs, the
// clean-room test) stays plain text.
const colour = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code: string) => (text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = paint('1');
const dim = paint('2');
const cyan = paint('36');
const green = paint('32');
const red = paint('31');

let stepNo = 0;
function heading(title: string, why: string): void {
  stepNo += 1;
  console.log(`\n${bold(cyan(`== ${stepNo}. ${title}`))}\n${dim(why)}`);
}

/** The first lines of what the model read, the rest counted: the tour shows excerpts, not dumps. */
function excerpt(text: string, lines = 14): string {
  const all = text.replace(/\n+$/, '').split('\n');
  const shown = all.slice(0, lines).map((line) => {
    if (colour && line.startsWith('+') && !line.startsWith('+++')) return green(line);
    if (colour && line.startsWith('-') && !line.startsWith('---')) return red(line);
    return line;
  });
  const rest = all.length - shown.length;
  return `${shown.map((l) => `  │ ${l}`).join('\n')}${rest > 0 ? `\n  │ ${dim(`… ${rest} more line${rest === 1 ? '' : 's'}`)}` : ''}`;
}

/** Runs one tool call as a model would make it, prints the call and what came back. */
async function call(tools: Toolset, name: string, args: Record<string, unknown>, lines?: number): Promise<CallResult> {
  const shownArgs = JSON.stringify(args).replace(/\\n/g, '⏎');
  console.log(`${bold(`${tools.session.agent} → ${name}`)} ${dim(shownArgs.length > 110 ? `${shownArgs.slice(0, 107)}…` : shownArgs)}`);
  const result = await tools.run(name, args);
  console.log(excerpt(result.text, lines));
  return result;
}

/** Fails the tour loudly when the product did not do what the step is there to show. */
function expect(ok: boolean, what: string, result: CallResult): void {
  if (!ok) throw new Error(`the tour expected ${what}, but the result was:\n${result.text}`);
}

const work = mkdtempSync(join(tmpdir(), 'ctxfs-tour-'));
const root = join(work, 'larder');
cpSync(SAMPLE, root, { recursive: true });

const fs = await HostFilesystem.open({ root });
// Policy files off: the tour must read the same on every machine, whatever the user's ~/.config/ctxfs says.
const ctx = await createContext({ fs, safety: { policyFiles: false } });
try {
  await ctx.scan();
  const agent = new Toolset(ctx.session({ agent: 'llm:agent', profile: 'small' }));
  const other = new Toolset(ctx.session({ agent: 'llm:reviewer', profile: 'small' }));
  console.log(`${bold('ctxfs tour')}: a copy of examples/sample-project in ${root}, host backend, profile small (1,500 tokens a call)`);

  heading('Overview', 'The first call of a task: a map of the project within the overview budget.');
  await call(agent, 'project_overview', {}, 18);

  heading('Budgeted read', 'src/pantry.ts is larger than one call may serve: the model gets its outline and the calls for the parts, not a dump.');
  const read = await call(agent, 'read_file', { path: 'src/pantry.ts' }, 16);
  const served = read.data as { view?: string; tokens?: number; total_lines?: number };
  expect(served.view !== 'full', 'a large file not to be served whole', read);
  console.log(dim(`  (${served.tokens} tokens served for a ${served.total_lines}-line file)`));

  heading('Search', 'grep finds the lines; read_lines reads just around a hit.');
  await call(agent, 'grep', { pattern: 'WARN_DAYS' }, 12);
  await call(agent, 'read_lines', { path: 'src/pantry.ts', start_line: 7, end_line: 11 });

  heading('Patch', 'A unified diff, checked against the version the model read; the result is the diff as applied.');
  const patched = await call(agent, 'apply_patch', {
    patch: [
      '--- a/src/pantry.ts',
      '+++ b/src/pantry.ts',
      '@@ -9,2 +9,2 @@',
      ' /** The days before expiry at which an item is reported as going off. */',
      '-export const WARN_DAYS = 3;',
      '+export const WARN_DAYS = 2;',
      '',
    ].join('\n'),
    message: 'warn two days ahead',
  });
  expect(!patched.isError, 'the patch to apply', patched);

  heading(
    'Concurrent change, merged',
    'Someone edits src/shopping.ts on disk after the model read it; the model patches another line from its stale read, and ctxfs merges the two.',
  );
  await call(agent, 'read_lines', { path: 'src/shopping.ts', start_line: 1, end_line: 6 });
  const shoppingPath = join(root, 'src', 'shopping.ts');
  writeFileSync(shoppingPath, readFileSync(shoppingPath, 'utf8').replace('grouped by aisle.', 'grouped by aisle, sorted by name.'));
  console.log(dim("  (an editor outside ctxfs changes line 1: 'grouped by aisle, sorted by name.')"));
  const merged = await call(agent, 'replace', {
    path: 'src/shopping.ts',
    old_text: "export const DEFAULT_AISLE = 'other';",
    new_text: "export const DEFAULT_AISLE = 'misc';",
    message: 'shorter default aisle',
  });
  expect((merged.data as { merged?: boolean }).merged === true, 'the edit to be merged with the change on disk', merged);

  heading(
    'Concurrent change, conflict',
    'Another agent changes the very line the model is about to change: the model’s patch is refused, naming the lines to re-read, and nothing is written.',
  );
  await call(other, 'replace', {
    path: 'src/shopping.ts',
    old_text: "export const DEFAULT_AISLE = 'misc';",
    new_text: "export const DEFAULT_AISLE = 'unsorted';",
    message: 'reviewer prefers unsorted',
  });
  const conflict = await call(
    agent,
    'apply_patch',
    {
      patch: [
        '--- a/src/shopping.ts',
        '+++ b/src/shopping.ts',
        '@@ -4 +4 @@',
        "-export const DEFAULT_AISLE = 'misc';",
        "+export const DEFAULT_AISLE = 'general';",
        '',
      ].join('\n'),
    },
    18,
  );
  expect(conflict.isError && (conflict.data as { conflict?: unknown }).conflict !== undefined, 'the patch to be refused with the conflict', conflict);

  heading('History', 'Every version is recorded: who made it, when, and the message it was given.');
  await call(agent, 'get_file_history', { path: 'src/shopping.ts' });

  heading(
    'Undo',
    'The reviewer takes its change back: undo reverts the caller’s own newest change, never someone else’s (recorded as a version of its own, so it can be undone too).',
  );
  const undone = await call(other, 'undo', { path: 'src/shopping.ts' });
  expect(!undone.isError, 'the undo to succeed', undone);
  await call(agent, 'get_diff', { path: 'src/shopping.ts', from: 'previous', to: 'current' });

  const mcpBin = join(REPO, 'packages', 'mcp', 'src', 'bin.ts');
  const cliBin = join(REPO, 'packages', 'cli', 'src', 'bin.ts');
  const node = process.execPath;
  heading('Connect an agent over MCP', 'The same tools, served to any MCP client (Claude Desktop, Claude Code, Cursor, VS Code…) on stdio.');
  console.log(`The MCP server for a project of yours, from this checkout (this Node: ${process.version}):\n`);
  console.log(`  ${node} --conditions=ctxfs-source ${mcpBin} --root /path/to/your/project`);
  console.log(`\nor the same server through the CLI:\n`);
  console.log(`  ${node} --conditions=ctxfs-source ${cliBin} --root /path/to/your/project serve`);
  console.log(`\nIn the client's configuration (claude_desktop_config.json, .cursor/mcp.json, …):\n`);
  const config = {
    mcpServers: { ctxfs: { command: node, args: ['--conditions=ctxfs-source', mcpBin, '--root', '/path/to/your/project', '--profile', 'medium'] } },
  };
  console.log(
    JSON.stringify(config, null, 2)
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
  console.log(`\nMore: packages/mcp/README.md (clients, HTTP), packages/cli/README.md (ctxfs from a shell), LLM_FILE_ACCESS.md (what the model reads).`);
} finally {
  ctx.close();
  await fs.close();
  rmSync(work, { recursive: true, force: true });
}
