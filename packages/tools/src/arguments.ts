/**
 * A model's arguments made into a tool's input, or refused with the exact
 * fix. Mistakes models make often are repaired when the intent is
 * unambiguous: arguments sent as a JSON string, `null` for an absent
 * optional (OpenAI strict mode), camelCase or common alternative names
 * (`file_path`, `old_string`), numbers and booleans sent as strings, a patch
 * wrapped in a code fence. What is ambiguous (a 0-based line number, an
 * unknown argument) is refused with the call that would work.
 *
 * @module
 */

import type { z } from 'zod';
import { snakeCase, toolCallText } from './call-style.ts';
import { type AnyToolDefinition, toolSignature } from './definition.ts';

/** Names models use for an argument, by the argument's own name. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  path: ['file_path', 'filepath', 'file', 'filename', 'file_name', 'target_file', 'relative_path', 'uri'],
  start_line: ['start', 'line_start', 'from_line', 'first_line', 'line', 'offset_line'],
  end_line: ['end', 'line_end', 'to_line', 'last_line'],
  old_text: ['old_string', 'old_str', 'search', 'find', 'old', 'original'],
  new_text: ['new_string', 'new_str', 'replacement', 'replace_with', 'new'],
  content: ['contents', 'text', 'file_text', 'data', 'body'],
  patch: ['diff', 'input', 'patch_text'],
  pattern: ['regex', 'query', 'search'],
  query: ['name', 'symbol', 'pattern'],
  from: ['source', 'old_path', 'src'],
  to: ['destination', 'new_path', 'dest', 'target'],
  name: ['symbol', 'symbol_name', 'qualified_name'],
};

/** The outcome of preparing arguments. */
export type Prepared<T> =
  | { readonly ok: true; readonly value: T; readonly repairs: readonly string[] }
  | {
      readonly ok: false;
      readonly message: string;
      /** The arguments of the call the message offers instead, when it offers one (line 0 read as line 1). */
      readonly corrected?: Readonly<Record<string, unknown>>;
    };

type Shape = Readonly<Record<string, z.ZodType>>;

/** The innermost type of an optional or nullable field. */
function baseKind(schema: z.ZodType): string {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType; options?: z.ZodType[] };
  while ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType) def = def.innerType._zod.def as typeof def;
  if (def.type === 'union' && def.options?.some((o) => (o._zod.def as { type: string }).type === 'number')) return 'number-or-other';
  return def.type;
}

const FENCED = /^\s*(`{3,}|~{3,})[\w+-]*[ \t]*\r?\n([\s\S]*?)\r?\n?\1\s*$/;

// A strict copy of each input schema, made once: `.strict()` builds a new schema every time it is called.
const strictSchemas = new WeakMap<AnyToolDefinition, z.ZodObject>();
function strictInput(tool: AnyToolDefinition): z.ZodObject {
  let schema = strictSchemas.get(tool);
  if (schema === undefined) {
    schema = (tool.input as z.ZodObject).strict();
    strictSchemas.set(tool, schema);
  }
  return schema;
}

/**
 * Turns what a model sent into `tool`'s input.
 *
 * @example
 * ```ts
 * prepareArguments(readLines, '{"file_path": "a.ts", "start_line": "3"}');
 * // { ok: true, value: { path: 'a.ts', start_line: 3 }, repairs: ['file_path → path', 'start_line "3" → 3'] }
 * ```
 */
export function prepareArguments<T extends AnyToolDefinition>(tool: T, raw: unknown): Prepared<z.output<T['input']>> {
  const shape = tool.input.shape as Shape;
  const keys = Object.keys(shape);
  const repairs: string[] = [];
  // Only a refusal names the call's shape: working out which arguments are optional parses each one's schema,
  // about 1.5 ms of a command's start that an accepted call need not pay.
  const fields = (): string => `Call it as ${toolSignature(tool)} (? = optional).`;
  let value: unknown = raw;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') value = {};
    else {
      try {
        value = JSON.parse(text);
        repairs.push('arguments parsed from a JSON string');
      } catch (err) {
        return { ok: false, message: `${tool.name}: the arguments are not valid JSON (${(err as Error).message}). Send an object. ${fields()}` };
      }
    }
  }
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value))
    return { ok: false, message: `${tool.name}: the arguments must be an object, not ${Array.isArray(value) ? 'an array' : typeof value}. ${fields()}` };

  // Own keys only, and no prototype to set: "constructor" or "__proto__" is an unknown argument, not Object's.
  const has = (o: object, key: string): boolean => Object.hasOwn(o, key);
  const input: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const unknownKeys: string[] = [];
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null) continue; // strict-mode "absent"
    let name = key;
    if (!has(shape, name) && has(shape, snakeCase(name))) name = snakeCase(name);
    if (!has(shape, name)) {
      const canonical = keys.find((k) => Object.hasOwn(ALIASES, k) && ALIASES[k]?.includes(snakeCase(key)) && !has(value as object, k));
      if (canonical !== undefined && !has(input, canonical)) {
        repairs.push(`${key} → ${canonical}`);
        name = canonical;
      } else {
        unknownKeys.push(key);
        continue;
      }
    } else if (name !== key) repairs.push(`${key} → ${name}`);
    input[name] = v;
  }
  if (unknownKeys.length > 0) {
    return {
      ok: false,
      message: `${tool.name}: unknown argument${unknownKeys.length > 1 ? 's' : ''} ${unknownKeys.map((k) => `"${k}"`).join(', ')}. ${fields()}`,
    };
  }

  for (const [key, v] of Object.entries(input)) {
    const kind = baseKind(shape[key] as z.ZodType);
    if ((kind === 'number' || kind === 'number-or-other') && typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) {
      input[key] = Number(v);
      repairs.push(`${key} "${v}" → ${Number(v)}`);
    } else if (kind === 'boolean' && (v === 'true' || v === 'false')) {
      input[key] = v === 'true';
      repairs.push(`${key} "${v}" → ${v}`);
    }
  }
  if (typeof input.patch === 'string') {
    const fenced = FENCED.exec(input.patch);
    if (fenced) {
      input.patch = `${fenced[2]}\n`;
      repairs.push('patch taken out of its code fence');
    }
  }
  const problems = (issues: readonly z.core.$ZodIssue[]): string =>
    issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ');
  const zero = (['start_line', 'end_line'] as const).find((key) => has(shape, key) && input[key] === 0);
  if (zero !== undefined) {
    const note = `${tool.name}: lines are 1-based and inclusive, so ${zero} 0 is not a line; the first line is 1.`;
    const { advice, fixed } = lineZeroCorrected(input);
    // The call offered is followed as written: one that another argument makes fail is not offered.
    const checked = strictInput(tool).safeParse(fixed);
    if (!checked.success) return { ok: false, message: `${note} Also ${problems(checked.error.issues)}. ${fields()}` };
    return { ok: false, message: `${note} ${advice}: ${toolCallText(tool.name, fixed)}.`, corrected: fixed };
  }

  const parsed = strictInput(tool).safeParse(input);
  if (!parsed.success) return { ok: false, message: `${tool.name}: ${problems(parsed.error.issues)}. ${fields()}` };
  return { ok: true, value: parsed.data as z.output<T['input']>, repairs };
}

/**
 * The call a model meant by a line 0, counting from 0. start_line 0 is the
 * first line (and "after line 0" the top of the file, before line 1); an
 * end_line 0 after a real start_line ends nothing, so the call leaves it
 * out (to the end, or the one line of an edit) and keeps the start the
 * model gave, rather than moving it to line 1.
 */
function lineZeroCorrected(input: Readonly<Record<string, unknown>>): { advice: string; fixed: Record<string, unknown> } {
  const fixed: Record<string, unknown> = { ...input };
  if (input.start_line !== 0) {
    delete fixed.end_line;
    return { advice: `To start at line ${String(input.start_line)}, leave end_line out`, fixed };
  }
  fixed.start_line = 1;
  if (input.end_line !== undefined) fixed.end_line = Math.max(1, Number(input.end_line));
  if (input.action === 'insert_after') {
    fixed.action = 'insert_before';
    return { advice: 'To insert at the top of the file', fixed };
  }
  return { advice: 'For the first lines', fixed };
}
