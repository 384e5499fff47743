/**
 * The README's table of tools, rendered from the definitions so the docs say
 * what the tools are (a test compares the README with this). Run this file
 * to rewrite the table in the README in place:
 * `node --conditions=ctxfs-source packages/tools/src/docs/tool-table.ts`.
 *
 * @module
 */

import { TOOLS } from '../catalog/index.ts';
import type { AnyToolDefinition } from '../definition.ts';
import { inputJsonSchema } from '../json-schema.ts';

/** The lines around the table in a README. */
export const TOOL_TABLE_START = '<!-- tool-table:start (generated from the definitions by src/docs/tool-table.ts) -->';
export const TOOL_TABLE_END = '<!-- tool-table:end -->';

/** Text in a table cell, as written: a `|` would end the cell, and the `*` of a glob would start emphasis. */
export const tableCell = (text: string): string => text.replace(/[\\*|]/g, (c) => `\\${c}`);

function argumentsOf(tool: AnyToolDefinition): string {
  const schema = inputJsonSchema(tool);
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const names = Object.keys(schema.properties as object).map((k) => `\`${k}${required.has(k) ? '' : '?'}\``);
  return names.length === 0 ? '—' : names.join(', ');
}

function kindOf(tool: AnyToolDefinition): string {
  const { readOnlyHint, destructiveHint } = tool.annotations;
  const kind = readOnlyHint ? 'reads' : destructiveHint ? 'changes (destructive)' : 'changes';
  return tool.approval === 'policy' ? `${kind}; the policy may ask a person` : kind;
}

/**
 * A Markdown table of `tools`: name, arguments (`?` = optional), what it
 * does (the description the model reads) and what kind of tool it is.
 *
 * @example
 * ```ts
 * toolTable([readLines]).split('\n')[2];
 * // '| `read_lines` | `path`, `start_line`, `end_line?`, … | Returns lines start_line..end_line … | reads |'
 * ```
 */
export function toolTable(tools: readonly AnyToolDefinition[] = TOOLS): string {
  const rows = tools.map((t) => `| \`${t.name}\` | ${argumentsOf(t)} | ${tableCell(t.description)} | ${kindOf(t)} |`);
  return ['| Tool | Arguments | What it does | Kind |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/**
 * The table between the markers of `readme`, or undefined when it has none.
 *
 * @example
 * ```ts
 * readmeToolTable(readFileSync('packages/tools/README.md', 'utf8')) === toolTable(); // true while the docs are current
 * ```
 */
export function readmeToolTable(readme: string): string | undefined {
  const start = readme.indexOf(TOOL_TABLE_START);
  const end = readme.indexOf(TOOL_TABLE_END);
  if (start < 0 || end < start) return undefined;
  return readme.slice(start + TOOL_TABLE_START.length, end).trim();
}

/**
 * `readme` with the table between its markers replaced by {@link toolTable};
 * throws when it has no markers.
 *
 * @example
 * ```ts
 * writeFileSync(path, withToolTable(readFileSync(path, 'utf8')));
 * ```
 */
export function withToolTable(readme: string, tools: readonly AnyToolDefinition[] = TOOLS): string {
  const start = readme.indexOf(TOOL_TABLE_START);
  const end = readme.indexOf(TOOL_TABLE_END);
  if (start < 0 || end < start) throw new Error(`The README has no ${TOOL_TABLE_START} … ${TOOL_TABLE_END} markers.`);
  return `${readme.slice(0, start + TOOL_TABLE_START.length)}\n${toolTable(tools)}\n${readme.slice(end)}`;
}

if (import.meta.main) {
  // Loaded only when run as a script, so importing the table costs no file system module.
  const { readFileSync, writeFileSync } = await import('node:fs');
  const path = new URL('../../README.md', import.meta.url);
  writeFileSync(path, withToolTable(readFileSync(path, 'utf8')));
}
