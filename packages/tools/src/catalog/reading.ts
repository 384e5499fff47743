/**
 * The tools that serve a file or part of one: the overview, whole files
 * within budget, line ranges, outlines, symbols, summaries, related files and
 * a file's metadata. Each result is redacted, delimited and within the
 * caller's per-call budget.
 *
 * @module
 */

import { MIN_USEFUL_TOKENS, plural } from '@ctxfs/context';
import { isFsError, resolvePath } from '@ctxfs/core';
import { z } from 'zod';
import { defineTool, once, READ_ONLY, toolSignature } from '../definition.ts';
import { callBudget, type ServedData, servedDataSchema, servedResult, withNext } from '../results.ts';

// Shared by several tools' schemas, built with the first of them (see ToolSpec).
const path = once(() => z.string().min(1).describe('File path relative to the workspace root, e.g. "src/auth.ts".'));
const line = once(() => z.number().int().describe('1-based line number.'));
// The least a call can answer in (the API refuses less): said by the schema, so a model never sends it.
const maxTokens = once(() => z.number().int().min(MIN_USEFUL_TOKENS).optional());

export const projectOverview = defineTool({
  name: 'project_overview',
  title: 'Project overview',
  description:
    'Start here. Returns a map of the workspace within a token budget: the file tree (largest directories first), the key documents (README, AGENTS.md, manifests) and how to ask for more. Call it once at the start of a task; then use grep, find_symbol, get_outline and read_lines to read only what the task needs.',
  input: () => z.object({ budget_tokens: z.number().int().min(200).optional().describe("Token budget; default the profile's overview budget.") }),
  output: () =>
    z.object({
      tokens: z.number().int(),
      budget_tokens: z.number().int(),
      files: z.number().int(),
      directories: z.number().int(),
      documents: z.array(z.object({ path: z.string(), version: z.string(), tokens: z.number().int(), total_tokens: z.number().int(), truncated: z.boolean() })),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'overview', args: [] },
  examples: [{}, { budget_tokens: 1500 }],
  async run(session, a, context) {
    // The overview lists the tools this caller has, as it calls them.
    const tools = context.tools.map((t) => ({ name: t.name, signature: toolSignature(t), description: t.title.toLowerCase() }));
    const o = await session.overview({ tools, ...(a.budget_tokens === undefined ? {} : { budgetTokens: a.budget_tokens }) });
    return {
      text: o.text,
      isError: false,
      data: {
        tokens: o.tokens,
        budget_tokens: o.budgetTokens,
        files: o.files,
        directories: o.directories,
        documents: o.documents.map((d) => ({ path: d.path, version: d.version, tokens: d.tokens, total_tokens: d.totalTokens, truncated: d.truncated })),
      },
    };
  },
});

export const readFile = defineTool({
  name: 'read_file',
  title: 'Read a file',
  description:
    'Returns a whole file with numbered lines when it fits the per-call budget. A larger file is not dumped: you get its outline and the exact read_lines or get_symbol call for the part you need. Use strategy "end" for the last lines (logs) or "start" to cut from the top. The result names the version you read; edits made from it are checked against that version. A file open in a buffer (open_file) is served from the buffer, unsaved changes included, marked buffer="…" in the <file> tag.',
  input: () =>
    z.object({
      path: path(),
      max_tokens: maxTokens().describe('Budget of this call (at most the profile allows).'),
      strategy: z.enum(['start', 'end', 'middle']).optional().describe('Cut an over-budget file to its start, end, or both ends, instead of an outline.'),
    }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'readFile', args: ['path'] },
  examples: [{ path: 'README.md' }, { path: 'logs/build.log', strategy: 'end' }],
  run: async (session, a) => servedResult(await session.readFile(a.path, { maxTokens: a.max_tokens, strategy: a.strategy }), callBudget(session, a.max_tokens)),
});

export const readLines = defineTool({
  name: 'read_lines',
  title: 'Read lines',
  description:
    'Returns lines start_line..end_line (1-based, inclusive) of a file, numbered. Use it after grep or get_outline has told you where to look. A range over the budget is cut and the result gives the call for the rest; a very long line is served in pieces (column). Works on files of any size. A file open in a buffer (open_file) is served from the buffer.',
  input: () =>
    z.object({
      path: path(),
      start_line: line().min(1),
      end_line: line().min(1).optional().describe('Last line, inclusive; default start_line plus what fits.'),
      context: z.number().int().min(0).max(200).optional().describe('Extra lines before and after the range.'),
      column: z.number().int().min(1).optional().describe('For a line too long for one call: the 1-based character to start at.'),
      max_tokens: maxTokens(),
    }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'readLines', args: ['path', 'start_line', 'end_line'] },
  examples: [
    { path: 'src/auth.ts', start_line: 40, end_line: 80 },
    { path: 'src/auth.ts', start_line: 120, context: 5 },
  ],
  run: async (session, a) =>
    servedResult(
      await session.readLines(a.path, a.start_line, a.end_line, { context: a.context, column: a.column, maxTokens: a.max_tokens }),
      callBudget(session, a.max_tokens),
    ),
});

export const getExcerpt = defineTool({
  name: 'get_excerpt',
  title: 'First lines of a file',
  description:
    'Returns the first lines of a file (default the profile’s excerpt size) and how many symbols it defines. Cheaper than read_file to see what a file is.',
  input: () => z.object({ path: path(), max_lines: z.number().int().min(1).optional() }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getExcerpt', args: ['path', 'max_lines'] },
  examples: [{ path: 'src/index.ts' }, { path: 'CHANGELOG.md', max_lines: 30 }],
  run: async (session, a) => servedResult(await session.getExcerpt(a.path, a.max_lines), callBudget(session)),
});

export const getOutline = defineTool({
  name: 'get_outline',
  title: 'Outline of a file',
  description:
    "Lists a file's definitions (classes, functions, methods, types; Markdown headings) with their line ranges, most important first when the file has more than fit. Narrow a large outline to one symbol's members (symbol) or to a line range (start_line, end_line). Then read one with get_symbol or read_lines.",
  input: () =>
    z.object({
      path: path(),
      symbol: z.string().optional().describe('Outline only the members of this symbol, e.g. "AuthManager".'),
      start_line: line().min(1).optional(),
      end_line: line().min(1).optional(),
      max_tokens: maxTokens(),
    }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getOutline', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', symbol: 'AuthManager' }],
  async run(session, a) {
    const scope =
      a.symbol !== undefined ? { symbol: a.symbol } : a.start_line !== undefined ? { startLine: a.start_line, endLine: a.end_line ?? a.start_line } : {};
    return servedResult(await session.getOutline(a.path, { ...scope, maxTokens: a.max_tokens }), callBudget(session, a.max_tokens));
  },
});

export const getSymbol = defineTool({
  name: 'get_symbol',
  title: 'Read one definition',
  description:
    'Returns one definition (function, class, method, type, or a Markdown section) with its doc comment, by name: "login", "AuthManager.login", "Config:get" for a getter, "parse@120" for the one at line 120. A definition over the budget shows its members and the calls for each. Find names with find_symbol or get_outline.',
  input: () =>
    z.object({
      path: path(),
      name: z.string().min(1).describe('Name or qualified name, e.g. "AuthManager.login".'),
      max_tokens: maxTokens(),
    }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getSymbol', args: ['path', 'name'] },
  examples: [{ path: 'src/auth.ts', name: 'AuthManager.login' }],
  run: async (session, a) => servedResult(await session.getSymbol(a.path, a.name, { maxTokens: a.max_tokens }), callBudget(session, a.max_tokens)),
});

export const getRelatedFiles = defineTool({
  name: 'get_related_files',
  title: 'Related files',
  description:
    'Lists the files a file imports and the files that import it (depth 1 or 2), from the import graph. Use it to find callers and dependencies before changing an interface.',
  input: () => z.object({ path: path(), depth: z.number().int().min(1).max(3).optional() }),
  output: () =>
    servedDataSchema().extend({
      related: z.array(z.object({ path: z.string(), relation: z.string(), depth: z.number().int(), via: z.string(), specifier: z.string() })),
      external: z.array(z.string()),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getRelatedFiles', args: ['path', 'depth'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', depth: 2 }],
  async run(session, a) {
    const r = await session.getRelatedFiles(a.path, a.depth);
    const served = servedResult(r, callBudget(session));
    return { ...served, data: { ...served.data, related: r.related.map((f) => ({ ...f })), external: [...r.external] } };
  },
});

export const summarizeFile = defineTool({
  name: 'summarize_file',
  title: 'Summarize a file',
  description:
    'A short summary of a file: its purpose (from its leading doc), its symbols, imports and size. Cheaper than reading it; use it to decide whether a file matters.',
  input: () => z.object({ path: path(), max_tokens: maxTokens() }),
  output: servedDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'summarize', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }],
  run: async (session, a) => servedResult(await session.summarize(a.path, { maxTokens: a.max_tokens }), callBudget(session, a.max_tokens)),
});

export const getFileMetadata = defineTool({
  name: 'get_file_metadata',
  title: 'File metadata',
  description:
    "A file's size, lines, language, tags (test, generated, config, …), whether it is sensitive, and its current version and history length. Reads no content.",
  input: () => z.object({ path: path() }),
  output: () =>
    z.object({
      path: z.string(),
      kind: z.string(),
      size: z.number().int().optional(),
      lines: z.number().int().optional(),
      language: z.string().optional(),
      tags: z.array(z.string()),
      sensitive: z.boolean(),
      version: z.string().optional(),
      versions: z.number().int().describe('Versions recorded in its history (counted up to 100).'),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getFileMetadata', args: ['path'] },
  examples: [{ path: 'package.json' }],
  async run(session, a) {
    const wanted = resolvePath(a.path, 'stat').path;
    const listing = await session.listFiles(a.path, { limit: 1 });
    // A file's listing is the file; a directory's starts with what is in it (or is empty).
    const item = listing.items[0]?.path === wanted ? listing.items[0] : undefined;
    // A file over the context layer's edit limit has no history to count (it is never versioned): its
    // metadata is still what was asked, so that limit is not this call's refusal.
    const history =
      item === undefined
        ? []
        : await session.history(item.path, 100).catch((err: unknown) => {
            if (isFsError(err, 'ETOOLARGE')) return [];
            throw err;
          });
    const data = {
      path: item?.path ?? (wanted === '' ? '.' : wanted),
      kind: item?.kind ?? 'directory',
      size: item?.size,
      lines: item?.lines,
      language: item?.language,
      tags: [...(item?.tags ?? [])],
      sensitive: item?.sensitive ?? false,
      version: history[0]?.sha256,
      versions: history.length,
    };
    const facts = [
      `${data.path}: ${data.kind}`,
      data.size === undefined ? undefined : plural(data.size, 'byte'),
      data.lines === undefined ? undefined : plural(data.lines, 'line'),
      data.language,
      data.tags.length > 0 ? `tags ${data.tags.join(', ')}` : undefined,
      data.sensitive ? 'sensitive (contents withheld or masked)' : undefined,
      data.version === undefined
        ? 'no recorded version'
        : `version ${data.version.slice(0, 12)}, ${data.versions === 100 ? '100 or more' : data.versions} in history`,
    ].filter((f) => f !== undefined);
    return { text: withNext(facts.join('; '), undefined), isError: false, data };
  },
});

export type { ServedData };
