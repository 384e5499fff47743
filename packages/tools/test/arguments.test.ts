import { describe, expect, it } from 'vitest';
import { applyPatch, editLines, grep, listFiles, prepareArguments, readLines, replace } from '../src/index.ts';

/** The repaired value, or the test fails with the refusal. */
function repaired(...args: Parameters<typeof prepareArguments>): { value: unknown; repairs: readonly string[] } {
  const p = prepareArguments(...args);
  if (!p.ok) throw new Error(`refused: ${p.message}`);
  return { value: p.value, repairs: p.repairs };
}

/** The refusal's message, or the test fails with what was accepted. */
function refusal(...args: Parameters<typeof prepareArguments>): string {
  const p = prepareArguments(...args);
  if (p.ok) throw new Error(`accepted: ${JSON.stringify(p.value)}`);
  return p.message;
}

describe('argument repair', () => {
  it('takes the names models use for an argument, and camelCase', () => {
    const r = repaired(replace, { file_path: 'src/doc.ts', old_string: 'indent = 0;', new_string: 'indent = 2;' });
    expect(r.value).toEqual({ path: 'src/doc.ts', old_text: 'indent = 0;', new_text: 'indent = 2;' });
    expect(r.repairs).toEqual(['file_path → path', 'old_string → old_text', 'new_string → new_text']);
    expect(repaired(readLines, { filePath: 'a.ts', startLine: 2, endLine: 4 }).value).toEqual({ path: 'a.ts', start_line: 2, end_line: 4 });
    expect(repaired(grep, { regex: 'TODO', ignoreCase: true }).value).toEqual({ pattern: 'TODO', ignore_case: true });
  });

  it("refuses Object's own names and __proto__ as unknown arguments, and nothing smuggles a value through the prototype", () => {
    for (const key of ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf']) {
      expect(refusal(readLines, { path: 'a.ts', start_line: 1, [key]: 1 }), key).toContain(`unknown argument "${key}"`);
    }
    // JSON's "__proto__" is an own key: refused, and its path is not taken as the call's.
    expect(refusal(readLines, '{"__proto__": {"path": "secret.ts"}, "start_line": 1}')).toContain('unknown argument "__proto__"');
    expect(refusal(readLines, JSON.parse('{"__proto__": {"path": "secret.ts"}, "start_line": 1}'))).toContain('unknown argument "__proto__"');
  });

  it('does not take an alias when the argument itself is there too', () => {
    expect(refusal(readLines, { path: 'a.ts', file_path: 'b.ts', start_line: 1 })).toContain('unknown argument "file_path"');
  });

  it('takes a patch out of its code fence', () => {
    const patch = '--- a/src/doc.ts\n+++ b/src/doc.ts\n@@ -8 +8 @@\n-  indent = 0;\n+  indent = 2;';
    const r = repaired(applyPatch, { patch: `\`\`\`diff\n${patch}\n\`\`\`` });
    expect(r.value).toEqual({ patch: `${patch}\n` });
    expect(r.repairs).toEqual(['patch taken out of its code fence']);
    expect(repaired(applyPatch, { diff: `~~~\n${patch}\n~~~\n` }).value).toEqual({ patch: `${patch}\n` });
  });

  it('reads numbers and booleans sent as strings', () => {
    const r = repaired(readLines, { path: 'a.ts', start_line: '10', end_line: ' 20 ' });
    expect(r.value).toEqual({ path: 'a.ts', start_line: 10, end_line: 20 });
    expect(r.repairs).toEqual(['start_line "10" → 10', 'end_line " 20 " → 20']);
    expect(repaired(grep, { pattern: 'x', literal: 'true', ignore_case: 'false' }).value).toEqual({ pattern: 'x', literal: true, ignore_case: false });
    // A union of a number and names: "2" is the second match, "all" stays a name.
    expect(repaired(replace, { path: 'a', old_text: 'x', new_text: 'y', occurrence: '2' }).value).toMatchObject({ occurrence: 2 });
    expect(repaired(replace, { path: 'a', old_text: 'x', new_text: 'y', occurrence: 'all' }).value).toMatchObject({ occurrence: 'all' });
    expect(refusal(readLines, { path: 'a.ts', start_line: 'ten' })).toMatch(/^read_lines: start_line: /);
  });

  it('refuses line 0 with the call that reads the first lines', () => {
    const message = refusal(readLines, { path: 'src/doc.ts', start_line: 0, end_line: 9 });
    expect(message).toContain('lines are 1-based and inclusive, so start_line 0 is not a line');
    expect(message).toContain('read_lines({"path":"src/doc.ts","start_line":1,"end_line":9})');
    expect(refusal(editLines, { path: 'a.py', action: 'delete', start_line: '0' })).toContain('edit_lines({"path":"a.py","action":"delete","start_line":1})');
  });

  it('refuses an unknown argument, listing the valid ones', () => {
    const message = refusal(readLines, { path: 'a.ts', start_line: 1, lines: 20, encoding: 'utf8' });
    expect(message).toBe(
      'read_lines: unknown arguments "lines", "encoding". Call it as read_lines(path, start_line, end_line?, context?, column?, max_tokens?) (? = optional).',
    );
  });

  it('reads arguments sent as a JSON string, and refuses one that is not JSON', () => {
    const r = repaired(readLines, '{"path": "a.ts", "start_line": 3}');
    expect(r.value).toEqual({ path: 'a.ts', start_line: 3 });
    expect(r.repairs).toEqual(['arguments parsed from a JSON string']);
    const message = refusal(readLines, '{"path": "a.ts", "start_line": ');
    expect(message).toMatch(/^read_lines: the arguments are not valid JSON \(.+\)\. Send an object\. Call it as read_lines\(path, start_line, /);
    expect(refusal(readLines, '[1, 2]')).toContain('the arguments must be an object, not an array');
  });

  it('reads null as absent, and no arguments as none', () => {
    expect(repaired(readLines, { path: 'a.ts', start_line: 1, end_line: null, context: null, column: null, max_tokens: null }).value).toEqual({
      path: 'a.ts',
      start_line: 1,
    });
    expect(repaired(listFiles, '').value).toEqual({});
    expect(repaired(listFiles, undefined).value).toEqual({});
    expect(refusal(readLines, { path: 'a.ts', start_line: null })).toMatch(/^read_lines: start_line: /);
  });
});
