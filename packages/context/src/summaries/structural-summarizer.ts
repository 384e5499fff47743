/**
 * The default summarizer: no model, no network, the same answer every time.
 * Purpose from the file's leading doc comment (or module docstring, a
 * manifest's description, a Markdown document's first paragraph, or a README
 * passage naming the file), then the main symbols, the imports and the size.
 *
 * @module
 */

import { afterFrontMatter } from '../symbols/markdown-sections.ts';
import type { CodeSymbol } from '../symbols/types.ts';
import { o200kTokenizer, type Tokenizer, truncateTokens } from '../tokens/tokenizer.ts';
import type { Summarizer, SummaryInput } from './summarizer.ts';

const LICENSE = /copyright|licen[cs]e|spdx|all rights reserved/i;

function cleanComment(block: string): string {
  return block
    .split('\n')
    .map((l) =>
      l
        .replace(/^\s*(\/\*\*?|\*\/|\*|\/\/[/!]?|#!?|--|"""|''')\s?/, '')
        .replace(/\*\/\s*$/, '')
        .replace(/"""\s*$|'''\s*$/, '')
        .trim(),
    )
    .filter((l) => l.length > 0 && !l.startsWith('@') && !/^-+$|^=+$/.test(l))
    .join(' ');
}

/** The leading doc comment of a source file (license headers skipped). */
export function leadingDoc(text: string, language: string | undefined): string | undefined {
  const lines = text.split('\n');
  let i = 0;
  if (lines[0]?.startsWith('#!')) i++;
  const blocks: string[] = [];
  while (i < lines.length && blocks.length < 3) {
    const line = (lines[i] as string).trim();
    if (line === '' || /^['"]use (strict|client|server)['"];?$/.test(line) || (/^package\s/.test(line) && language !== 'go')) {
      i++;
      continue;
    }
    if (line.startsWith('/*')) {
      const start = i;
      while (i < lines.length && !(lines[i] as string).includes('*/')) i++;
      blocks.push(lines.slice(start, i + 1).join('\n'));
      i++;
      continue;
    }
    if (/^(\/\/|#(?![[!]?\[)|--)/.test(line)) {
      const start = i;
      while (i < lines.length && /^\s*(\/\/|#(?!\[)|--)/.test(lines[i] as string)) i++;
      blocks.push(lines.slice(start, i).join('\n'));
      continue;
    }
    if (language === 'python' && /^[rRbBuU]?("""|''')/.test(line)) {
      const q = line.includes('"""') ? '"""' : "'''";
      const start = i;
      if (line.indexOf(q, line.indexOf(q) + 3) === -1) {
        i++;
        while (i < lines.length && !(lines[i] as string).includes(q)) i++;
      }
      blocks.push(lines.slice(start, i + 1).join('\n'));
      i++;
      continue;
    }
    break;
  }
  for (const b of blocks) {
    const text = cleanComment(b);
    if (text.length > 0 && !LICENSE.test(text.slice(0, 200)) && !/eslint|prettier|biome-ignore|@ts-|noqa|pylint|type: ignore/.test(text)) return text;
  }
  return undefined;
}

/**
 * The first paragraph of prose: headings (underlined ones included:
 * agent-base's README gave "agent-base ========== ### Turn a function…"),
 * badges, HTML, code, tables and front matter are left out, line by line,
 * since a README often runs its title, tagline and badges together without
 * a blank line. A list is taken only when no prose comes before the end:
 * a changelog's first entry is not what it is for.
 */
function markdownPurpose(text: string): string | undefined {
  const all = text.split('\n');
  const paras = all
    .slice(afterFrontMatter(all))
    .join('\n')
    .split(/\n\s*\n/);
  let list: string | undefined;
  for (const p of paras) {
    const lines = p.split('\n');
    if (/^\s*(?:```|~~~|\|)/.test(lines[0] ?? '')) continue;
    const kept = lines.filter((line, i) => {
      const t = line.trim();
      if (t === '' || /^#{1,6}(?:\s|$)/.test(t) || t.startsWith('![') || t.startsWith('[![') || t.startsWith('<')) return false;
      // A setext heading: the underline, and the line it underlines.
      return !/^(?:=+|-+)$/.test(t) && !/^\s*(?:=+|-+)\s*$/.test(lines[i + 1] ?? '');
    });
    if (kept.length === 0) continue;
    const t = kept.join('\n').trim();
    if (/^(?:[-*+]|\d{1,9}[.)])[ \t]/.test(t)) {
      list ??= t.replace(/\s+/g, ' ');
      continue;
    }
    return t.replace(/^>\s?/gm, '').replace(/\s+/g, ' ');
  }
  return list;
}

function manifestPurpose(path: string, text: string): string | undefined {
  if (path.endsWith('package.json') || path.endsWith('composer.json')) {
    try {
      const j = JSON.parse(text) as { name?: string; description?: string };
      return [j.name, j.description].filter(Boolean).join(': ') || undefined;
    } catch {
      return undefined;
    }
  }
  if (/(pyproject|Cargo)\.toml$/.test(path)) return /^description\s*=\s*"([^"]*)"/m.exec(text)?.[1];
  if (path.endsWith('go.mod')) return /^module\s+(\S+)/m.exec(text)?.[1];
  return undefined;
}

function sentences(text: string, max: number): string {
  const parts = text.split(/(?<=[.!?])\s+/);
  let out = '';
  for (const p of parts) {
    if (out.length > 0 && out.length + p.length + 1 > max) break;
    out = out ? `${out} ${p}` : p;
  }
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

const KIND_ORDER: Record<string, number> = {
  class: 0,
  interface: 1,
  struct: 1,
  trait: 1,
  enum: 2,
  type: 3,
  function: 4,
  impl: 5,
  module: 6,
  namespace: 6,
  section: 7,
  variable: 8,
};

function mainSymbols(symbols: readonly CodeSymbol[]): string[] {
  const top = [...symbols].sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || a.startLine - b.startLine);
  return top.map((s) => {
    const members = s.children.filter((c) => c.kind === 'method' || c.kind === 'function' || c.kind === 'constructor').map((c) => c.name);
    const list = members.length > 0 ? ` {${members.slice(0, 6).join(', ')}${members.length > 6 ? `, +${members.length - 6}` : ''}}` : '';
    return `${s.kind} ${s.name}${list} (${s.startLine}-${s.endLine})`;
  });
}

/**
 * The default {@link Summarizer}.
 *
 * @example
 * ```ts
 * const summary = await new StructuralSummarizer().summarize(input);
 * // Purpose: Authentication: login, JWT tokens and sessions.
 * // Main symbols: class AuthManager {login, logout, +3} (42-310), function hashPassword (312-330)
 * // Imports: ./jwt, bcrypt
 * // Size: 2000 lines, 18345 tokens, 62.1 KB (typescript)
 * ```
 */
export class StructuralSummarizer implements Summarizer {
  readonly id = 'structural:v1';
  readonly #tokenizer: Tokenizer;

  constructor(tokenizer: Tokenizer = o200kTokenizer) {
    this.#tokenizer = tokenizer;
  }

  async summarize(input: SummaryInput): Promise<string> {
    const purpose =
      manifestPurpose(input.path, input.text) ??
      (input.language === 'markdown' ? markdownPurpose(input.text) : leadingDoc(input.text, input.language)) ??
      input.readmeMention;
    const symbols = mainSymbols(input.symbols);
    const imports = [...new Set(input.imports)];
    const kb = input.bytes / 1024;
    const size = `Size: ${input.lines} lines, ${input.tokens} tokens, ${kb < 10 ? kb.toFixed(1) : Math.round(kb)} KB${input.language ? ` (${input.language})` : ''}`;
    const label = input.language === 'markdown' ? 'sections' : 'symbols';
    const render = (nSymbols: number, nImports: number, purposeChars: number) => {
      const lines: string[] = [];
      if (purpose && purposeChars > 0) lines.push(`Purpose: ${sentences(purpose, purposeChars)}`);
      if (symbols.length > 0 && nSymbols > 0) {
        lines.push(`Main ${label}: ${symbols.slice(0, nSymbols).join(', ')}${symbols.length > nSymbols ? `, … (+${symbols.length - nSymbols} more)` : ''}`);
      }
      if (imports.length > 0 && nImports > 0)
        lines.push(`Imports: ${imports.slice(0, nImports).join(', ')}${imports.length > nImports ? `, … (+${imports.length - nImports})` : ''}`);
      lines.push(size);
      return lines.join('\n');
    };
    // Shed detail until it fits: symbols and imports first, then the purpose.
    let nSymbols = Math.min(12, symbols.length);
    let nImports = Math.min(15, imports.length);
    let purposeChars = 300;
    let text = render(nSymbols, nImports, purposeChars);
    while (this.#tokenizer.count(text) > input.maxTokens) {
      if (nSymbols > 3) nSymbols = Math.max(3, Math.floor(nSymbols * 0.7));
      else if (nImports > 3) nImports = Math.max(3, Math.floor(nImports * 0.7));
      else if (purposeChars > 80) purposeChars = Math.floor(purposeChars * 0.7);
      else if (nSymbols > 0 || nImports > 0) {
        nSymbols = Math.max(0, nSymbols - 1);
        nImports = Math.max(0, nImports - 1);
      } else break;
      text = render(nSymbols, nImports, purposeChars);
    }
    return truncateTokens(this.#tokenizer, text, input.maxTokens, 'start').text;
  }
}
