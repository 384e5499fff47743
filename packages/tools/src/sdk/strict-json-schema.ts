/**
 * A JSON Schema rewritten for OpenAI's strict mode (Structured Outputs),
 * where the model's arguments are decoded under the schema itself. Strict
 * mode accepts a subset of JSON Schema: every object closes its properties
 * and lists all of them as required, so an optional argument is sent as
 * `null` (the dispatcher reads `null` as absent), and only some value
 * constraints are allowed.
 *
 * The rewrite may loosen a schema, never tighten it: a constraint strict
 * mode does not take (a string's length, a default) is left out, because
 * every call is still checked against the tool's own schema when it runs,
 * and a refusal says what to fix. What cannot be said without refusing
 * calls the tool accepts (a map with free keys, an untyped value) throws.
 *
 * @module
 */

import type { JsonSchema } from '../json-schema.ts';

/**
 * Keywords strict mode takes: the structure, the annotations, and the
 * value constraints its decoder enforces (as OpenAI's Structured Outputs
 * guide lists them). Others are left out; `minLength`, `maxLength` and
 * `default` in particular are refused by the API in strict mode.
 */
const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** String formats strict mode understands; another format is left out rather than sent. */
const STRICT_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(path: string, why: string): never {
  throw new Error(`strictJsonSchema: ${path || '(root)'} ${why}`);
}

function types(node: JsonSchema): readonly unknown[] {
  return Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
}

/** Whether `null` is a value of `node`, as far as its own keywords say (a `$ref` is not followed). */
function acceptsNull(node: unknown): boolean {
  if (!isObject(node)) return node === true;
  if (node.$ref !== undefined) return false;
  if (node.type !== undefined && !types(node).includes('null')) return false;
  if ('const' in node && node.const !== null) return false;
  if (Array.isArray(node.enum) && !node.enum.includes(null)) return false;
  if (Array.isArray(node.anyOf) && !node.anyOf.some(acceptsNull)) return false;
  return node.type !== undefined || 'const' in node || Array.isArray(node.enum) || Array.isArray(node.anyOf);
}

/** `node`, also accepting `null`: added to each of its type, enum and anyOf, or as an anyOf around a `$ref`. */
function nullable(node: JsonSchema): JsonSchema {
  if (acceptsNull(node)) return node;
  if (node.$ref === undefined && (node.type !== undefined || node.anyOf !== undefined || node.enum !== undefined || 'const' in node)) {
    const out: JsonSchema = { ...node };
    if (node.type !== undefined && !types(node).includes('null')) out.type = [...types(node), 'null'];
    if (Array.isArray(node.anyOf)) out.anyOf = [...node.anyOf, { type: 'null' }];
    if (Array.isArray(node.enum) && !node.enum.includes(null)) out.enum = [...node.enum, null];
    if ('const' in node) {
      out.enum = [node.const, null];
      delete out.const;
    }
    return out;
  }
  const { description, title, ...inner } = node;
  return {
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    anyOf: [inner, { type: 'null' }],
  };
}

function strictNode(node: unknown, path: string): JsonSchema {
  if (!isObject(node)) fail(path, 'is not a schema object; strict mode needs a type for every value.');
  if (node.patternProperties !== undefined) fail(path, 'has patternProperties; strict mode objects have fixed keys.');
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'oneOf' || key === 'anyOf') {
      if (!Array.isArray(value)) fail(path, `has a ${key} that is not a list.`);
      // oneOf is an anyOf whose branches exclude each other; as anyOf it can only accept more.
      const branches = value.map((branch, i) => strictNode(branch, `${path}/${key}/${i}`));
      out.anyOf = [...((out.anyOf as JsonSchema[] | undefined) ?? []), ...branches];
    } else if (key === 'items') {
      if (!isObject(value)) fail(path, 'has tuple items; strict mode arrays have one item schema.');
      out.items = strictNode(value, `${path}/items`);
    } else if (key === '$defs' || key === 'definitions') {
      if (!isObject(value)) fail(path, `has a ${key} that is not an object.`);
      const defs: JsonSchema = {};
      for (const [name, def] of Object.entries(value)) defs[name] = strictNode(def, `${path}/${key}/${name}`);
      out[key] = defs;
    } else if (key === 'format') {
      if (typeof value === 'string' && STRICT_FORMATS.has(value)) out.format = value;
    } else if (key !== 'properties' && key !== 'required' && key !== 'additionalProperties' && STRICT_KEYWORDS.has(key)) {
      out[key] = value;
    }
  }
  if (types(node).includes('object') || node.properties !== undefined) closeObject(node, out, path);
  if (out.type === undefined && out.anyOf === undefined && out.$ref === undefined && out.enum === undefined && !('const' in out)) {
    fail(path, 'has no type; strict mode cannot leave a value open.');
  }
  return out;
}

/** Every property required, the optional ones nullable; nothing besides them. */
function closeObject(node: JsonSchema, out: JsonSchema, path: string): void {
  const extra = node.additionalProperties;
  if (extra !== undefined && extra !== false) fail(path, 'takes keys it does not name (a map); strict mode objects have fixed keys.');
  const properties = node.properties === undefined ? {} : node.properties;
  if (!isObject(properties)) fail(path, 'has properties that are not an object.');
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const strictProperties: JsonSchema = {};
  for (const [key, value] of Object.entries(properties)) {
    const strict = strictNode(value, `${path}/properties/${key}`);
    strictProperties[key] = required.has(key) ? strict : nullable(strict);
  }
  if (out.type === undefined) out.type = 'object';
  out.properties = strictProperties;
  out.required = Object.keys(strictProperties);
  out.additionalProperties = false;
}

/**
 * `schema` in the form OpenAI's strict mode takes (a fresh object; the
 * argument is not changed). Every object lists all its properties as
 * required and refuses others; a property that was optional becomes
 * nullable; keywords strict mode does not take are left out. Throws, naming
 * the place, for what strict mode cannot express without refusing values
 * the schema accepts.
 *
 * @example
 * ```ts
 * strictJsonSchema({
 *   type: 'object',
 *   properties: { path: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1 } },
 *   required: ['path'],
 * });
 * // {
 * //   type: 'object',
 * //   properties: { path: { type: 'string' }, limit: { type: ['integer', 'null'], minimum: 1 } },
 * //   required: ['path', 'limit'],
 * //   additionalProperties: false,
 * // }
 * ```
 */
export function strictJsonSchema(schema: JsonSchema): JsonSchema {
  if (!types(schema).includes('object')) fail('', 'is not an object schema; a tool takes an object of arguments.');
  return strictNode(schema, '');
}
