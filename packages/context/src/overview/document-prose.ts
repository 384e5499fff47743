/**
 * What of an entrypoint document is worth a model's tokens. READMEs often
 * open with a logo in HTML, a row of badges and HTML comments: markup that
 * carries no text, and that a small profile's share of the overview would
 * otherwise spend entirely. Fenced code is left untouched (JSX and HTML in an
 * example are content).
 *
 * @module
 */

const MARKDOWN = /\.(md|mdx|markdown|mdown)$/i;
const TAG = /<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/g;
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;
const LINKED_IMAGE = /\[\s*!\[[^\]]*\]\([^)]*\)\s*\]\([^)]*\)/g;
const REFERENCE_DEF = /^\s{0,3}\[[^\]]+\]:\s+\S+/;

const TOUCHED = '\u0000';

/** Markup gone from a stretch of prose (no fences inside); lines that held markup are trimmed. */
function stripMarkup(block: string): string[] {
  const text = block
    .replace(/<!--[\s\S]*?(?:-->|$)/g, TOUCHED)
    .replace(LINKED_IMAGE, TOUCHED)
    .replace(IMAGE, TOUCHED)
    .replace(TAG, TOUCHED);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (REFERENCE_DEF.test(line)) continue;
    const clean = line.includes(TOUCHED) ? line.replaceAll(TOUCHED, ' ').replace(/\s+/g, ' ').trim() : line.trimEnd();
    out.push(clean);
  }
  return out;
}

/**
 * Drops markup that carries no text from a Markdown document: HTML comments,
 * tags (their inner text is kept), images and linked badges, link reference
 * definitions; runs of blank lines become one. Other files are returned as
 * they are.
 *
 * @example
 * ```ts
 * proseOf('README.md', '<p align="center"><img src="logo.svg"></p>\n\n# Acme\n');
 * // '# Acme\n'
 * ```
 */
export function proseOf(path: string, text: string): string {
  if (!MARKDOWN.test(path)) return text;
  const lines: string[] = [];
  let prose: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    if (prose.length > 0) lines.push(...stripMarkup(prose.join('\n')));
    prose = [];
  };
  for (const raw of text.split('\n')) {
    const mark = /^\s{0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (fence === undefined && mark === undefined) {
      prose.push(raw);
      continue;
    }
    if (fence === undefined) {
      flush();
      fence = mark;
    } else if (mark !== undefined && mark[0] === fence[0] && mark.length >= fence.length) fence = undefined;
    lines.push(raw);
  }
  flush();
  const out: string[] = [];
  for (const line of lines) if (line.trim() !== '' || (out.length > 0 && out[out.length - 1] !== '')) out.push(line.trim() === '' ? '' : line);
  return out.join('\n');
}
