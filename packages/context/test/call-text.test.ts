/**
 * The parser the follow-hints test relies on: if it missed a call, or read
 * file content as an instruction, the test would pass or fail for the wrong
 * reason. The strings here are the shapes ctxfs writes today.
 */
import { describe, expect, test } from 'vitest';
import { callKey, findCalls, findCallsInServed } from './support/call-text.ts';

describe('findCalls', () => {
  test('reads a marker with a JSON-quoted path and numbers', () => {
    const found = findCalls('[… lines 41-80 omitted (300 tokens); readLines("src/a.ts", 41, 80) shows them …]');
    expect(found).toEqual([{ kind: 'call', op: 'readLines', args: ['src/a.ts', 41, 80], source: 'readLines("src/a.ts", 41, 80)' }]);
  });

  test('reads single quotes, unquoted and quoted keys, booleans, escapes', () => {
    expect(findCalls(`readFile('a.ts', { strategy: 'start' })`)).toEqual([
      { kind: 'call', op: 'readFile', args: ['a.ts', { strategy: 'start' }], source: `readFile('a.ts', { strategy: 'start' })` },
    ]);
    const [grep] = findCalls('narrow with grep("x\\\\s*=\\"y\\"", {path: "src", literal: true, "ignoreCase": false, limit: 44})');
    expect(grep).toMatchObject({ kind: 'call', op: 'grep', args: ['x\\s*="y"', { path: 'src', literal: true, ignoreCase: false, limit: 44 }] });
    expect(findCalls('getSymbol("a.ts", "Foo.bar")')[0]).toMatchObject({ kind: 'call', args: ['a.ts', 'Foo.bar'] });
    expect(findCalls('getSymbol("caf\\u00e9.ts", "x")')[0]).toMatchObject({ kind: 'call', args: ['café.ts', 'x'] });
    expect(findCalls('editLines("a.ts", {kind: "delete", start: 3, end: 4},)')[0]).toMatchObject({
      kind: 'call',
      args: ['a.ts', { kind: 'delete', start: 3, end: 4 }],
    });
  });

  test('finds every call in a sentence, in order, and stops each at its own parenthesis', () => {
    const text =
      '[… 17 more matching lines; narrow with grep("retries", {path: "src/net"}) (9 lines), or page on with grep("retries", {offset: 40, limit: 44}) …]';
    expect(findCalls(text).map((c) => (c.kind === 'call' ? callKey(c) : c.source))).toEqual([
      'grep("retries", {path: "src/net"})',
      'grep("retries", {offset: 40, limit: 44})',
    ]);
    expect(findCalls('readLines("a.ts", 1, 40) or readLines("a.ts", 81, 120)').map((c) => c.kind)).toEqual(['call', 'call']);
  });

  test('placeholders, unions and missing arguments are not concrete', () => {
    const narrow =
      'Narrow the request: getSymbol("a.ts", name) for one definition, readLines("a.ts", start, end) for a range, grep for a pattern, or readFile("a.ts", { strategy: \'start\' | \'end\' | \'middle\' }) for a cut.';
    const found = findCalls(narrow);
    expect(found.map((c) => [c.kind, c.op])).toEqual([
      ['not-concrete', 'getSymbol'],
      ['not-concrete', 'readLines'],
      ['not-concrete', 'readFile'],
    ]);
    expect(found.map((c) => c.source)).toEqual([
      'getSymbol("a.ts", name)',
      'readLines("a.ts", start, end)',
      "readFile(\"a.ts\", { strategy: 'start' | 'end' | 'middle' })",
    ]);
    expect(findCalls('read a range with readLines(), or search it with grep')).toEqual([
      { kind: 'not-concrete', op: 'readLines', source: 'readLines()', reason: 'readLines needs 2 argument(s), 0 given' },
    ]);
    expect(findCalls('readLines("a.ts")')[0]?.kind).toBe('not-concrete');
    expect(findCalls('grep(pattern, {path: "src"})')[0]?.kind).toBe('not-concrete');
    expect(findCalls('getSymbol(path, "x")')[0]?.kind).toBe('not-concrete');
    expect(findCalls('readFile("a.ts", { maxTokens })')[0]?.kind).toBe('not-concrete');
    expect(findCalls('readLines("a.ts", 1, 40')[0]?.kind).toBe('not-concrete');
  });

  test('prose, other objects and longer names are not session calls', () => {
    expect(findCalls('grep for a pattern, or use readFile with a strategy')).toEqual([]);
    expect(findCalls('read it with fs.readBytes(); retrieval serves text files only')).toEqual([]);
    expect(findCalls('myreadFile("a") and fs.grep("x") and readFileSync("a")')).toEqual([]);
    expect(findCalls('ctx.readFile("a.ts")')).toEqual([{ kind: 'call', op: 'readFile', args: ['a.ts'], source: 'readFile("a.ts")' }]);
    expect(findCalls('call listFiles() or overview()').map((c) => c.kind)).toEqual(['call', 'call']);
  });
});

describe('findCallsInServed', () => {
  const wrap = (body: string, nonce = '0a1b2c3d4e') => `<file path="a.md" version="abc" view="full" nonce="${nonce}">\n${body}\n</file nonce="${nonce}">`;

  test('file content is data: a README showing calls yields none', () => {
    const text = wrap('# Usage\n\nglob("**/*.js") finds them; readFile("x") reads one.\n  grep("todo")');
    expect(findCallsInServed(text)).toEqual([]);
  });

  test('markers inside the delimiters and notes outside them are read', () => {
    const text = [
      'grep "x": 40 matching lines in 3 files.',
      wrap('1\tx\n[… lines 2-9 omitted (80 tokens); readLines("a.md", 2, 9) shows them …]\n10\tx\n[also named \'x\': X.x (3-4)]'),
      '[… 5 more matching lines; narrow with grep("x", {path: "lib"}) …]',
    ].join('\n');
    expect(findCallsInServed(text).map((c) => c.source)).toEqual(['readLines("a.md", 2, 9)', 'grep("x", {path: "lib"})']);
  });

  test('a findSymbol listing is rows of calls', () => {
    const body = 'getSymbol("src/a.ts", "A.run")  method 12-40\n[exact] getSymbol("src/b.ts", "run")  function 3-9 (+2 same-named)';
    expect(findCallsInServed(wrap(body), 'content')).toEqual([]);
    expect(findCallsInServed(wrap(body), 'calls').map((c) => (c.kind === 'call' ? callKey(c) : c.source))).toEqual([
      'getSymbol("src/a.ts", "A.run")',
      'getSymbol("src/b.ts", "run")',
    ]);
  });
});
