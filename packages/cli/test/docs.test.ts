import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/program.ts';
import { JSON_SHAPES } from '../src/schemas.ts';

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');

/** A command's full name below the program (`snapshot create`). */
function leafName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every command that runs something, by its full name (`snapshot create`). */
function leaves(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => (c.commands.length > 0 ? leaves(c, [...prefix, c.name()]) : [[...prefix, c.name()]]));
}

// The README is checked against the program itself, so a command or option added without its docs fails here.
describe('packages/cli/README.md', () => {
  const program = buildProgram();

  const rowsOf = (name: string): string[] =>
    README.slice(README.indexOf('## Commands'), README.indexOf('## Options of every command'))
      .split('\n')
      .filter(
        (line) =>
          line.startsWith(`| \`${name} `) || line.startsWith(`| \`${name}\``) || (name === 'audit query' && line.startsWith('| `audit` (`audit query`)')),
      );

  it('has a row with an example for every command, naming each of its options', () => {
    const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
    const byName = new Map(all(program).map((c) => [leafName(c), c]));
    const names = leaves(program).map((l) => l.join(' '));
    expect(names).toHaveLength(29);
    for (const name of names) {
      const rows = rowsOf(name);
      expect(rows, name).not.toEqual([]);
      for (const row of rows) expect(row, name).toMatch(/`[^`]*ctxfs [^`]+` \|$/);
      for (const option of byName.get(name)?.options ?? []) {
        const named = [option.long, option.short].some((flag) => flag !== undefined && rows.some((r) => r.includes(flag)));
        expect(named, `${name}: ${option.flags}`).toBe(true);
      }
    }
  });

  it('names every global option and its variable', () => {
    for (const option of program.options) {
      expect(README, option.flags).toContain(`\`${option.flags}\``);
      if (option.envVar) expect(README, option.flags).toContain(`\`${option.envVar}\``);
    }
  });

  it('gives the --json shape of every command', () => {
    const table = README.slice(README.indexOf('## `--json`'));
    for (const command of Object.keys(JSON_SHAPES)) {
      const name = command.replace(/ <.*$/, '').replace(/ --lines$/, ' --lines');
      expect(table, command).toContain(`\`${name}`);
    }
  });

  it('lists every exit code the CLI uses', async () => {
    const { EXIT } = await import('../src/exit-codes.ts');
    for (const code of Object.values(EXIT)) expect(README).toMatch(new RegExp(`^\\| ${code} \\| `, 'm'));
  });
});
