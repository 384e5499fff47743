import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeToolTable, TOOL_TABLE_END, TOOL_TABLE_START, toolTable, withToolTable } from '../src/docs/tool-table.ts';
import { glob, readLines, TOOLS, writeFile } from '../src/index.ts';

const README = join(import.meta.dirname, '../README.md');

describe('the README’s table of tools', () => {
  it('is the one the definitions give (to fix: node --conditions=ctxfs-source packages/tools/src/docs/tool-table.ts)', () => {
    expect(readmeToolTable(readFileSync(README, 'utf8'))).toBe(toolTable());
  });

  it('has a row a tool, with its arguments, its description as the model reads it, and its kind', () => {
    const rows = toolTable().split('\n');
    expect(rows).toHaveLength(TOOLS.length + 2);
    expect(toolTable([readLines]).split('\n')[2]).toBe(
      `| \`read_lines\` | \`path\`, \`start_line\`, \`end_line?\`, \`context?\`, \`column?\`, \`max_tokens?\` | ${readLines.description} | reads |`,
    );
    expect(toolTable([writeFile]).split('\n')[2]).toMatch(/ \| changes \(destructive\); the policy may ask a person \|$/);
    // A glob's stars would be read as emphasis in a table cell.
    expect(toolTable([glob])).toContain('("\\*\\*/\\*.py", "src/\\*\\*/auth\\*.ts")');
  });

  it('is replaced between its markers, the rest of the README kept', () => {
    const readme = `# x\n\nbefore\n${TOOL_TABLE_START}\nold\n${TOOL_TABLE_END}\nafter\n`;
    expect(withToolTable(readme, [readLines])).toBe(`# x\n\nbefore\n${TOOL_TABLE_START}\n${toolTable([readLines])}\n${TOOL_TABLE_END}\nafter\n`);
    expect(readmeToolTable('# no table\n')).toBeUndefined();
    expect(() => withToolTable('# no table\n')).toThrow('markers');
  });
});
