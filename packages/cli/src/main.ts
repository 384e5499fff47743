/**
 * What `ctxfs` runs: parses the command line, runs the command, and exits
 * with the code its result means (see `exit-codes.ts`). A usage error is 2, whatever
 * commander would say; any other failure is reported in one place, as text
 * on stderr or as `{error}` with `--json`.
 *
 * @module
 */

import { type Command, CommanderError } from 'commander';
import { CliError, EXIT, type ExitCode, exitCodeOf } from './exit-codes.ts';
import { reportError } from './output.ts';
import { buildProgram } from './program.ts';

// Options only: after `--` every word is an argument (`ctxfs grep -- --json` searches for "--json").
const end = process.argv.indexOf('--');
const flags = end === -1 ? process.argv : process.argv.slice(0, end);
const json = flags.includes('--json');
// A reader that stops early (`ctxfs cat --raw big.log | head`) is not an error: stop writing and leave quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
// --no-color is a flag of every command; setting NO_COLOR lets styleText and commander's help agree with it.
if (flags.includes('--no-color')) process.env.NO_COLOR = '1';

/**
 * What commander says of a usage error, kept as it writes it to stderr: the
 * error (`error: unknown command 'cta'`, perhaps with `(Did you mean cat?)`
 * under it), then the help to read. With --json these become the error's
 * `message` and `hint`.
 */
function keepUsageWords(program: Command): string[] {
  const said: string[] = [];
  const keep = (cmd: Command): void => {
    cmd.configureOutput({
      writeErr: (text) => {
        said.push(text);
        process.stderr.write(text);
      },
    });
    for (const sub of cmd.commands) keep(sub);
  };
  keep(program);
  return said;
}

/** A usage error as `{error}`: its first line the message; the lines under it (a suggestion, the help to read) the hint. */
function usageError(err: CommanderError, said: readonly string[]): { code: string; message: string; hint?: string } {
  const lines = said
    .join('')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const message = err.message.replace(/^error: /, '').split('\n')[0] ?? '';
  const rest = lines.filter((line) => line.replace(/^error: /, '') !== message).map((line) => line.replace(/^\((.*)\)$/, '$1'));
  return rest.length === 0 ? { code: 'EINVAL', message } : { code: 'EINVAL', message, hint: rest.join(' ') };
}

async function main(): Promise<ExitCode | number> {
  const program = buildProgram();
  const said = json ? keepUsageWords(program) : [];
  try {
    await program.parseAsync(process.argv);
    return (process.exitCode as number | undefined) ?? EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version end this way too, with exit code 0; commander has already written the message.
      if (err.exitCode === 0) return EXIT.ok;
      if (json) await reportError(usageError(err, said), true);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      await reportError(err, json);
      return err.exitCode;
    }
    const e = err as Error & { code?: unknown; hint?: string; path?: string };
    if (typeof e.code === 'string') {
      await reportError({ code: e.code, message: e.message, hint: e.hint, path: e.path }, json);
      return exitCodeOf(e.code);
    }
    await reportError({ code: 'EINTERNAL', message: e.stack ?? String(err), hint: 'this is a bug in ctxfs; please report it' }, json);
    return EXIT.refused;
  }
}

// Exit explicitly: a backend's sockets or workers must not keep a finished command alive.
process.exit(await main());
