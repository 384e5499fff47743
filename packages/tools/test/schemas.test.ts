import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { type AnyToolDefinition, inputJsonSchema, type JsonSchema, outputJsonSchema, prepareArguments, strictJsonSchema, TOOLS } from '../src/index.ts';

// An independent validator: ajv reads the published schemas as any client would. String formats are not what these tests are about.
const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, validateFormats: false });
const validate = (schema: JsonSchema, value: unknown): string[] => {
  const check = ajv.compile(schema);
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
};

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The keywords OpenAI's strict mode takes, as its Structured Outputs guide
 * lists them (structure, annotations, and the value constraints it enforces).
 */
const STRICT_MODE_KEYWORDS = new Set([
  ...['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', '$ref', '$defs', 'definitions'],
  ...['description', 'title'],
  ...['pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems'],
]);

/** Every way `schema` breaks strict mode's rules, by place. */
function strictModeProblems(schema: unknown, path = '#'): string[] {
  if (!isObject(schema)) return [`${path}: not a schema object`];
  const problems: string[] = [];
  for (const key of Object.keys(schema)) if (!STRICT_MODE_KEYWORDS.has(key)) problems.push(`${path}: unsupported keyword ${key}`);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.type === undefined && schema.anyOf === undefined && schema.enum === undefined && schema.$ref === undefined && !('const' in schema)) {
    problems.push(`${path}: no type`);
  }
  if (types.includes('object')) {
    if (schema.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    const names = Object.keys(isObject(schema.properties) ? schema.properties : {}).sort();
    const required = Array.isArray(schema.required) ? [...schema.required].sort() : [];
    if (JSON.stringify(names) !== JSON.stringify(required))
      problems.push(`${path}: required ${JSON.stringify(required)} is not every property ${JSON.stringify(names)}`);
  }
  if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) problems.push(...strictModeProblems(v, `${path}/properties/${k}`));
  if (schema.items !== undefined) problems.push(...strictModeProblems(schema.items, `${path}/items`));
  if (Array.isArray(schema.anyOf)) for (const [i, b] of schema.anyOf.entries()) problems.push(...strictModeProblems(b, `${path}/anyOf/${i}`));
  if (isObject(schema.$defs)) for (const [k, v] of Object.entries(schema.$defs)) problems.push(...strictModeProblems(v, `${path}/$defs/${k}`));
  return problems;
}

/** An example as a strict-mode model sends it: every argument present, null for the ones it leaves out. */
function withNulls(tool: AnyToolDefinition, example: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(tool.input.shape).map((k) => [k, example[k] ?? null]));
}

describe.each(TOOLS.map((t) => [t.name, t] as const))('%s', (_name, tool) => {
  const input = inputJsonSchema(tool);

  it('has examples its input schema accepts, and prepareArguments reads them as zod does', () => {
    expect(tool.examples.length).toBeGreaterThan(0);
    for (const example of tool.examples) {
      expect(validate(input, example), JSON.stringify(example)).toEqual([]);
      const prepared = prepareArguments(tool, example);
      expect(prepared).toEqual({ ok: true, value: tool.input.parse(example), repairs: [] });
    }
  });

  it('publishes an input schema that refuses unknown arguments, and an output schema ajv compiles', () => {
    expect(input).toMatchObject({ type: 'object', additionalProperties: false });
    expect(validate(input, { ...tool.examples[0], not_an_argument: 1 })).toContain('/ must NOT have additional properties');
    expect(() => ajv.compile(outputJsonSchema(tool))).not.toThrow();
  });

  it('has a strict-mode schema that breaks none of its rules', () => {
    expect(strictModeProblems(strictJsonSchema(input))).toEqual([]);
  });

  it('makes the optional arguments, and only those, nullable in strict mode', () => {
    const strict = strictJsonSchema(input);
    const required = new Set(input.required as string[]);
    for (const [name, property] of Object.entries(strict.properties as Record<string, JsonSchema>)) {
      expect(validate(property, null).length === 0, name).toBe(!required.has(name));
    }
  });

  it('accepts the examples as strict mode sends them, and they run as the examples do', () => {
    const strict = strictJsonSchema(input);
    for (const example of tool.examples) {
      const sent = withNulls(tool, example);
      expect(validate(strict, sent), JSON.stringify(sent)).toEqual([]);
      const prepared = prepareArguments(tool, sent);
      expect(prepared.ok && prepared.value).toEqual(tool.input.parse(example));
    }
  });
});

describe('strictJsonSchema', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, description: 'A file.' },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      mode: { type: 'string', enum: ['a', 'b'] },
      kind: { const: 'x' },
      at: { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 8 }], description: 'Where.' },
      when: { type: 'string', format: 'date-time' },
      site: { type: 'string', format: 'uri' },
      tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 4 },
      range: { type: 'object', properties: { start: { type: 'integer' }, end: { type: 'integer' } }, required: ['start'] },
      ref: { $ref: '#/$defs/Point', description: 'A point.' },
      maybe: { type: ['string', 'null'] },
    },
    required: ['path'],
    $defs: { Point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } },
    $schema: 'https://json-schema.org/draft/2020-12/schema',
  };

  it('requires every property, makes the optional ones nullable, closes objects and drops what strict mode refuses', () => {
    expect(strictJsonSchema(schema)).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A file.' },
        limit: { type: ['integer', 'null'], minimum: 1, maximum: 100 },
        mode: { type: ['string', 'null'], enum: ['a', 'b', null] },
        kind: { enum: ['x', null] },
        at: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], description: 'Where.' },
        when: { type: ['string', 'null'], format: 'date-time' },
        site: { type: ['string', 'null'] },
        tags: { type: ['array', 'null'], items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 4 },
        range: {
          type: ['object', 'null'],
          properties: { start: { type: 'integer' }, end: { type: ['integer', 'null'] } },
          required: ['start', 'end'],
          additionalProperties: false,
        },
        ref: { description: 'A point.', anyOf: [{ $ref: '#/$defs/Point' }, { type: 'null' }] },
        maybe: { type: ['string', 'null'] },
      },
      required: ['path', 'limit', 'mode', 'kind', 'at', 'when', 'site', 'tags', 'range', 'ref', 'maybe'],
      additionalProperties: false,
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } },
    });
  });

  it('only loosens: a value the schema accepts is accepted in strict mode with null for what it leaves out', () => {
    const strict = strictJsonSchema(schema);
    const absent = Object.fromEntries(Object.keys(strict.properties as object).map((k) => [k, null]));
    const pairs: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ path: 'a' }, { ...absent, path: 'a' }],
      [
        { path: 'a', limit: 5, mode: 'b', kind: 'x', at: 'abc', tags: ['x'], range: { start: 1 }, ref: { x: 1 } },
        { ...absent, path: 'a', limit: 5, mode: 'b', kind: 'x', at: 'abc', tags: ['x'], range: { start: 1, end: null }, ref: { x: 1 } },
      ],
    ];
    for (const [value, sent] of pairs) {
      expect(validate(schema, value)).toEqual([]);
      expect(validate(strict, sent)).toEqual([]);
    }
    // What was dropped is no longer checked by the schema; the tool's own check still refuses it when the call runs.
    expect(validate(schema, { path: 'a', at: 'longer than eight' })).not.toEqual([]);
    expect(validate(strict, { ...absent, path: 'a', at: 'longer than eight' })).toEqual([]);
  });

  it('reads oneOf as anyOf and leaves the argument as it was', () => {
    const oneOf: JsonSchema = { type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['v'] };
    const before = structuredClone(oneOf);
    expect(strictJsonSchema(oneOf).properties).toEqual({ v: { anyOf: [{ type: 'string' }, { type: 'number' }] } });
    expect(oneOf).toEqual(before);
  });

  it('refuses what strict mode cannot say without refusing values the schema accepts', () => {
    const object = (property: JsonSchema): JsonSchema => ({ type: 'object', properties: { p: property }, required: ['p'] });
    expect(() => strictJsonSchema(object({ type: 'object', additionalProperties: { type: 'string' } }))).toThrow(
      'strictJsonSchema: /properties/p takes keys it does not name (a map); strict mode objects have fixed keys.',
    );
    expect(() => strictJsonSchema(object({ description: 'anything' }))).toThrow('/properties/p has no type');
    expect(() => strictJsonSchema(object({ type: 'array', prefixItems: [{ type: 'string' }], items: [{ type: 'string' }] }))).toThrow('tuple items');
    expect(() => strictJsonSchema(object({ type: 'object', patternProperties: { '^x': { type: 'string' } } }))).toThrow('patternProperties');
    expect(() => strictJsonSchema({ type: 'string' })).toThrow('is not an object schema');
  });
});

describe('the limits the session enforces are in the schemas a model reads', () => {
  it.each([
    ['grep', 10_000],
    ['list_files', 10_000],
    ['glob', 10_000],
    ['find_symbol', 1000],
  ])('%s: limit at most %d', (name, max) => {
    const tool = TOOLS.find((t) => t.name === name) as AnyToolDefinition;
    const limit = (inputJsonSchema(tool).properties as Record<string, JsonSchema>).limit as JsonSchema;
    expect(limit).toMatchObject({ minimum: 1, maximum: max });
    expect(
      validate(inputJsonSchema(tool), { ...(name === 'find_symbol' ? { query: 'x' } : name === 'list_files' ? {} : { pattern: 'x' }), limit: max + 1 }),
    ).not.toEqual([]);
  });
});
