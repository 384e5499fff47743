/**
 * File summaries for models: produced by the configured summarizer, cached by
 * content hash, redacted like everything else served.
 *
 * @module
 */

import { callText } from '../calls/call-text.ts';
import type { Document } from '../content/document.ts';
import { symbolTable } from '../symbols/outline.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  overBudget,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
  wrapperTokens,
} from './shared.ts';

/** A directory's readme, whatever the case of its name or its text format (README.md preferred). */
const README = /^readme(\.(md|markdown|rst|txt|adoc))?$/i;

async function readmeIn(ws: Workspace, dir: string): Promise<string | undefined> {
  const names = (await ws.fs.list(dir)).filter((e) => e.kind === 'file' && README.test(e.name)).map((e) => e.name);
  const name = names.includes('README.md') ? 'README.md' : names.sort()[0];
  return name === undefined ? undefined : dir ? `${dir}/${name}` : name;
}

async function readmeMention(ws: Workspace, path: string): Promise<string | undefined> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (/^readme/i.test(name)) return undefined;
  let dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  for (let hops = 0; hops < 3; hops++) {
    try {
      const readme = await readmeIn(ws, dir);
      if (readme !== undefined) {
        const doc = await ws.loader.load(readme, 'summarize');
        const rel = dir ? path.slice(dir.length + 1) : path;
        const hit = doc.lines.find((l) => l.includes(rel) || l.includes(name));
        if (hit)
          return hit
            .replace(/^[\s*#>|-]+/, '')
            .replace(/\s+/g, ' ')
            .trim();
      }
    } catch {
      // An unreadable README only means no mention.
    }
    if (dir === '') break;
    dir = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
  }
  return undefined;
}

/** Summary text of a document (cached by hash and summarizer id), redacted. */
export async function summaryOf(ws: Workspace, doc: Document, maxTokens: number): Promise<string> {
  const cacheKey = `${ws.summarizer.id}@${maxTokens}`;
  const cached = await ws.summaries.get(doc.sha256, cacheKey);
  if (cached !== undefined) return cached;
  const table = await symbolTable(doc);
  const relations = await ws.relations.importsOf(doc).catch(() => []);
  const raw = await ws.summarizer.summarize({
    path: doc.path,
    sha256: doc.sha256,
    language: doc.language,
    text: doc.text,
    lines: doc.lines.length,
    tokens: documentTokens(ws, doc),
    bytes: doc.size,
    symbols: table.symbols,
    imports: relations.map((r) => r.specifier),
    readmeMention: await readmeMention(ws, doc.path),
    maxTokens,
  });
  // Summaries pass through redaction too: a summarizer may quote a secret.
  const summary = ws.redactor.redact(raw).text;
  await ws.summaries.set(doc.sha256, cacheKey, summary);
  return summary;
}

/**
 * Serves a file's summary.
 */
export async function summarizeFile(ws: Workspace, caller: Caller, path: string, options: { maxTokens?: number } = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'summarize');
  const budget = Math.min(callBudget(caller, options.maxTokens, 'summarize', path), options.maxTokens ?? caller.profile.summaryTokens);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const room = budget - wrapperTokens(ws, doc, undefined, 'summary');
  if (room < 16) return overBudget(ws, caller, doc, budget);
  const summary = await summaryOf(ws, doc, room);
  if (wrappedTokens(ws, doc, summary, undefined, 'summary') > budget) return overBudget(ws, caller, doc, budget);
  return serve(ws, caller, 'summarize', doc, summary, {
    view: 'summary',
    omitted: [],
    redactions: 0,
    next: callText('getOutline', [path]),
  });
}
