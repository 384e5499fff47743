/**
 * A definition's schemas as JSON Schema (draft 2020-12), the form MCP and the
 * model SDKs publish. Unknown arguments are refused, so the input schema
 * says `additionalProperties: false`; zod's safe-integer bounds, which only
 * restate what JSON numbers are, are left out to keep the schema short.
 *
 * @module
 */

import { z } from 'zod';
import type { AnyToolDefinition } from './definition.ts';

/** A JSON Schema object. */
export type JsonSchema = { [key: string]: unknown };

const SAFE = Number.MAX_SAFE_INTEGER;

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if ((key === 'minimum' && value === -SAFE) || (key === 'maximum' && value === SAFE)) continue;
    out[key] = tidy(value);
  }
  return out;
}

const cache = new WeakMap<AnyToolDefinition, { input: JsonSchema; output: JsonSchema }>();

function schemas(tool: AnyToolDefinition): { input: JsonSchema; output: JsonSchema } {
  let s = cache.get(tool);
  if (s === undefined) {
    s = {
      input: tidy(z.toJSONSchema(tool.input.strict(), { target: 'draft-2020-12', io: 'input' })) as JsonSchema,
      output: tidy(z.toJSONSchema(tool.output, { target: 'draft-2020-12', io: 'output' })) as JsonSchema,
    };
    cache.set(tool, s);
  }
  return s;
}

/**
 * The arguments' JSON Schema (an object schema; a fresh copy).
 *
 * @example
 * ```ts
 * inputJsonSchema(readLines).required; // ['path', 'start_line']
 * ```
 */
export function inputJsonSchema(tool: AnyToolDefinition): JsonSchema {
  return structuredClone(schemas(tool).input);
}

/** The structured result's JSON Schema (a fresh copy). */
export function outputJsonSchema(tool: AnyToolDefinition): JsonSchema {
  return structuredClone(schemas(tool).output);
}
