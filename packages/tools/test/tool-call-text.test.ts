/**
 * The parser the hint-following test reads results with: if it misses a
 * call, a broken hint goes unfollowed; if it splits or merges calls, a good
 * hint fails. So the cases are the ones free text makes hard: braces and
 * quotes inside JSON strings, calls inside `[…]` markers, two on a line,
 * names both styles share, and code that only looks like a call.
 */

import { describe, expect, test } from 'vitest';
import { TOOLS } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';

const names = callNames(TOOLS);
const find = (text: string) => findToolCalls(text, names);

describe('findToolCalls', () => {
  test('a tool call inside a marker, with the words around it left out', () => {
    const text = '[… lines 41-80 omitted (300 tokens); read_lines({"path":"src/a.ts","start_line":41,"end_line":80}) shows them …]';
    expect(find(text)).toEqual([
      {
        kind: 'call',
        name: 'read_lines',
        args: { path: 'src/a.ts', start_line: 41, end_line: 80 },
        source: 'read_lines({"path":"src/a.ts","start_line":41,"end_line":80})',
      },
    ]);
  });

  test('two calls on one line, each whole', () => {
    const text =
      'Narrow the request: get_symbol({"path":"a.ts","name":"Int8Array"}) for one definition, read_lines({"path":"a.ts","start_line":1,"end_line":148}) for a range.';
    expect(find(text).map((f) => (f.kind === 'call' ? [f.name, f.args] : f.kind))).toEqual([
      ['get_symbol', { path: 'a.ts', name: 'Int8Array' }],
      ['read_lines', { path: 'a.ts', start_line: 1, end_line: 148 }],
    ]);
  });

  test('braces, brackets, parentheses and escaped quotes inside JSON strings stay in their string', () => {
    const oldText = 'if (x) { say("}]) \\"{"); }';
    const text = `try replace(${JSON.stringify({ path: 'a.js', old_text: oldText, new_text: 'y' })}) next`;
    expect(find(text)).toEqual([{ kind: 'call', name: 'replace', args: { path: 'a.js', old_text: oldText, new_text: 'y' }, source: text.slice(4, -5) }]);
  });

  test('a call-shaped string inside a tool call is part of it, not a call of its own', () => {
    const text = 'grep({"pattern":"readLines(\\"a.ts\\", 1, 2)","literal":true})';
    expect(find(text)).toEqual([{ kind: 'call', name: 'grep', args: { pattern: 'readLines("a.ts", 1, 2)', literal: true }, source: text }]);
  });

  test('a backslash at the end of a string and \\u escapes', () => {
    const text = 'glob({"pattern":"dir\\\\","cwd":"\\u0061b"}) and more';
    expect(find(text)).toEqual([{ kind: 'call', name: 'glob', args: { pattern: 'dir\\', cwd: 'ab' }, source: 'glob({"pattern":"dir\\\\","cwd":"\\u0061b"})' }]);
  });

  test('empty arguments and spaced JSON are tool calls', () => {
    expect(find('project_overview({}) then list_files( { "path" : "src" } )')).toEqual([
      { kind: 'call', name: 'project_overview', args: {}, source: 'project_overview({})' },
      { kind: 'call', name: 'list_files', args: { path: 'src' }, source: 'list_files( { "path" : "src" } )' },
    ]);
  });

  test('a name that is no tool, with JSON arguments, is still a call (the test then finds no such tool)', () => {
    expect(find('see get_history({"path":"a.ts"})')).toEqual([
      { kind: 'call', name: 'get_history', args: { path: 'a.ts' }, source: 'get_history({"path":"a.ts"})' },
    ]);
  });

  test('API calls are told apart by their arguments, also where a tool has the same name', () => {
    const text = [
      'readLines("a.ts", 1, 2)',
      'See history("a.ts").',
      'getOutline(path) lists them',
      'grep("x", {path: "src", literal: true})',
      'undo("a.ts")',
      'rollback("a.ts", 3)',
      'listFiles({glob: "*.ts"})',
      'undo({"path":"a.ts"})',
    ].join('\n');
    expect(find(text).map((f) => [f.kind, f.source])).toEqual([
      ['api-style', 'readLines("a.ts", 1, 2)'],
      ['api-style', 'history("a.ts")'],
      ['api-style', 'getOutline(path)'],
      ['api-style', 'grep("x", {path: "src", literal: true})'],
      ['api-style', 'undo("a.ts")'],
      ['api-style', 'rollback("a.ts", 3)'],
      ['api-style', 'listFiles({glob: "*.ts"})'],
      ['call', 'undo({"path":"a.ts"})'],
    ]);
  });

  test('code and prose that only look like calls are none', () => {
    const text = [
      's.replace(/x/g, "y")',
      'fs.grep("x")',
      'replace(/x/g, y)',
      'grep for a name, then undo (once)',
      'the file has 3 line(s)',
      'function readLinesFast(a)',
    ].join('\n');
    expect(find(text)).toEqual([]);
  });

  test('a tool name without JSON arguments, broken JSON, an unclosed call: malformed, with the reason', () => {
    const found = find(
      ['read_lines(path, start_line, end_line)', 'read_lines({"path":"a.ts",})', 'get_outline({"path":"a.ts"}', 'get_symbol({"path":"a.ts","name":"x'].join(
        '\n',
      ),
    );
    expect(found.map((f) => [f.kind, f.source, f.kind === 'malformed' ? f.reason.split(' (')[0] : ''])).toEqual([
      ['malformed', 'read_lines(path, start_line, end_line)', 'the arguments are not a JSON object'],
      ['malformed', 'read_lines({"path":"a.ts",})', 'the arguments are not JSON'],
      ['malformed', 'get_outline({"path":"a.ts"}', 'no `)` after the JSON arguments'],
      ['malformed', 'get_symbol({"path":"a.ts","name":"x', 'the JSON arguments never close'],
    ]);
  });

  test('a raw newline inside a string is not JSON a model can copy', () => {
    expect(find('write_file({"path":"a","content":"x\ny"})').map((f) => f.kind)).toEqual(['malformed']);
  });
});
