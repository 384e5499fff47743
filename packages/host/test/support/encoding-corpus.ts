/**
 * A corpus of real translated text in every encoding ctxfs detects, built
 * from files nobody here wrote: the gettext catalogues (`lang/translations/*.po`)
 * of CKEditor 5's packages and the locale sources of moment.js, downloaded
 * from the npm registry by pinned version into `~/.cache/ctxfs-bench/releases`
 * (never committed). Each UTF-8 document is re-encoded into every legacy
 * encoding its script allows (lines the encoding cannot hold are left out,
 * so the text stays the translators' own), and the hard classes are made
 * from it:
 *
 * - `file`: the document as a whole;
 * - `fragment`: one short translated string (a message, a month list);
 * - `late`: the document after more than the 8 KiB detection sample of real
 *   ASCII source (moment's own code), sometimes past the first 64 KiB read;
 * - `utf8-damaged`: the UTF-8 document with a stray 0xFF, with one line
 *   pasted in windows-1252, or cut inside its last character; a reader must
 *   serve it as UTF-8 (invalid bytes as U+FFFD), not as a legacy encoding;
 * - `unicode`: UTF-8 and UTF-16 with and without BOM, which detection must
 *   not break while it learns the rest.
 *
 * ISO-2022-JP (7-bit, escape sequences) is made with the system's `iconv`,
 * everything else with iconv-lite through core's `encodeText`.
 *
 * @module
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { concatBytes, decodeLikeReader, encodeText } from '@ctxfs/core';

/** A pinned npm release and where its translated documents lie inside it. */
export interface CorpusSource {
  readonly name: string;
  readonly version: string;
  /** Directory (inside the package) holding one document per locale. */
  readonly dir: string;
  /** File name suffix of the documents (`.po`, `.js`). */
  readonly suffix: string;
}

const CKEDITOR_PACKAGES = [
  'ui',
  'core',
  'image',
  'table',
  'link',
  'list',
  'heading',
  'media-embed',
  'code-block',
  'special-characters',
  'font',
  'basic-styles',
];

/** Every source of the full corpus. */
export const CORPUS_SOURCES: readonly CorpusSource[] = [
  ...CKEDITOR_PACKAGES.map((p) => ({ name: `@ckeditor/ckeditor5-${p}`, version: '39.0.0', dir: 'lang/translations', suffix: '.po' })),
  { name: 'moment', version: '2.30.1', dir: 'locale', suffix: '.js' },
];

/** The pinned slice the CI test runs: one catalogue and moment's locales. */
export const CI_SOURCES: readonly CorpusSource[] = CORPUS_SOURCES.filter((s) => s.name === '@ckeditor/ckeditor5-table' || s.name === 'moment');

/** Where the ASCII prefix of `late` cases comes from (real source code). */
const ASCII_SOURCE = { name: 'moment', version: '2.30.1', file: 'moment.js' } as const;

/**
 * Legacy encodings (iconv-lite names) each locale's script is commonly
 * stored in. Locales not listed are only tested as Unicode.
 */
const LEGACY_BY_LOCALE: Readonly<Record<string, readonly string[]>> = (() => {
  const western = ['windows-1252', 'iso-8859-1', 'iso-8859-15'];
  const central = ['windows-1250', 'iso-8859-2'];
  const table: Record<string, readonly string[]> = {};
  for (const l of [
    'af',
    'ca',
    'da',
    'de',
    'de-at',
    'de-ch',
    'es',
    'es-do',
    'es-mx',
    'es-us',
    'eu',
    'fi',
    'fr',
    'fr-ca',
    'fr-ch',
    'gl',
    'it',
    'it-ch',
    'nb',
    'nl',
    'nl-be',
    'nn',
    'no',
    'pt',
    'pt-br',
    'sv',
    'is',
    'fo',
    'ast',
    'br',
    'cy',
    'ga',
    'gd',
    'lb',
    'oc-lnc',
  ])
    table[l] = western;
  for (const l of ['cs', 'sk', 'pl', 'hu', 'sl', 'hr', 'bs', 'sr-latn', 'sq', 'ro']) table[l] = central;
  for (const l of ['ru']) table[l] = ['windows-1251', 'koi8-r', 'iso-8859-5'];
  for (const l of ['bg', 'sr', 'sr-cyrl', 'mk', 'be']) table[l] = ['windows-1251', 'iso-8859-5'];
  table.uk = ['windows-1251', 'koi8-u'];
  table.el = ['windows-1253', 'iso-8859-7'];
  table.tr = ['windows-1254', 'iso-8859-9'];
  table.he = ['windows-1255', 'iso-8859-8'];
  table.ar = ['windows-1256', 'iso-8859-6'];
  for (const l of ['ar-dz', 'ar-kw', 'ar-ly', 'ar-ma', 'ar-ps', 'ar-sa', 'ar-tn', 'fa', 'ur']) table[l] = ['windows-1256'];
  for (const l of ['lt', 'lv', 'et']) table[l] = ['windows-1257', 'iso-8859-13'];
  table.th = ['windows-874', 'tis-620'];
  table.ja = ['shift_jis', 'euc-jp', 'iso-2022-jp'];
  table['zh-cn'] = ['gb18030', 'gbk'];
  for (const l of ['zh', 'zh-tw', 'zh-hk', 'zh-mo']) table[l] = ['big5'];
  table.ko = ['euc-kr'];
  return table;
})();

/** Kinds of case, reported separately. */
export type CaseClass = 'file' | 'fragment' | 'late' | 'utf8-damaged' | 'unicode';

/** One file of the corpus and the text a reader must serve for it. */
export interface EncodingCase {
  /** `source/locale/encoding/class[/n]`. */
  readonly id: string;
  readonly cls: CaseClass;
  /** The npm release the text comes from (`name@version`). */
  readonly source: string;
  readonly locale: string;
  /** The encoding the bytes were written in (`utf-8` for damaged UTF-8). */
  readonly encoding: string;
  readonly bytes: Uint8Array;
  /** The text a correct reader serves (for damaged UTF-8: the WHATWG lossy decoding). */
  readonly text: string;
}

/** Options of {@link buildEncodingCorpus}. */
export interface CorpusOptions {
  /** Releases to read; default {@link CORPUS_SOURCES}. */
  readonly sources?: readonly CorpusSource[];
  /** Short fragments taken per document and encoding; default 3. */
  readonly fragmentsPerDocument?: number;
  /** Cache of unpacked releases; default `~/.cache/ctxfs-bench/releases`. */
  readonly cacheDir?: string;
}

const DEFAULT_CACHE = join(homedir(), '.cache', 'ctxfs-bench', 'releases');

/**
 * Unpacks `name@version` from the npm registry into the cache (once) and
 * returns its `package` directory. The release is unpacked in a temporary
 * directory and renamed into place, so test files running in parallel never
 * see half a package.
 */
export function npmRelease(name: string, version: string, cacheDir = DEFAULT_CACHE): string {
  const dir = join(cacheDir, `${name.replace('/', '+')}@${version}`);
  const pkg = join(dir, 'package');
  if (existsSync(pkg)) return pkg;
  mkdirSync(cacheDir, { recursive: true });
  const tmp = mkdtempSync(join(cacheDir, '.unpacking-'));
  try {
    const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', tmp, '--silent'], { encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr || pack.error?.message}`);
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (tgz === undefined) throw new Error(`npm pack ${name}@${version} left no tarball`);
    const untar = spawnSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp]);
    if (untar.status !== 0) throw new Error(`cannot unpack ${tgz}: ${untar.stderr}`);
    // A directory without `package` is what an interrupted unpack of an older layout left.
    if (existsSync(dir) && !existsSync(pkg)) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch (err) {
      // Another process put it there first (or an older cache layout holds the name).
      if (!existsSync(pkg)) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return pkg;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the point
const NON_ASCII = /[^\u0000-\u007f]/;

/** Encodes corpus text as the corpus does (ISO-2022-JP with the system's `iconv`, the rest with iconv-lite). */
export function encodeIn(text: string, encoding: string): Uint8Array {
  if (encoding === 'iso-2022-jp') return execFileSync('iconv', ['-f', 'UTF-8', '-t', 'ISO-2022-JP'], { input: text });
  return encodeText(text, encoding);
}

/** True when `encoding` holds `line` exactly (as the reader decodes it back). */
function holds(line: string, encoding: string): boolean {
  if (!NON_ASCII.test(line)) return true;
  try {
    if (encoding === 'iso-2022-jp') return holdsInJis0208(line);
    return decodeLikeReader(encodeText(line, encoding), encoding) === line;
  } catch {
    return false;
  }
}

/**
 * ISO-2022-JP holds ASCII and JIS X 0208: in EUC-JP, byte pairs of its rows
 * 1-8 and 16-84 (no half-width kana, no JIS X 0212, no vendor rows).
 */
function holdsInJis0208(line: string): boolean {
  const euc = encodeText(line, 'euc-jp');
  if (decodeLikeReader(euc, 'euc-jp') !== line) return false;
  for (let i = 0; i < euc.length; i++) {
    const b = euc[i] as number;
    if (b < 0x80) continue;
    const t = euc[i + 1];
    if (b < 0xa1 || (b > 0xa8 && b < 0xb0) || b > 0xf4 || t === undefined || t < 0xa1) return false;
    i++;
  }
  return true;
}

/** The document's lines that `encoding` can hold, or undefined when no non-ASCII text is left. */
function representable(text: string, encoding: string): string | undefined {
  const lines = text.split('\n').filter((l) => holds(l, encoding));
  const out = lines.join('\n');
  return NON_ASCII.test(out) ? out : undefined;
}

/** Quoted strings of the document with translated (non-ASCII) text, at least 12 code points long. */
function fragmentsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'/g)) {
    const s = m[1] ?? m[2] ?? '';
    if (NON_ASCII.test(s) && [...s].length >= 12) out.push(s);
  }
  return out;
}

/** `count` items spread evenly over `items`. */
function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  const out: T[] = [];
  for (let i = 0; i < count; i++) out.push(items[Math.floor((i * items.length) / count)] as T);
  return out;
}

function asciiPrefix(cacheDir: string): string[] {
  const src = readFileSync(join(npmRelease(ASCII_SOURCE.name, ASCII_SOURCE.version, cacheDir), ASCII_SOURCE.file), 'utf8');
  return src.split('\n').filter((l) => !NON_ASCII.test(l));
}

/** The first lines of `lines` making at least `bytes` bytes. */
function takeBytes(lines: readonly string[], bytes: number): string {
  let n = 0;
  const out: string[] = [];
  for (const l of lines) {
    if (n >= bytes) break;
    out.push(l);
    n += l.length + 1;
  }
  return `${out.join('\n')}\n`;
}

const utf8 = new TextEncoder();
const lossy = new TextDecoder();

const concat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

/** The three kinds of damage UTF-8 files really carry. */
function damaged(text: string, paste: string): { kind: string; bytes: Uint8Array }[] {
  const lines = text.split('\n');
  const mid = Math.floor(lines.length / 2);
  const out: { kind: string; bytes: Uint8Array }[] = [];
  // A stray 0xFF in the middle of a line.
  const stray = lines.slice();
  const line = stray[mid] ?? '';
  const cut = Math.floor(line.length / 2);
  out.push({
    kind: 'stray-ff',
    bytes: concat(
      utf8.encode([...stray.slice(0, mid), line.slice(0, cut)].join('\n')),
      Uint8Array.of(0xff),
      utf8.encode([line.slice(cut), ...stray.slice(mid + 1)].join('\n')),
    ),
  });
  // One line pasted from a windows-1252 file.
  out.push({
    kind: 'pasted-1252',
    bytes: concat(utf8.encode(`${lines.slice(0, mid).join('\n')}\n`), encodeText(`${paste}\n`, 'windows-1252'), utf8.encode(lines.slice(mid).join('\n'))),
  });
  // Cut inside the last multi-byte character.
  const whole = utf8.encode(text.trimEnd());
  let end = whole.byteLength;
  while (end > 0 && (whole[end - 1] as number) < 0x80) end--;
  if (end > 0) {
    let start = end - 1;
    while (start > 0 && ((whole[start] as number) & 0xc0) === 0x80) start--;
    if (end - start > 1) out.push({ kind: 'truncated', bytes: whole.slice(0, end - 1) });
  }
  return out;
}

/** The windows-1252 lines pasted into damaged UTF-8 files: French and German strings of the corpus. */
function pastedLines(docs: readonly Doc[]): string[] {
  const out: string[] = [];
  for (const d of docs) {
    if (d.locale !== 'fr' && d.locale !== 'de') continue;
    for (const f of fragmentsOf(d.text)) if (holds(f, 'windows-1252') && /[\u00c0-\u00ff]/.test(f)) out.push(f);
  }
  return out.length > 0 ? out : ['Déjà vu: à côté du café, über die Straße.'];
}

interface Doc {
  readonly source: string;
  readonly locale: string;
  readonly text: string;
}

function documents(sources: readonly CorpusSource[], cacheDir: string): Doc[] {
  const docs: Doc[] = [];
  for (const s of sources) {
    const dir = join(npmRelease(s.name, s.version, cacheDir), s.dir);
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith(s.suffix)) continue;
      const text = readFileSync(join(dir, f), 'utf8');
      if (!NON_ASCII.test(text)) continue;
      docs.push({ source: `${s.name}@${s.version}`, locale: f.slice(0, -s.suffix.length), text });
    }
  }
  return docs;
}

/**
 * Builds the corpus (downloading what is not cached). Deterministic for the
 * same sources and options.
 *
 * @example
 * ```ts
 * const cases = buildEncodingCorpus({ sources: CI_SOURCES });
 * for (const c of cases) expect(decode(c.bytes)).toBe(c.text);
 * ```
 */
export function buildEncodingCorpus(options: CorpusOptions = {}): EncodingCase[] {
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE;
  const perDoc = options.fragmentsPerDocument ?? 3;
  const docs = documents(options.sources ?? CORPUS_SOURCES, cacheDir);
  const ascii = asciiPrefix(cacheDir);
  const shortPrefix = takeBytes(ascii, 12 * 1024);
  const longPrefix = takeBytes(ascii, 80 * 1024);
  const pastes = pastedLines(docs);
  const cases: EncodingCase[] = [];
  let n = 0;
  for (const d of docs) {
    const base = `${d.source}/${d.locale}`;
    const add = (cls: CaseClass, encoding: string, text: string, bytes: Uint8Array, suffix = '') =>
      cases.push({ id: `${base}/${encoding}/${cls}${suffix}`, cls, source: d.source, locale: d.locale, encoding, bytes, text });
    // Unicode controls.
    add('unicode', 'utf-8', d.text, utf8.encode(d.text));
    add('unicode', 'utf-8', d.text, concat(Uint8Array.of(0xef, 0xbb, 0xbf), utf8.encode(d.text)), '/bom');
    add('unicode', 'utf-16le', d.text, concat(Uint8Array.of(0xff, 0xfe), encodeText(d.text, 'utf-16le')), '/bom');
    add('unicode', 'utf-16le', d.text, encodeText(d.text, 'utf-16le'));
    add('unicode', 'utf-16be', d.text, iconvUtf16be(d.text));
    for (const dmg of damaged(d.text, pastes[n++ % pastes.length] as string)) add('utf8-damaged', 'utf-8', lossy.decode(dmg.bytes), dmg.bytes, `/${dmg.kind}`);
    for (const encoding of LEGACY_BY_LOCALE[d.locale] ?? []) {
      const text = representable(d.text, encoding);
      if (text === undefined) continue;
      add('file', encoding, text, encodeIn(text, encoding));
      const prefix = n++ % 2 === 0 ? shortPrefix : longPrefix;
      add('late', encoding, prefix + text, encodeIn(prefix + text, encoding));
      spread(fragmentsOf(text), perDoc).forEach((f, i) => {
        add('fragment', encoding, f, encodeIn(f, encoding), `/${i}`);
      });
    }
  }
  return cases;
}

function iconvUtf16be(text: string): Uint8Array {
  const le = encodeText(text, 'utf-16le');
  const be = new Uint8Array(le.byteLength);
  for (let i = 0; i + 1 < le.byteLength; i += 2) {
    be[i] = le[i + 1] as number;
    be[i + 1] = le[i] as number;
  }
  return be;
}
