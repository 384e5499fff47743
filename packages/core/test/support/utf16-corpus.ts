/**
 * A corpus for telling BOM-less UTF-16 from binary data, built at test time
 * from material nobody here wrote:
 *
 * - text: TypeScript 5.9.3's translated diagnostics (13 languages, Latin,
 *   Cyrillic and CJK scripts; from the npm registry through
 *   {@link npmPackage}), encoded UTF-16LE and UTF-16BE without BOM, as whole
 *   files (8 KiB heads), as single messages ending a line and as fragments
 *   of 4 to 40 code units;
 * - binary: the first 4 MB of the running Node's executable (so they vary
 *   with the platform), WebAssembly (web-tree-sitter), a GIF
 *   (retry) and an icon (pino) from npm, an SQLite database written by
 *   `node:sqlite`, gzip of the translations, the translations in BOM-less
 *   UTF-32, digests, and counting sequences of 8-, 16- and 32-bit integers
 *   (the 14-byte run 00 01 … 0D among them); each whole (8 KiB head) and as
 *   short windows of 2 to 17 bytes, odd lengths included.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { npmPackage } from './npm-package.ts';

export type Expected = 'utf-16le' | 'utf-16be' | 'binary';

export interface CorpusCase {
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly expected: Expected;
}

export const TYPESCRIPT = 'typescript@5.9.3';
const LANGUAGES = ['cs', 'de', 'es', 'fr', 'it', 'ja', 'ko', 'pl', 'pt-br', 'ru', 'tr', 'zh-cn', 'zh-tw'];
export const SAMPLE = 8192;
/** Window lengths for short binary files: every length from 2 to 17, odd ones included. */
const SHORT_LENGTHS = Array.from({ length: 16 }, (_, i) => i + 2);

export function utf16(text: string, order: 'le' | 'be'): Uint8Array {
  const le = Buffer.from(text, 'utf16le');
  return new Uint8Array(order === 'le' ? le : Buffer.from(le).swap16());
}

/** The text of each translation file, and its messages. */
export function translations(): Array<{ language: string; file: string; messages: string[] }> {
  const root = npmPackage(TYPESCRIPT);
  return LANGUAGES.map((language) => {
    const file = readFileSync(join(root, 'lib', language, 'diagnosticMessages.generated.json'), 'utf8');
    return { language, file, messages: Object.values(JSON.parse(file) as Record<string, string>) };
  });
}

/** UTF-16 text without BOM, whole and short. */
export function utf16Texts(): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const { language, file, messages } of translations()) {
    for (const order of ['le', 'be'] as const) {
      const expected = `utf-16${order}` as const;
      cases.push({ id: `${language} file ${order}`, bytes: utf16(file, order).subarray(0, SAMPLE), expected });
      // Short files: a message or two, cut to a few code units (at least four,
      // the fewest the detector will call text) and as written, with a line end.
      const picked = messages.filter((_, i) => i % 97 === 0).slice(0, 12);
      picked.forEach((m, k) => {
        for (const units of [4, 5, 7, 9, 13, 20])
          cases.push({ id: `${language} msg${k} ${units}u ${order}`, bytes: utf16(m.slice(0, units), order), expected });
        cases.push({ id: `${language} msg${k} line ${order}`, bytes: utf16(`${m}\r\n`, order), expected });
        const next = picked[(k + 1) % picked.length] as string;
        cases.push({ id: `${language} msg${k} two lines ${order}`, bytes: utf16(`${m}\n${next}\n`.slice(0, 40), order), expected });
      });
    }
  }
  return cases;
}

/** A whole file's head and short windows at spread offsets. */
function windows(name: string, data: Uint8Array, offsets = 24): CorpusCase[] {
  const cases: CorpusCase[] = [{ id: `${name} head`, bytes: data.subarray(0, SAMPLE), expected: 'binary' }];
  for (let k = 0; k < offsets; k++) {
    const at = Math.floor((k * Math.max(0, data.length - 64)) / offsets);
    cases.push({ id: `${name} @${at} 8K`, bytes: data.subarray(at, at + SAMPLE), expected: 'binary' });
    for (const n of SHORT_LENGTHS) cases.push({ id: `${name} @${at} ${n}B`, bytes: data.subarray(at, at + n), expected: 'binary' });
  }
  return cases;
}

/** A slice of Node's executable: machine code, tables and data of a real build. */
export function executable(): Uint8Array {
  const fd = openSync(process.execPath, 'r');
  try {
    const out = new Uint8Array(4 * 1024 * 1024);
    const n = readSync(fd, out, 0, out.length, 0);
    return out.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export async function sqliteFile(texts: string[]): Promise<Uint8Array> {
  const { DatabaseSync } = await import('node:sqlite');
  const file = join(tmpdir(), `ctxfs-utf16-corpus-${process.pid}.db`);
  rmSync(file, { force: true });
  const db = new DatabaseSync(file);
  try {
    db.exec('CREATE TABLE message (id INTEGER PRIMARY KEY, code INTEGER, text TEXT)');
    const insert = db.prepare('INSERT INTO message (code, text) VALUES (?, ?)');
    for (const [i, t] of texts.slice(0, 400).entries()) insert.run(1000 + i, t);
  } finally {
    db.close();
  }
  const bytes = new Uint8Array(readFileSync(file));
  rmSync(file, { force: true });
  return bytes;
}

/** Counting sequences: 00 01 02 …, and 16- and 32-bit integers counting up from several starts. */
function counting(): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const n of [...SHORT_LENGTHS, 32, 64, 256]) {
    for (const start of [0, 1, 0x20, 0x41, 0x80]) {
      cases.push({ id: `count8 from ${start} ${n}B`, bytes: Uint8Array.from({ length: n }, (_, i) => (start + i) & 0xff), expected: 'binary' });
    }
    for (const start of [0, 1, 9, 0x100, 0x1000]) {
      const le = new Uint8Array(n);
      const be = new Uint8Array(n);
      const le32 = new Uint8Array(n);
      for (let i = 0; i + 1 < n; i += 2) {
        const v = (start + i / 2) & 0xffff;
        le[i] = v & 0xff;
        le[i + 1] = v >> 8;
        be[i] = v >> 8;
        be[i + 1] = v & 0xff;
      }
      for (let i = 0; i + 3 < n; i += 4) le32.set([(start + i / 4) & 0xff, ((start + i / 4) >> 8) & 0xff, 0, 0], i);
      cases.push({ id: `count16le from ${start} ${n}B`, bytes: le, expected: 'binary' });
      cases.push({ id: `count16be from ${start} ${n}B`, bytes: be, expected: 'binary' });
      cases.push({ id: `count32le from ${start} ${n}B`, bytes: le32, expected: 'binary' });
    }
  }
  return cases;
}

/** Binary data of many kinds, whole and in short windows. */
export async function binaries(): Promise<CorpusCase[]> {
  const texts = translations();
  const all = texts.map((t) => t.file).join('\n');
  const wasm = new Uint8Array(readFileSync(join(npmPackage('web-tree-sitter@0.27.1'), 'web-tree-sitter.wasm')));
  const gif = new Uint8Array(readFileSync(join(npmPackage('retry@0.12.0'), 'equation.gif')));
  const ico = new Uint8Array(readFileSync(join(npmPackage('pino@9.14.0'), 'favicon.ico')));
  const cases = [
    ...windows('node executable', executable(), 64),
    ...windows('wasm', wasm),
    ...windows('gif', gif, 8),
    ...windows('ico', ico, 8),
    ...windows('sqlite', await sqliteFile(texts.flatMap((t) => t.messages))),
    ...windows('gzip', new Uint8Array(gzipSync(all))),
    ...counting(),
  ];
  for (const { language, file } of texts) {
    for (const order of ['le', 'be'] as const) {
      const bytes = new Uint8Array(iconv.encode(file, `utf-32${order}`, { addBOM: false }));
      cases.push(...windows(`${language} utf-32${order}`, bytes, 2).filter((c) => c.bytes.length >= 8));
    }
  }
  for (const n of SHORT_LENGTHS) {
    for (let k = 0; k < 16; k++) {
      const digest = createHash('sha512').update(`${n}:${k}`).digest();
      cases.push({ id: `digest ${k} ${n}B`, bytes: new Uint8Array(digest.subarray(0, n)), expected: 'binary' });
    }
  }
  return cases;
}
