/**
 * A replace whose old_text is not found offers a call that can find where
 * the text went. Found by the campaign through MCP on express's
 * repository: for a one-line old_text the call offered was a literal grep
 * of that same line, certain to find nothing (failed before its fix). Each
 * case follows the call on one of zod's published sources and looks for
 * the line the model meant in what it shows.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn, follow } from './support/offered-calls.ts';
import { FILES, freshWorkspace } from './workspace.ts';

const doc = (FILES['src/doc.ts'] ?? '').split('\n');
const lineOf = (text: string) => doc.findIndex((l) => l.includes(text)) + 1;

describe('replace whose old_text is not found', () => {
  const workspace = freshWorkspace();

  const followed = async (oldText: string, meant: string) => {
    const w = workspace();
    const r = await w.toolset.run('replace', { path: 'src/doc.ts', old_text: oldText, new_text: 'X' });
    expect(r.isError).toBe(true);
    const calls = callsIn(r.text);
    expect(calls.length, r.text).toBeGreaterThan(0);
    const answers = await follow(w, r);
    const line = lineOf(meant);
    expect(line).toBeGreaterThan(0);
    // The line the model meant is among what the offered call shows, whole and with its number.
    const shown = answers.map((a) => a.text).join('\n---\n');
    expect(shown, r.text).toContain((doc[line - 1] ?? '').trim());
    expect(shown, r.text).toMatch(new RegExp(`(^|\\D)${line}\\D`, 'm'));
  };

  it('with its whitespace changed, offers a call that finds the line', async () => {
    await followed('const lines = content.split("\\n").filter((x)=>x);', 'const lines = content.split("\\n").filter((x) => x);');
  });

  it('with a variable renamed, offers a call that finds the line', async () => {
    await followed(
      'const dedentedLines = lines.map((x) => x.slice(minIndent)).map((x) => " ".repeat(this.indent * 2) + x);',
      'const dedented = lines.map((x) => x.slice(minIndent))',
    );
  });

  it('with no part of it in the file, offers no grep, and what it offers works', async () => {
    const w = workspace();
    const r = await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'qqzx wvvy', new_text: 'X' });
    expect(r.isError).toBe(true);
    expect(callsIn(r.text).map((c) => c.name)).not.toContain('grep');
    await follow(w, r);
  });

  it('whose first line is a brace alone, offers a grep of a line that says where', async () => {
    const w = workspace();
    const r = await w.toolset.run('replace', { path: 'src/doc.ts', old_text: '}\n\n  compile(): unknown {', new_text: 'X' });
    expect(r.isError).toBe(true);
    expect(callsIn(r.text)).toEqual([{ name: 'grep', args: { pattern: 'compile():', path: 'src/doc.ts', literal: true } }]);
    const [found] = await follow(w, r);
    expect(found?.text).toContain(`${lineOf('compile(): any {')}:`);
  });

  it('with its indentation changed over several lines, offers a call that finds them', async () => {
    await followed('for (const line of dedented) {\n  this.content.push(line);\n}', 'for (const line of dedented) {');
  });
});
