/**
 * The calls a result tells the model to make next. A hint is a tool call as
 * a model writes it, `read_lines({"path":"a.ts","start_line":10})`; a hint in
 * the library's own style (`readLines("a.ts", 10, 20)`) names no tool a
 * client has.
 *
 * @module
 */

import { TOOLS } from '@ctxfs/tools';

/** A tool call written in a text. */
export interface WrittenCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** As written. */
  readonly text: string;
}

/** The end of the JSON object that starts at `text[start]` (`{`), or -1. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

/**
 * A result's text without the file's own lines: numbered content (`12\t…`),
 * grep hits and context (`12:\t…`, `12-\t…`) and outline entries (`4-9 class
 * A`) are data from the workspace, which may well contain `replace(` or
 * `f({})`; what remains is what ctxfs wrote.
 */
export function ownText(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*\d+(?:-\d+)?(?:\t|:\t|-\t| )/.test(line))
    .join('\n');
}

/** Every `name({...})` that ctxfs wrote in `text` (arguments a JSON object). */
export function toolCallsIn(text: string): WrittenCall[] {
  const calls: WrittenCall[] = [];
  text = ownText(text);
  for (const m of text.matchAll(/\b([a-z][a-z0-9_]*)\(\{/g)) {
    const open = (m.index ?? 0) + (m[1]?.length ?? 0) + 1;
    const close = objectEnd(text, open);
    if (close < 0 || text[close + 1] !== ')') continue;
    try {
      const args = JSON.parse(text.slice(open, close + 1)) as Record<string, unknown>;
      calls.push({ name: m[1] ?? '', args, text: text.slice(m.index, close + 2) });
    } catch {
      // braces that are not JSON (code in a file's content): not a hint
    }
  }
  return calls;
}

/** The library operations the tools run (`readLines`, `getOutline`, …), which a hint must not name. */
const OPERATIONS = [...new Set(TOOLS.map((t) => t.api.op))];
const LIBRARY_CALL = new RegExp(`\\b(${OPERATIONS.join('|')})\\((?!\\{)`, 'g');

/** Calls that ctxfs wrote in `text` in the library's style (`readLines("a.ts", 1, 9)`, `listFiles()`). */
export function libraryCallsIn(text: string): string[] {
  return [...ownText(text).matchAll(LIBRARY_CALL)].map((m) => m[0]);
}
