/**
 * The tools that find things: listings, globs, grep and symbol search. Each
 * result fits the per-call budget; when more was found than it shows, it
 * says how much and gives the narrower call that shows the rest.
 *
 * @module
 */

import { type ContextSession, type SearchResult, SYMBOL_KINDS, type SymbolKind } from '@ctxfs/context';
import { z } from 'zod';
import { defineTool, once, READ_ONLY } from '../definition.ts';
import { callBudget, globDataSchema, grepDataSchema, grepResult, listingDataSchema, listingResult, searchDataSchema, searchResult } from '../results.ts';

// The maxima the session enforces (search/search-input.ts), stated in the schema a model reads; built with the first
// schema that has them (see ToolSpec).
const limit = once(() => z.number().int().min(1).max(10_000).optional().describe('Entries to show at most.'));
const symbolLimit = once(() => z.number().int().min(1).max(1000).optional().describe('Definitions to show at most.'));
const offset = once(() => z.number().int().min(0).optional().describe('Entries to skip (paging).'));
const includeIgnored = once(() =>
  z.boolean().optional().describe('Also list files .gitignore and the default ignores leave out (node_modules, build output).'),
);

/**
 * A value as the JSON it will be sent as: undefined members left out, arrays
 * and objects copied so the result owns them, a non-finite number null. A
 * JSON round trip does the same at ten times the cost, on every row of every
 * listing.
 */
function jsonCopy(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map((v) => (v === undefined || typeof v === 'function' ? null : jsonCopy(v)));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as object)) {
    if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol') out[key] = jsonCopy(v);
  }
  return out;
}

/** A result entry as plain data. */
const plain = <T extends object>(item: T): Record<string, unknown> => jsonCopy(item) as Record<string, unknown>;

/** The paging arguments every listing takes, and the session options they become. */
const paging = () => ({ limit: limit(), offset: offset(), include_ignored: includeIgnored() });
const pageOptions = (a: { limit?: number | undefined; offset?: number | undefined; include_ignored?: boolean | undefined }) => ({
  limit: a.limit,
  offset: a.offset,
  includeIgnored: a.include_ignored,
});

/** A search's result as the tool's, within the caller's budget. */
const found = <Item extends object>(session: ContextSession, r: SearchResult<Item>) => searchResult(r, plain, callBudget(session));

export const listFiles = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'Lists the files and directories under a directory (default the workspace root) with their sizes, named relative to it; big directories are summarized as counts. Use glob to find files by name pattern, grep to find them by content.',
  input: () =>
    z.object({
      path: z.string().optional().describe('Directory (or file) relative to the root; default the root.'),
      glob: z.string().optional().describe('Only entries matching this glob, e.g. "**/*.test.ts".'),
      depth: z.number().int().min(1).optional().describe('Directory levels to expand.'),
      ...paging(),
    }),
  output: listingDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'listFiles', args: ['path'] },
  examples: [{}, { path: 'src', depth: 2 }],
  run: async (session, a) => listingResult(await session.listFiles(a.path ?? '', { glob: a.glob, depth: a.depth, ...pageOptions(a) }), callBudget(session)),
});

export const glob = defineTool({
  name: 'glob',
  title: 'Find files by pattern',
  description:
    'Lists files whose path matches a glob ("**/*.py", "src/**/auth*.ts"), relative to cwd (default the root). Returns their paths, named relative to the directory they share, which the answer names once.',
  input: () =>
    z.object({
      pattern: z.string().min(1),
      cwd: z.string().optional().describe('Directory the pattern is relative to.'),
      ...paging(),
    }),
  output: globDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'glob', args: ['pattern'] },
  examples: [{ pattern: '**/*.test.ts' }, { pattern: '*.md', cwd: 'docs' }],
  run: async (session, a) => listingResult(await session.glob(a.pattern, { cwd: a.cwd, ...pageOptions(a) }), callBudget(session)),
});

export const grep = defineTool({
  name: 'grep',
  title: 'Search file contents',
  description:
    'Searches file contents with a regular expression (linear-time RE2 syntax; no backreferences or lookaround) or a literal string, and returns matching lines with line numbers, grouped by file. output "files" lists only the files, "count" the counts per file. Narrow with path and glob. Follow up with read_lines around a hit.',
  input: () =>
    z.object({
      pattern: z.string().min(1).describe('RE2 regular expression, or literal text when literal is true.'),
      path: z.string().optional().describe('File or directory to search; default the whole workspace.'),
      glob: z.string().optional().describe('Only files matching this glob, e.g. "**/*.ts".'),
      literal: z.boolean().optional(),
      ignore_case: z.boolean().optional(),
      context_lines: z.number().int().min(0).max(20).optional().describe('Lines of context around each match.'),
      output: z.enum(['content', 'files', 'count']).optional().describe('content (default): matching lines; files: file paths; count: matches per file.'),
      ...paging(),
    }),
  output: grepDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'grep', args: ['pattern'] },
  examples: [
    { pattern: 'TODO', path: 'src' },
    { pattern: 'fetch(', literal: true, glob: '**/*.ts', output: 'files' },
  ],
  run: async (session, a) =>
    grepResult(
      await session.grep(a.pattern, {
        path: a.path,
        glob: a.glob,
        literal: a.literal,
        ignoreCase: a.ignore_case,
        contextLines: a.context_lines,
        output: a.output,
        ...pageOptions(a),
      }),
      callBudget(session),
    ),
});

export const findSymbol = defineTool({
  name: 'find_symbol',
  title: 'Find a definition',
  description:
    'Finds where a function, class, method or type is defined, by name or part of a name ("login", "AuthManager.login", "parse config"), ranked best first, each with the get_symbol call that reads it. Faster and cheaper than grep for definitions.',
  input: () =>
    z.object({
      query: z.string().min(1),
      kind: z
        .enum(SYMBOL_KINDS as [SymbolKind, ...SymbolKind[]])
        .optional()
        .describe('Only symbols of this kind.'),
      path: z.string().optional().describe('Only under this directory or in this file.'),
      match: z.enum(['best', 'all']).optional().describe('best (default): the best tier of matches; all: every match.'),
      limit: symbolLimit(),
      offset: offset(),
    }),
  output: searchDataSchema,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'findSymbol', args: ['query'] },
  examples: [{ query: 'login' }, { query: 'Config', kind: 'class', path: 'src' }],
  run: async (session, a) =>
    found(session, await session.findSymbol(a.query, { kind: a.kind, path: a.path, match: a.match, limit: a.limit, offset: a.offset })),
});
