/**
 * The sections of a Markdown document: its top-level headings, ATX (`## A`)
 * and setext (a paragraph underlined with `===` or `---`), each running to
 * the next heading of the same or a higher level, found as CommonMark finds
 * them. What hides a `#` line or an underline is followed too: fenced and
 * indented code, HTML blocks, list items and block quotes (their headings
 * are not the document's), a thematic break, YAML front matter.
 *
 * A line scan, not a parser: a CommonMark parser (markdown-it, block rules
 * only) took 21 ms warm and 85 ms cold on express's 127 KB `History.md`,
 * about four times this scan, and an outline is made on the read path. The
 * tests hold it to markdown-it's headings over real documents.
 *
 * @module
 */

import type { CodeSymbol } from './types.ts';

interface Draft {
  name: string;
  level: number;
  start: number;
  end: number;
  children: Draft[];
}

/** How an open HTML block ends (CommonMark's seven kinds, by their end). */
type HtmlEnd = { readonly text: string } | { readonly tag: RegExp } | 'blank';

const FENCE = /^(`{3,}|~{3,})(.*)$/;
const ATX = /^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^(=+|-+)[ \t]*$/;
const BREAK = /^([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^(?:([-+*])|(\d{1,9})[.)])(?=[ \t]|$)/;
const RAW_HTML = /^<(script|pre|style|textarea)(?=[\s>]|$)/i;
const BLOCK_TAGS =
  'address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul';
const BLOCK_HTML = new RegExp(`^</?(?:${BLOCK_TAGS})(?=[\\s/>]|$)`, 'i');
const ANY_TAG_LINE =
  /^(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>|<\/[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$/;

/** Columns of leading whitespace, a tab to the next multiple of 4. */
function indentOf(line: string): { columns: number; chars: number } {
  let columns = 0;
  let chars = 0;
  for (; chars < line.length; chars++) {
    const c = line[chars];
    if (c === ' ') columns++;
    else if (c === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return { columns, chars };
}

/** Where an HTML block that `text` starts ends, or undefined when `text` starts none (`interrupting`: it follows paragraph text). */
function htmlStart(text: string, interrupting: boolean): HtmlEnd | undefined {
  const raw = RAW_HTML.exec(text);
  if (raw) return { tag: new RegExp(`</${raw[1]}>`, 'i') };
  if (text.startsWith('<!--')) return { text: '-->' };
  if (text.startsWith('<?')) return { text: '?>' };
  if (text.startsWith('<![CDATA[')) return { text: ']]>' };
  if (/^<![A-Za-z]/.test(text)) return { text: '>' };
  if (BLOCK_HTML.test(text)) return 'blank';
  if (!interrupting && ANY_TAG_LINE.test(text)) return 'blank';
  return undefined;
}

/** Whether `line` ends an HTML block of kind `end` (a blank line ends 'blank' before this is asked). */
function endsHtml(end: HtmlEnd, line: string): boolean {
  if (end === 'blank') return false;
  return 'text' in end ? line.includes(end.text) : end.tag.test(line);
}

/**
 * The line after YAML front matter (`---` on the first line to `---` or
 * `...`), or 0 when there is none. Lines may keep a CRLF file's `\r`.
 *
 * @example
 * ```ts
 * afterFrontMatter(['---', 'title: x', '---', '# A']); // 3
 * ```
 */
export function afterFrontMatter(lines: readonly string[]): number {
  if (lines.length === 0 || !/^---[ \t]*\r?$/.test(lines[0] as string)) return 0;
  for (let i = 1; i < lines.length; i++) if (/^(?:---|\.\.\.)[ \t]*\r?$/.test(lines[i] as string)) return i + 1;
  return 0;
}

/** Headings of a Markdown document as nested sections. */
export function markdownSymbols(lines: readonly string[]): CodeSymbol[] {
  const found: Array<{ name: string; level: number; start: number }> = [];
  // An open fenced code block; `base` is the column its container's content starts at (0: the document).
  let fence: { char: string; length: number; base: number } | undefined;
  let html: HtmlEnd | undefined;
  // The open paragraph: where it started, and whether it is the document's own (not a list item's or a quote's).
  let para: { start: number; top: boolean } | undefined;
  // The open list item's content column; lines indented to it belong to the item.
  let listColumn: number | undefined;
  for (let i = afterFrontMatter(lines); i < lines.length; i++) {
    const line = lines[i] as string;
    if (fence !== undefined) {
      const { columns, chars } = indentOf(line);
      if (columns < fence.base && line.trim() !== '') {
        // A list item's code ends with the item: the line is the document's again.
        fence = undefined;
        listColumn = undefined;
      } else {
        const close = columns - fence.base < 4 ? FENCE.exec(line.slice(chars)) : null;
        if (close && (close[1] as string)[0] === fence.char && (close[1] as string).length >= fence.length && (close[2] as string).trim() === '')
          fence = undefined;
        continue;
      }
    }
    if (line.trim() === '') {
      if (html === 'blank') html = undefined;
      para = undefined;
      continue;
    }
    if (html !== undefined) {
      if (endsHtml(html, line)) html = undefined;
      continue;
    }
    const { columns, chars } = indentOf(line);
    if (listColumn !== undefined && columns >= listColumn) {
      // The item's own content: its headings and code are not the document's.
      const inner = line.slice(chars);
      const open = FENCE.exec(inner);
      if (open && !((open[1] as string)[0] === '`' && (open[2] as string).includes('`'))) {
        fence = { char: (open[1] as string)[0] as string, length: (open[1] as string).length, base: listColumn };
        para = undefined;
      } else para ??= { start: i, top: false };
      continue;
    }
    if (columns >= 4) {
      // Indented code, unless it continues a paragraph.
      continue;
    }
    const text = line.slice(chars);
    const open = FENCE.exec(text);
    if (open && !((open[1] as string)[0] === '`' && (open[2] as string).includes('`'))) {
      fence = { char: (open[1] as string)[0] as string, length: (open[1] as string).length, base: 0 };
      para = undefined;
      listColumn = undefined;
      continue;
    }
    const atx = ATX.exec(text);
    if (atx) {
      const name = (atx[2] ?? '').replace(/^#+$/, '').trim();
      if (name !== '') found.push({ name, level: (atx[1] as string).length, start: i });
      para = undefined;
      listColumn = undefined;
      continue;
    }
    const underline = SETEXT.exec(text);
    if (underline && para?.top === true) {
      const name = lines
        .slice(para.start, i)
        .map((l) => l.trim())
        .join(' ');
      found.push({ name, level: (underline[1] as string)[0] === '=' ? 1 : 2, start: para.start });
      para = undefined;
      continue;
    }
    if (BREAK.test(text)) {
      para = undefined;
      listColumn = undefined;
      continue;
    }
    if (text.startsWith('>')) {
      para = { start: i, top: false };
      listColumn = undefined;
      continue;
    }
    const item = LIST_ITEM.exec(text);
    if (item) {
      const rest = text.slice((item[0] as string).length);
      const empty = rest.trim() === '';
      // Only an item with text, and a numbered one only from 1, may interrupt a paragraph.
      if (para === undefined || (!empty && (item[2] === undefined || Number(item[2]) === 1))) {
        const gap = indentOf(rest).columns;
        listColumn = columns + (item[0] as string).length + (empty || gap > 4 ? 1 : gap);
        para = empty ? undefined : { start: i, top: false };
        continue;
      }
    }
    const htmlEnd = htmlStart(text, para !== undefined);
    if (htmlEnd !== undefined) {
      html = endsHtml(htmlEnd, text.slice(1)) ? undefined : htmlEnd;
      para = undefined;
      listColumn = undefined;
      continue;
    }
    // Paragraph text: a lazy line continues the open paragraph, wherever it is; a new one is the document's.
    if (para === undefined) {
      para = { start: i, top: true };
      listColumn = undefined;
    }
  }
  return sections(lines, found);
}

/** Nests headings into sections that run to the next heading of the same or a higher level, trailing blank lines left out. */
function sections(lines: readonly string[], found: ReadonlyArray<{ name: string; level: number; start: number }>): CodeSymbol[] {
  const roots: Draft[] = [];
  const stack: Draft[] = [];
  for (const h of found) {
    while (stack.length > 0 && (stack[stack.length - 1] as Draft).level >= h.level) (stack.pop() as Draft).end = h.start - 1;
    const draft: Draft = { name: h.name, level: h.level, start: h.start, end: lines.length - 1, children: [] };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(draft);
    else roots.push(draft);
    stack.push(draft);
  }
  const trim = (end: number, start: number) => {
    let e = end;
    while (e > start && (lines[e] as string).trim() === '') e--;
    return e;
  };
  const finish = (d: Draft, prefix: string): CodeSymbol => ({
    name: d.name,
    qualifiedName: prefix ? `${prefix} > ${d.name}` : d.name,
    kind: 'section',
    startLine: d.start + 1,
    endLine: trim(d.end, d.start) + 1,
    docStartLine: d.start + 1,
    signature: `${'#'.repeat(d.level)} ${d.name}`,
    children: d.children.map((c) => finish(c, prefix ? `${prefix} > ${d.name}` : d.name)),
  });
  return roots.map((d) => finish(d, ''));
}
