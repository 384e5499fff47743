/**
 * How plausible a decoding is as human writing, from facts about writing
 * systems rather than from statistics learnt on some corpus: a correct
 * decoding has no invalid sequences, no C1 controls and no private-use
 * characters; its words do not mix scripts, flip case inside, or carry
 * symbols between letters; and its accented letters all belong to the
 * alphabet of one language (a Czech file read as windows-1252 shows `ø`,
 * `ì` and `è` side by side, letters no one language uses together). CJK
 * decodings are held to the scripts their language is written in: kana
 * belong to Japanese, Hangul to Korean, and neither to Chinese.
 *
 * {@link implausibility} scores one text (lower is more plausible);
 * `legacy-detector.ts` ranks candidate encodings by it.
 *
 * @module
 */

import { iconvLite } from './lazy-dependencies.ts';

/** Non-ASCII lower-case letters of the alphabets of languages stored in legacy encodings. */
const ALPHABETS: readonly string[] = [
  // Western European (windows-1252, ISO-8859-1/15)
  'àâæçéèêëîïôœùûüÿ', // French
  'äöüß', // German
  'áéíñóúü', // Spanish, Galician, Basque
  'áâãàçéêíóôõúü', // Portuguese
  'àèéìíîòóùú', // Italian
  'àçéèíïóòúü', // Catalan
  'áéèêëíïóöüú', // Dutch, Afrikaans
  'æøåéóüäö', // Danish, Norwegian
  'åäöéü', // Swedish
  'åäöšž', // Finnish
  'áðéíóúýþæö', // Icelandic
  'áðíóúýæø', // Faroese
  'âêîôûŵŷäëïöüáéíóúàèìòù', // Welsh
  'áéíóúñüḥḷ', // Asturian
  'âêîôûùüñë', // Breton
  'äéëü', // Luxembourgish
  // Central European (windows-1250, ISO-8859-2)
  'áčďéěíňóřšťúůýž', // Czech
  'áäčďéíĺľňóôŕšťúýž', // Slovak
  'ąćęłńóśźż', // Polish
  'áéíóöőúüű', // Hungarian
  'čšžćđ', // Slovene, Croatian, Bosnian, Serbian (Latin)
  'ăâîșțşţ', // Romanian
  'çë', // Albanian
  // Turkish, Azerbaijani (windows-1254, ISO-8859-9)
  'çğıöşüâîûİ',
  'çəğıöşü',
  // Baltic (windows-1257, ISO-8859-13)
  'ąčęėįšųūž', // Lithuanian
  'āčēģīķļņšūž', // Latvian
  'äõöüšž', // Estonian
  // Others of the Latin script
  'ċġħżàèìòù', // Maltese
  'ĉĝĥĵŝŭ', // Esperanto
  // Cyrillic (windows-1251, KOI8-R/U, ISO-8859-5)
  'абвгдеёжзийклмнопрстуфхцчшщъыьэюя', // Russian
  'абвгґдеєжзиіїйклмнопрстуфхцчшщьюя', // Ukrainian
  'абвгдеёжзійклмнопрстуўфхцчшыьэюя', // Belarusian
  'абвгдежзийклмнопрстуфхцчшщъьюя', // Bulgarian
  'абвгдђежзијклљмнњопрстћуфхцчџш', // Serbian
  'абвгдѓежзѕијклљмнњопрстќуфхцчџш', // Macedonian
  // Greek (windows-1253, ISO-8859-7)
  'αβγδεζηθικλμνξοπρστυφχψωςάέήίόύώϊϋΐΰ',
];

/** Scripts written without case whose letters all belong to one alphabet: a range each. */
const SCRIPT_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0591, 0x05f4], // Hebrew (letters and points)
  [0x0600, 0x06ff], // Arabic, Persian, Urdu
  [0x0e01, 0x0e5b], // Thai
];

/** Coarse script of a letter. */
const Script = { Latin: 1, Greek: 2, Cyrillic: 3, Hebrew: 4, Arabic: 5, Thai: 6, Kana: 7, Han: 8, Hangul: 9, Other: 10 } as const;
type Script = (typeof Script)[keyof typeof Script];

interface Alphabet {
  readonly script: Script;
  has(cp: number): boolean;
}

function scriptOf(cp: number): Script {
  if (cp < 0x250 || (cp >= 0x1e00 && cp < 0x1f00)) return Script.Latin;
  if (cp >= 0x370 && cp < 0x400) return Script.Greek;
  if (cp >= 0x400 && cp < 0x530) return Script.Cyrillic;
  if (cp >= 0x590 && cp < 0x600) return Script.Hebrew;
  if (cp >= 0x600 && cp < 0x700) return Script.Arabic;
  if (cp >= 0xe00 && cp < 0xe80) return Script.Thai;
  if ((cp >= 0x3040 && cp < 0x3100) || (cp >= 0x31f0 && cp < 0x3200) || (cp >= 0xff66 && cp < 0xffa0)) return Script.Kana;
  if ((cp >= 0x3400 && cp < 0xa000) || (cp >= 0xf900 && cp < 0xfb00) || (cp >= 0x20000 && cp < 0x32000) || cp === 0x3005) return Script.Han;
  if ((cp >= 0xac00 && cp < 0xd7b0) || (cp >= 0x1100 && cp < 0x1200) || (cp >= 0x3130 && cp < 0x3190)) return Script.Hangul;
  return Script.Other;
}

const ALPHABET_FITS: readonly Alphabet[] = [
  ...ALPHABETS.map((a): Alphabet => {
    const set = new Set([...a].map((c) => c.codePointAt(0) as number));
    return { script: scriptOf([...set][0] as number), has: (cp) => set.has(cp) };
  }),
  ...SCRIPT_RANGES.map(([lo, hi]): Alphabet => ({ script: scriptOf(lo + 0x10), has: (cp) => cp >= lo && cp <= hi })),
];

/** The writing systems a legacy multi-byte encoding's own language uses. */
export type CjkLanguage = 'ja' | 'zh' | 'ko';

const CJK_LANGUAGE: Readonly<Record<string, CjkLanguage>> = { shift_jis: 'ja', 'euc-jp': 'ja', gb18030: 'zh', gbk: 'zh', big5: 'zh', 'euc-kr': 'ko' };

/** The encoding whose two-byte codes tell a character's frequency level, per CJK encoding. */
const LEVEL_ENCODING: Readonly<Record<string, string>> = {
  shift_jis: 'euc-jp',
  'euc-jp': 'euc-jp',
  gb18030: 'gbk',
  gbk: 'gbk',
  big5: 'big5',
  'euc-kr': 'euc-kr',
};

const levelCache = new Map<string, number>();

/**
 * How rare a CJK character is by its code's place in the national standard,
 * whose rows are ordered by frequency: GB2312's level 1 (the 3,755 commonest
 * hanzi), Big5's frequent block, JIS X 0208's level 1 kanji and KS X 1001's
 * Hangul cost nothing; second levels a little; extensions (GBK, HKSCS, JIS X
 * 0212, vendor rows, UHC) a whole point. Text read in the wrong CJK encoding
 * lands on rare codes in bulk.
 */
function rarity(ch: string, encoding: string): number {
  const key = `${encoding}\0${ch}`;
  const cached = levelCache.get(key);
  if (cached !== undefined) return cached;
  const level = LEVEL_ENCODING[encoding];
  let cost = 0;
  if (level !== undefined) {
    const b = iconvLite().encode(ch, level);
    const lead = b[0] ?? 0;
    const trail = b[1] ?? 0;
    const standard = b.length === 2 && trail >= 0xa1;
    if (level === 'gbk') cost = !standard || lead < 0xa1 || lead > 0xf7 ? 1 : lead >= 0xd8 ? 0.25 : 0;
    else if (level === 'big5') cost = lead >= 0xa1 && lead <= 0xc6 ? 0 : lead >= 0xc9 && lead <= 0xf9 ? 0.25 : 1;
    else if (level === 'euc-jp') cost = !standard || lead < 0xa1 || (lead > 0xa8 && lead < 0xb0) || lead > 0xf4 ? 1 : lead >= 0xd0 ? 0.25 : 0;
    else cost = standard && lead >= 0xa1 ? 0 : 0.5;
  }
  levelCache.set(key, cost);
  return cost;
}

/**
 * Whether a Han character, kana or a Hangul syllable is one the national
 * standards count among the commonly written (the first level of GB2312,
 * Big5's frequent block, JIS X 0208's level 1, KS X 1001's Hangul): writing
 * keeps to those, where code units drawn from binary data land anywhere in
 * the twenty thousand of Unicode's blocks.
 */
export function commonCjk(ch: string): boolean {
  const script = scriptOf(ch.codePointAt(0) as number);
  if (script === Script.Kana) return !/[\uff61-\uff9f]/.test(ch);
  if (script === Script.Hangul) return rarity(ch, 'euc-kr') === 0;
  return script === Script.Han && (rarity(ch, 'gb18030') === 0 || rarity(ch, 'big5') === 0 || rarity(ch, 'shift_jis') === 0);
}

/**
 * Cost of a CJK character in a text read as `language`: kana are Japanese,
 * Hangul syllables Korean; Chinese uses neither; Korean prose rarely uses
 * Han characters; half-width katakana and lone Hangul jamo are legacy
 * oddities that a wrong decoding produces in bulk.
 */
function cjkCost(ch: string, cp: number, script: Script, encoding: string | undefined): number {
  if (cp >= 0xff61 && cp < 0xffa0) return 1; // half-width katakana
  if (cp >= 0x3130 && cp < 0x3190) return 1; // Hangul compatibility jamo standing alone
  const language = encoding === undefined ? undefined : CJK_LANGUAGE[encoding];
  if (language === undefined || encoding === undefined) return 0;
  if (script === Script.Kana) return language === 'ja' ? 0 : 1;
  if (script === Script.Hangul) return language === 'ko' ? rarity(ch, encoding) : 1;
  if (script === Script.Han) return (language === 'ko' ? 0.5 : 0) + rarity(ch, encoding);
  return 0;
}

type CharClass = 'letter' | 'upper' | 'lower' | 'mark' | 'neutral' | 'symbol' | 'control' | 'private';

const classCache = new Map<number, CharClass>();

function classOf(ch: string, cp: number): CharClass {
  const cached = classCache.get(cp);
  if (cached !== undefined) return cached;
  let c: CharClass;
  if ((cp >= 0x80 && cp <= 0x9f) || cp === 0xfffd || (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d && cp !== 0x0c && cp !== 0x0b)) c = 'control';
  else if (/[\p{Co}\p{Cn}]/u.test(ch)) c = 'private';
  else if (/\p{Lu}/u.test(ch)) c = 'upper';
  else if (/\p{Ll}/u.test(ch)) c = 'lower';
  else if (/\p{L}/u.test(ch)) c = 'letter';
  else if (/\p{M}/u.test(ch)) c = 'mark';
  // Punctuation is neutral; symbols (±, ¤, ¦, ¶...) and digits of other scripts (Thai ๖ in `g๖ster`) are what mis-decoded letters become.
  else if (cp < 0xa0 || (/[\p{Z}\p{P}]/u.test(ch) && ch !== '¶') || '°€№'.includes(ch)) c = 'neutral';
  else c = 'symbol';
  classCache.set(cp, c);
  return c;
}

function lowerCodePoint(ch: string, cp: number): number {
  const lower = ch.toLowerCase();
  return lower.length === ch.length ? (lower.codePointAt(0) as number) : cp;
}

/**
 * How implausible `text` is as human writing (0 for clean text; higher is
 * worse). Pass the encoding it was decoded from when that is a CJK one, so
 * kana in a Chinese reading, Hangul in a Japanese one, and characters from
 * the rare end of the encoding's standard count against it.
 *
 * @example
 * ```ts
 * implausibility('Псевдоним для %s', 'koi8-r');       // 0
 * implausibility('рУЕЧДПОЙН ДМС %s', 'windows-1251'); // 2: the same KOI8-R bytes read as windows-1251 flip case inside a word
 * ```
 */
export function implausibility(text: string, encoding?: string): number {
  let score = 0;
  const letters = new Map<number, number>();
  let wordScript: Script | 0 = 0;
  let wordLetters = 0;
  let wordAccented = 0;
  let prevLower = false;
  let prevLetter = false;
  let pendingSymbol = false;
  // Clause or sentence punctuation right after a Latin letter: a letter right after it glues two words (`lower¡Vlatin`, `border｡Vrelated`).
  let gluedPunctuation = false;
  // Within a word: 1 after a Latin letter, 2 after East Asian characters that follow a Latin letter.
  let latinThenEastAsian = 0;
  let openGuillemets = 0;
  let prevSymbol = false;
  const endWord = () => {
    // Latin words are mostly ASCII letters; a word made of accents is a mis-decoded script (`ÇëÊäÈë`).
    if (wordScript === Script.Latin && wordLetters >= 4 && wordAccented >= wordLetters - 1) score += 2;
    wordScript = 0;
    wordLetters = 0;
    wordAccented = 0;
    prevLower = false;
    prevLetter = false;
    latinThenEastAsian = 0;
  };
  // Chinese and Japanese do not put spaces between words; Korean does.
  const spaced = encoding !== undefined && (CJK_LANGUAGE[encoding] === 'zh' || CJK_LANGUAGE[encoding] === 'ja');
  let cjkBeforeSpace = 0; // 1: a Han or kana character, 2: then one space
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    const afterSymbol = prevSymbol;
    prevSymbol = false;
    const afterPunctuation = gluedPunctuation;
    gluedPunctuation = false;
    if (cp < 0x80 && !/[A-Za-z]/.test(ch)) {
      // Quotes open and close within a line.
      if (cp === 0x0a) openGuillemets = 0;
      cjkBeforeSpace = cjkBeforeSpace === 1 && cp === 0x20 ? 2 : 0;
      pendingSymbol = false;
      endWord();
      continue;
    }
    const cls = classOf(ch, cp);
    if (cls === 'control' || cls === 'private') {
      // U+FFFD is an invalid sequence; a C1 control an undefined or misread
      // byte, which text has none of (worth more than a foreign letter, so a
      // reading cannot dodge an odd letter by making it a control: `Kroužek`
      // in German text is not `Krou\u009eek`).
      score += cp === 0xfffd ? 20 : cls === 'private' ? 10 : 4;
      pendingSymbol = false;
      endWord();
      continue;
    }
    if (cls === 'mark') {
      // Hebrew points, Arabic vowels, Thai signs belong on letters of their own script.
      const script = scriptOf(cp);
      if (script !== Script.Other && wordScript !== 0 && script !== wordScript) score += 4;
      continue;
    }
    if (cls === 'neutral' || cls === 'symbol') {
      // Guillemets pair up: a closing one glued to a word with none opened
      // on the line is a mis-decoded letter (`Zruąi»` for `Zrušiť`).
      if (ch === '«') openGuillemets++;
      else if (ch === '»' && prevLetter && openGuillemets === 0) score += 3;
      else if (ch === '»') openGuillemets = Math.max(0, openGuillemets - 1);
      if (cls === 'symbol') {
        // ¤, the placeholder currency sign, is what a misread € looks like; text never uses it.
        score += ch === '¤' ? 3 : 0.5;
        // A symbol between two letters is almost always a mis-decoded letter.
        pendingSymbol = prevLetter;
        prevSymbol = true;
      } else {
        pendingSymbol = false;
        // Dashes, apostrophes and the Catalan middle dot join letters; quotation marks, ¡, ¿ and CJK stops do not.
        gluedPunctuation = prevLetter && wordScript === Script.Latin && /\p{P}/u.test(ch) && !/[\p{Pd}’‘ʼ·]/u.test(ch);
      }
      endWord();
      continue;
    }
    // A letter. After a symbol glued to a letter on both sides, or starting the word (`½uvre`).
    if (pendingSymbol) score += 3;
    else if (afterSymbol) score += 2;
    pendingSymbol = false;
    const script = scriptOf(cp);
    if (afterPunctuation && script === Script.Latin) score += 2;
    if (script === Script.Kana || script === Script.Han || script === Script.Hangul || cp >= 0xff00) score += cjkCost(ch, cp, script, encoding);
    const hanOrKana = script === Script.Han || script === Script.Kana;
    if (spaced && hanOrKana && cjkBeforeSpace === 2) score += 1;
    cjkBeforeSpace = hanOrKana ? 1 : 0;
    if (wordScript !== 0 && script !== wordScript && script !== Script.Other && wordScript !== Script.Other) {
      // Chinese and Japanese put no space between words, so kana, Han and the
      // Latin letters of a name touch (`メディアURL`); Korean attaches particles
      // to Latin words (`URL을`). A lower-case letter right after them is a
      // misread (`線uolas`).
      const cjk = (s: Script) => s === Script.Kana || s === Script.Han;
      const eastAsian = (s: Script) => cjk(s) || s === Script.Hangul;
      const latinBeside = (eastAsian(script) && wordScript === Script.Latin) || (script === Script.Latin && cls === 'upper' && eastAsian(wordScript));
      if (!(cjk(script) && cjk(wordScript)) && !latinBeside) score += 4;
    }
    // But a Latin word does not go on after East Asian characters inside it (`R闤ing`, `luned餩marted`).
    if (script === Script.Latin && latinThenEastAsian === 2) score += 4;
    latinThenEastAsian =
      script === Script.Latin ? 1 : (script === Script.Kana || script === Script.Han || script === Script.Hangul) && latinThenEastAsian > 0 ? 2 : 0;
    if (wordScript === 0) wordScript = script;
    wordLetters++;
    if (cp >= 0x80) {
      wordAccented++;
      const lower = lowerCodePoint(ch, cp);
      letters.set(lower, (letters.get(lower) ?? 0) + 1);
    }
    if (cls === 'upper' && prevLower) score += 2;
    prevLower = cls === 'lower';
    prevLetter = true;
  }
  endWord();
  return score + alphabetMisfit(letters);
}

/**
 * Non-ASCII letters outside the best-fitting single alphabet (CJK letters
 * excepted): 2 points each from the alphabet's own script, 4 from another.
 */
function alphabetMisfit(letters: ReadonlyMap<number, number>): number {
  const relevant: [number, number, Script][] = [];
  for (const [cp, n] of letters) {
    const s = scriptOf(cp);
    if (s === Script.Kana || s === Script.Han || s === Script.Hangul || cp >= 0xff00) continue;
    relevant.push([cp, n, s]);
  }
  if (relevant.length === 0) return 0;
  let best = Number.POSITIVE_INFINITY;
  for (const alphabet of ALPHABET_FITS) {
    let misfit = 0;
    for (const [cp, n, s] of relevant) if (!alphabet.has(cp)) misfit += n * (s === alphabet.script ? 2 : 4);
    if (misfit < best) best = misfit;
    if (best === 0) break;
  }
  return best;
}
