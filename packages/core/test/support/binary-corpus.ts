/**
 * A corpus for telling binary data from text where the bytes say little:
 * files that start with a UTF-16 byte-order mark, and files of a few bytes.
 * Built at test time from material nobody here wrote (see utf16-corpus.ts
 * for most of it), re-encoded but never written by hand:
 *
 * - BOM'd binary: every place in Node's executable, WebAssembly, a GIF, an
 *   icon, a PNG, an SQLite file and gzip where the bytes `FF FE` or `FE FF`
 *   stand, taken from there as a file of 4 bytes to 8 KiB;
 * - BOM'd text: TypeScript's translations in UTF-16LE/BE with a BOM, whole,
 *   as messages and as fragments of 1 to 20 code units (CJK alone
 *   included); a licence with form feeds, `.editorconfig` files (the
 *   `[section]` and `key = value` lines of a Windows .reg or .ini file);
 * - short binary: windows of 2 to 17 bytes of the binaries of
 *   utf16-corpus.ts and of a PNG, split into those whose bytes are printable
 *   text (the string tables of an executable, the rows of an SQLite file:
 *   the same bytes as a text file holding them) and the rest;
 * - short text: pieces of 2 to 40 characters of TypeScript's translations
 *   in UTF-8 and each legacy encoding of their script, and of its English
 *   declaration files in ASCII.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { npmPackage } from './npm-package.ts';
import { binaries, executable, SAMPLE, sqliteFile, TYPESCRIPT, translations, utf16 } from './utf16-corpus.ts';

export interface Case {
  readonly id: string;
  readonly bytes: Uint8Array;
  /** What the file is: a class of binary data, or the text it holds. */
  readonly kind: 'binary' | 'printable-binary' | 'text';
  /** The encoding of a text case. */
  readonly encoding?: string;
}

const WINDOW_LENGTHS = [4, 5, 6, 8, 11, 12, 17, 32, 64, 256, SAMPLE];

/** Real binary files, whole. */
async function binaryFiles(): Promise<Array<[string, Uint8Array]>> {
  const texts = translations();
  const read = (spec: string, file: string) => new Uint8Array(readFileSync(join(npmPackage(spec), file)));
  return [
    ['node executable', executable()],
    ['wasm', read('web-tree-sitter@0.27.1', 'web-tree-sitter.wasm')],
    ['gif', read('retry@0.12.0', 'equation.gif')],
    ['ico', read('pino@9.14.0', 'favicon.ico')],
    ['png', read('pino@9.14.0', 'pino-tree.png')],
    ['sqlite', await sqliteFile(texts.flatMap((t) => t.messages))],
    ['gzip', new Uint8Array(gzipSync(texts.map((t) => t.file).join('\n')))],
  ];
}

/** Binary data that starts with the bytes of a UTF-16 byte-order mark. */
export async function bomBinaries(): Promise<Case[]> {
  const cases: Case[] = [];
  for (const [name, data] of await binaryFiles()) {
    const starts: number[] = [];
    for (let i = 0; i + 1 < data.length; i++) {
      if ((data[i] === 0xff && data[i + 1] === 0xfe) || (data[i] === 0xfe && data[i + 1] === 0xff)) starts.push(i);
    }
    // At most 40 places a file, spread over it: the executable has thousands.
    const step = Math.max(1, Math.floor(starts.length / 40));
    for (let k = 0; k < starts.length; k += step) {
      const at = starts[k] as number;
      for (const n of WINDOW_LENGTHS) {
        if (at + n > data.length) break;
        cases.push({ id: `${name} @${at} ${n}B`, bytes: data.subarray(at, at + n), kind: 'binary' });
      }
    }
  }
  return cases;
}

/** A licence whose pages a form feed separates, where the system has one. */
function formFeedText(): string | undefined {
  const file = '/usr/share/common-licenses/LGPL-2.1';
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Up to five `.editorconfig` files of the workspace's dependencies: INI lines, as in a .reg file. */
function iniTexts(): string[] {
  const store = join(import.meta.dirname, '..', '..', '..', '..', 'node_modules', '.pnpm');
  const found: string[] = [];
  for (const entry of existsSync(store) ? readdirSync(store).sort() : []) {
    const name = entry.replace(/@[^@]*$/, '').replace(/^@(.*?)\+/, '@$1/');
    const file = join(store, entry, 'node_modules', name, '.editorconfig');
    if (existsSync(file)) found.push(readFileSync(file, 'utf8'));
    if (found.length === 5) break;
  }
  return found;
}

/** UTF-16 text with a byte-order mark, long and short. */
export function bomTexts(): Case[] {
  const cases: Case[] = [];
  const withBom = (text: string, order: 'le' | 'be') => utf16(`\ufeff${text}`, order);
  const es5 = readFileSync(join(npmPackage(TYPESCRIPT), 'lib', 'lib.es5.d.ts'), 'utf8');
  const whole: Array<[string, string]> = [['lib.es5.d.ts', es5.slice(0, SAMPLE)]];
  const licence = formFeedText();
  if (licence !== undefined) whole.push(['LGPL-2.1', licence.slice(0, SAMPLE)]);
  for (const [i, t] of iniTexts().entries()) whole.push([`editorconfig ${i}`, t]);
  for (const { language, file, messages } of translations()) {
    whole.push([`${language} file`, file.slice(0, SAMPLE)]);
    const picked = messages.filter((_, i) => i % 97 === 0).slice(0, 12);
    picked.forEach((m, k) => {
      whole.push([`${language} msg${k} line`, `${m}\r\n`]);
      for (const units of [1, 2, 3, 4, 6, 9, 13, 20]) whole.push([`${language} msg${k} ${units}u`, m.slice(0, units)]);
      // CJK alone: the message's first run without Latin letters or spaces.
      const cjk = /[^\sA-Za-z0-9'"{}.,:;()]{2,}/u.exec(m)?.[0];
      if (cjk !== undefined && /[\p{scx=Han}\p{scx=Hangul}\p{scx=Hiragana}\p{scx=Katakana}]/u.test(cjk))
        whole.push([`${language} msg${k} cjk`, cjk.slice(0, 8)]);
    });
  }
  for (const [id, text] of whole)
    for (const order of ['le', 'be'] as const) cases.push({ id: `${id} ${order}`, bytes: withBom(text, order), kind: 'text', encoding: `utf-16${order}` });
  return cases;
}

/**
 * Tabs, line breaks, form feeds and printable characters in UTF-8, but for
 * a character the window's ends cut: what a text file could hold.
 */
function printable(bytes: Uint8Array): boolean {
  let from = 0;
  while (from < 3 && ((bytes[from] ?? 0) & 0xc0) === 0x80) from++;
  let to = bytes.length;
  for (let k = 1; k <= 3 && to - k >= from; k++) {
    const b = bytes[to - k] as number;
    if (b < 0x80) break;
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      if (k < need) to -= k;
      break;
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(from, to));
  } catch {
    return false;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what text lacks
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f]/.test(text);
}

/** Windows of 2 to 17 bytes of real binary files. */
export async function shortBinaries(): Promise<Case[]> {
  const png = new Uint8Array(readFileSync(join(npmPackage('pino@9.14.0'), 'pino-tree.png')));
  const pngWindows = [];
  for (let k = 0; k < 24; k++) {
    const at = Math.floor((k * (png.length - 64)) / 24);
    for (let n = 2; n <= 17; n++) pngWindows.push({ id: `png @${at} ${n}B`, bytes: png.subarray(at, at + n) });
  }
  const short = [...(await binaries()).filter((c) => / \d+B$/.test(c.id) && c.bytes.length <= 17), ...pngWindows];
  return short.map((c) => ({ id: c.id, bytes: c.bytes, kind: printable(c.bytes) ? 'printable-binary' : 'binary' }));
}

/** The encodings each translation's script is stored in besides UTF-8. */
const LEGACY: Readonly<Record<string, readonly string[]>> = {
  de: ['windows-1252', 'iso-8859-1'],
  es: ['windows-1252', 'iso-8859-1'],
  fr: ['windows-1252', 'iso-8859-1'],
  it: ['windows-1252', 'iso-8859-1'],
  'pt-br': ['windows-1252', 'iso-8859-1'],
  cs: ['windows-1250', 'iso-8859-2'],
  pl: ['windows-1250', 'iso-8859-2'],
  tr: ['windows-1254', 'iso-8859-9'],
  ru: ['windows-1251', 'koi8-r'],
  ja: ['shift_jis', 'euc-jp'],
  ko: ['euc-kr'],
  'zh-cn': ['gb18030'],
  'zh-tw': ['big5'],
};

/** Pieces of 2 to 40 characters of real text: a word, a few words, a line's start. */
function pieces(message: string): string[] {
  const words = message.split(' ');
  const accented = words.findIndex((w) => /[^\x20-\x7e]/.test(w));
  const out = [2, 3, 5, 8, 13, 21, 40].map((n) => message.slice(0, n));
  if (accented >= 0) out.push(words[accented] as string, words.slice(Math.max(0, accented - 1), accented + 2).join(' '));
  return out.filter((p) => p.trim().length > 0);
}

/** Short real text in ASCII, UTF-8 and legacy encodings. */
export function shortTexts(): Case[] {
  const cases: Case[] = [];
  const es5 = readFileSync(join(npmPackage(TYPESCRIPT), 'lib', 'lib.es5.d.ts'), 'utf8').split('\n');
  const lines = es5.filter((l, i) => i % 41 === 0 && l.trim().length > 1).slice(0, 60);
  for (const [k, line] of lines.entries())
    for (const p of pieces(line.trim())) cases.push({ id: `lib.es5 line${k} "${p}"`, bytes: new Uint8Array(Buffer.from(p)), kind: 'text', encoding: 'utf-8' });
  for (const { language, messages } of translations()) {
    const picked = messages.filter((_, i) => i % 97 === 0).slice(0, 12);
    for (const [k, m] of picked.entries()) {
      for (const p of pieces(m)) {
        cases.push({ id: `${language} msg${k} utf-8 "${p}"`, bytes: new Uint8Array(Buffer.from(p)), kind: 'text', encoding: 'utf-8' });
        for (const encoding of LEGACY[language] ?? []) {
          const bytes = new Uint8Array(iconv.encode(p, encoding));
          // Only what the encoding holds: the translators' own text.
          if (iconv.decode(Buffer.from(bytes), encoding) === p) cases.push({ id: `${language} msg${k} ${encoding} "${p}"`, bytes, kind: 'text', encoding });
        }
      }
    }
  }
  return cases;
}
