/**
 * Letter-pair models of the languages stored in legacy encodings, learnt at
 * run time from the Unicode CLDR text that ships inside Node's ICU
 * (`Intl.DisplayNames` of languages, regions and currencies, unit names,
 * relative times): a few kilobytes of real writing per language, written by
 * CLDR's translators, that no test corpus of ctxfs contains. They tell
 * `Moguće` (Croatian) from `Moguæe` and `Přidat` from `Pøidat` where the
 * alphabets alone cannot (Faroese has both `á` and `ø`): which accented
 * letters follow which. The sample is small and made of names, so the fit
 * is a tie-breaker, weighed lightly against the plausibility rules.
 *
 * Models are built on first use (a few hundred milliseconds, once per
 * process) and only when a file is neither Unicode nor ASCII.
 *
 * @module
 */

/** CLDR locales of the languages legacy encodings were made for (CJK excepted: their standards rank characters). */
const LOCALES: readonly string[] = [
  'fr',
  'de',
  'es',
  'pt',
  'it',
  'ca',
  'nl',
  'da',
  'nb',
  'sv',
  'fi',
  'is',
  'fo',
  'ga',
  'cy',
  'eu',
  'gl',
  'ast',
  'br',
  'af',
  'lb',
  'cs',
  'sk',
  'pl',
  'hu',
  'sl',
  'hr',
  'bs',
  'sr-Latn',
  'ro',
  'sq',
  'tr',
  'az',
  'lt',
  'lv',
  'et',
  'mt',
  'eo',
  'ru',
  'uk',
  'be',
  'bg',
  'sr',
  'mk',
  'el',
  'he',
  'ar',
  'fa',
  'ur',
  'th',
]; // prettier-ignore

const BOUNDARY = ' ';

interface Model {
  /** log(P(pair) × alphabet size) of each pair seen (`ab`, a and b letters or the boundary). */
  readonly seen: Map<string, number>;
  /** The same for a pair not seen, by its first letter. */
  readonly unseen: Map<string, number>;
  /** Script of most of its non-ASCII letters (its first code point's block). */
  readonly script: number;
}

function isLetter(ch: string): boolean {
  return /\p{L}|\p{M}/u.test(ch);
}

function sampleText(locale: string): string {
  const out: string[] = [];
  const codes: string[] = [];
  const abc = 'abcdefghijklmnopqrstuvwxyz';
  for (const a of abc) for (const b of abc) codes.push(a + b);
  const names = (type: 'language' | 'region' | 'currency', keys: readonly string[]) => {
    const dn = new Intl.DisplayNames([locale], { type, fallback: 'none' });
    for (const k of keys) {
      const n = dn.of(k);
      if (n) out.push(n);
    }
  };
  names('language', codes);
  names(
    'region',
    codes.map((c) => c.toUpperCase()),
  );
  names('currency', Intl.supportedValuesOf('currency'));
  for (const unit of Intl.supportedValuesOf('unit')) {
    const f = new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' });
    for (const n of [1, 2, 5]) out.push(f.format(n));
  }
  const rtf = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const unit of ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const) for (const n of [-2, -1, 0, 1, 2, 5]) out.push(rtf.format(n, unit));
  return out.join('\n');
}

/** Coarse script of a letter: its 128-code-point block (Latin-1 and Latin Extended-A/B count as one). */
function blockOf(cp: number): number {
  return cp < 0x250 ? 0 : cp >> 7;
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

function buildModel(text: string): Model {
  const pairs = new Map<string, number>();
  const firsts = new Map<string, number>();
  const letters = new Set<string>();
  const blocks = new Map<number, number>();
  let prev = BOUNDARY;
  for (const raw of text.toLowerCase()) {
    const ch = isLetter(raw) ? raw : BOUNDARY;
    if (ch === BOUNDARY && prev === BOUNDARY) continue;
    letters.add(ch);
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0x80) blocks.set(blockOf(cp), (blocks.get(blockOf(cp)) ?? 0) + 1);
    pairs.set(prev + ch, (pairs.get(prev + ch) ?? 0) + 1);
    firsts.set(prev, (firsts.get(prev) ?? 0) + 1);
    prev = ch;
  }
  // Add-one smoothing over the letters the language uses, plus the boundary.
  const size = letters.size + 1;
  const seen = new Map<string, number>();
  for (const [pair, n] of pairs) seen.set(pair, Math.log(((n + 1) / ((firsts.get([...pair][0] as string) ?? 0) + size)) * size));
  const unseen = new Map<string, number>();
  for (const [first, n] of firsts) unseen.set(first, Math.log((1 / (n + size)) * size));
  return { seen, unseen, script: mainBlock(blocks) };
}

let models: Model[] | undefined;

function allModels(): Model[] {
  if (models === undefined) {
    models = [];
    for (const locale of LOCALES) {
      try {
        models.push(buildModel(sampleText(locale)));
      } catch {
        // A Node built without that locale's data: one model fewer.
      }
    }
  }
  return models;
}

/** The letter pairs of `text` that touch a non-ASCII letter (CJK left out), boundaries as spaces. */
function informativePairs(text: string): [first: string, pair: string][] {
  const out: [string, string][] = [];
  let prev = BOUNDARY;
  for (const raw of text.toLowerCase()) {
    const cp = raw.codePointAt(0) as number;
    const ch = isLetter(raw) && !(cp >= 0x2e80 && cp < 0xfb00) && cp < 0xff00 ? raw : BOUNDARY;
    if (ch === BOUNDARY && prev === BOUNDARY) continue;
    if ((ch.codePointAt(0) as number) >= 0x80 || (prev.codePointAt(0) as number) >= 0x80) out.push([prev, prev + ch]);
    prev = ch;
  }
  return out;
}

/**
 * How much more likely the accented letters of `text` are in the language
 * they fit best than letters drawn at random: a sum over the letter pairs
 * that touch a non-ASCII letter of log(P(pair | language) × alphabet size),
 * with add-one smoothing. Positive for real writing, negative for letters
 * that no language puts side by side; 0 when there are no such pairs.
 *
 * @example
 * ```ts
 * languageFit('Moguće preuzeti') > languageFit('Moguæe preuzeti'); // true
 * ```
 */
export function languageFit(text: string): number {
  const pairs = informativePairs(text);
  if (pairs.length === 0) return 0;
  // Only the languages written in the script most of these letters are in.
  const blocks = new Map<number, number>();
  for (const [, pair] of pairs) {
    for (const ch of pair) {
      const cp = ch.codePointAt(0) as number;
      if (cp >= 0x80) blocks.set(blockOf(cp), (blocks.get(blockOf(cp)) ?? 0) + 1);
    }
  }
  const script = mainBlock(blocks);
  let best = Number.NEGATIVE_INFINITY;
  for (const m of allModels()) {
    if (m.script !== script) continue;
    let sum = 0;
    for (const [first, pair] of pairs) sum += m.seen.get(pair) ?? m.unseen.get(first) ?? 0;
    if (sum > best) best = sum;
  }
  // No language of that script: letters no model knows, as unlikely as random ones.
  return Number.isFinite(best) ? best : 0;
}
