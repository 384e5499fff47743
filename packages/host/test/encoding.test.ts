import { execFileSync } from 'node:child_process';
import nodeFs from 'node:fs';
import path from 'node:path';
import { collect } from '@ctxfs/conformance';
import { decodeLikeReader, detectTextFormat } from '@ctxfs/core';
import { HostFilesystem, jschardetDetector } from '@ctxfs/host';
import chardet from 'chardet';
import jschardet from 'jschardet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLES } from './fixtures/multilingual.ts';
import { tempWorkspace } from './helpers.ts';

interface Case {
  file: string;
  lang: string;
  encoding: string;
  text: string;
  legacy: boolean;
  crlf: boolean;
}

const ws = tempWorkspace('ctxfs-enc-');
const cases: Case[] = [];
let hfs: HostFilesystem;

function iconv(text: string, to: string): Buffer {
  return execFileSync('iconv', ['-f', 'UTF-8', '-t', to], { input: text });
}

const BOM: Record<string, number[]> = { 'UTF-8': [0xef, 0xbb, 0xbf], 'UTF-16LE': [0xff, 0xfe], 'UTF-16BE': [0xfe, 0xff], 'UTF-32LE': [0xff, 0xfe, 0, 0] };
const UNICODE: ReadonlyArray<readonly [string, string, boolean]> = [
  ['utf-8', 'UTF-8', false],
  ['utf-8-bom', 'UTF-8', true],
  ['utf-16le-bom', 'UTF-16LE', true],
  ['utf-16be-bom', 'UTF-16BE', true],
  ['utf-32le-bom', 'UTF-32LE', true],
  ['utf-16le', 'UTF-16LE', false],
  ['utf-16be', 'UTF-16BE', false],
];
const CRLF_CASES = new Set(['en/utf-8', 'fr/WINDOWS-1252', 'ja/SHIFT_JIS', 'ru/KOI8-R', 'de/utf-16le-bom', 'zh-CN/GB18030', 'el/ISO-8859-7']);

function add(lang: string, name: string, text: string, bytes: Buffer, legacy: boolean, crlf: boolean): void {
  const file = `${lang}/${name}${crlf ? '-crlf' : ''}.txt`;
  nodeFs.mkdirSync(path.join(ws.root, lang), { recursive: true });
  nodeFs.writeFileSync(path.join(ws.root, file), bytes);
  cases.push({ file, lang, encoding: name, text, legacy, crlf });
}

beforeAll(async () => {
  for (const s of SAMPLES) {
    for (const crlf of [false, true]) {
      const text = crlf ? s.text.replaceAll('\n', '\r\n') : s.text;
      for (const [name, enc, bom] of UNICODE) {
        if (crlf && !CRLF_CASES.has(`${s.lang}/${name}`)) continue;
        add(s.lang, name, text, Buffer.concat([Buffer.from(bom ? (BOM[enc] ?? []) : []), iconv(text, enc)]), false, crlf);
      }
      for (const enc of s.legacy) {
        if (crlf && !CRLF_CASES.has(`${s.lang}/${enc}`)) continue;
        add(s.lang, enc, text, iconv(text, enc), true, crlf);
      }
    }
  }
  hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
});

afterAll(async () => {
  await hfs?.close();
  ws.remove();
});

async function readAll(file: string): Promise<{ text: string; encoding: string }> {
  const reader = await hfs.openText(file);
  try {
    return { text: (await collect(reader)).join(''), encoding: reader.encoding };
  } finally {
    await reader.close();
  }
}

function decodeAs(bytes: Uint8Array, label: string | null | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return decodeLikeReader(bytes, label);
  } catch {
    return undefined;
  }
}

describe('encodings: detection on real multilingual text', () => {
  it('builds a corpus of at least 12 encodings', () => {
    const encodings = new Set(cases.map((c) => c.encoding));
    expect(encodings.size).toBeGreaterThanOrEqual(12);
    expect(cases.length).toBeGreaterThan(150);
  });

  it('detects the encoding of at least 99% of the files (text decodes to the original)', async () => {
    const wrong: string[] = [];
    for (const c of cases) {
      const { text } = await readAll(c.file);
      if (text !== c.text) wrong.push(c.file);
    }
    const accuracy = 1 - wrong.length / cases.length;
    console.log(
      `detection: ${cases.length - wrong.length}/${cases.length} files decode to the original text (${(accuracy * 100).toFixed(1)}%); wrong: ${wrong.join(', ') || 'none'}`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(0.99);
  });

  it('the default detector (every backend) finds every whole legacy file, and beats chardet alone on short fragments', () => {
    const legacy = cases.filter((c) => c.legacy && !c.crlf);
    const samples: Array<{ bytes: Buffer; text: string; fragment: boolean }> = [];
    for (const c of legacy) {
      samples.push({ bytes: nodeFs.readFileSync(path.join(ws.root, c.file)), text: c.text, fragment: false });
      for (const line of c.text.split('\n').filter(Boolean)) {
        const fragment = line.split(' ').slice(0, 4).join(' ');
        // Fragments without a non-ASCII byte are not a detection problem.
        if (/[^\p{ASCII}]/u.test(fragment)) samples.push({ bytes: iconv(fragment, c.encoding), text: fragment, fragment: true });
      }
    }
    const detectors: Record<string, (b: Buffer) => string | null | undefined> = {
      chardet: (b) => chardet.detect(b),
      jschardet: (b) => jschardet.detect(b.toString('latin1')).encoding,
      'ctxfs (default)': (b) => detectTextFormat(b).encoding,
      'ctxfs + jschardet': (b) => detectTextFormat(b, { legacyDetector: jschardetDetector }).encoding,
    };
    const score: Record<string, { files: number; fragments: number }> = {};
    for (const [name, detect] of Object.entries(detectors)) {
      const s = { files: 0, fragments: 0 };
      for (const x of samples) if (decodeAs(x.bytes, detect(x.bytes)) === x.text) s[x.fragment ? 'fragments' : 'files']++;
      score[name] = s;
    }
    const fragments = samples.filter((x) => x.fragment).length;
    console.log(
      `legacy detection, ${legacy.length} files / ${fragments} four-word fragments: ${Object.entries(score)
        .map(([k, v]) => `${k} ${v.files}/${v.fragments}`)
        .join(', ')}`,
    );
    // These four-word fragments are few (109); the corpus test (encoding-corpus.test.ts) compares on thousands.
    const ours = score['ctxfs (default)'] as { files: number; fragments: number };
    expect(ours.files).toBe(legacy.length);
    expect(ours.fragments).toBeGreaterThan((score.chardet as { fragments: number }).fragments);
  });
});

describe('encodings: byte-exact round trips', () => {
  it('reading every file and writing the same text back is byte-identical', async () => {
    const broken: string[] = [];
    for (const c of cases) {
      const before = nodeFs.readFileSync(path.join(ws.root, c.file));
      const { text } = await readAll(c.file);
      await hfs.write(c.file, text);
      const after = nodeFs.readFileSync(path.join(ws.root, c.file));
      if (!before.equals(after)) broken.push(c.file);
      nodeFs.writeFileSync(path.join(ws.root, c.file), before);
    }
    expect(broken).toEqual([]);
  });

  it('a CRLF file written back from read() lines keeps CRLF, encoding and BOM', async () => {
    for (const c of cases.filter((x) => x.crlf)) {
      const before = nodeFs.readFileSync(path.join(ws.root, c.file));
      const page = await hfs.read(c.file, { limit: 100_000 });
      await hfs.write(c.file, `${page.text}\n`);
      expect(nodeFs.readFileSync(path.join(ws.root, c.file)).equals(before), c.file).toBe(true);
      nodeFs.writeFileSync(path.join(ws.root, c.file), before);
    }
  });

  it('an edit keeps the encoding: Shift_JIS stays Shift_JIS, UTF-16 keeps its BOM', async () => {
    const sj = cases.find((c) => c.encoding === 'SHIFT_JIS' && !c.crlf) as Case;
    const { text } = await readAll(sj.file);
    await hfs.write(sj.file, text.replace('山田さん', '田中さん'));
    expect(nodeFs.readFileSync(path.join(ws.root, sj.file)).equals(iconv(sj.text.replace('山田さん', '田中さん'), 'SHIFT_JIS'))).toBe(true);
    const u16 = cases.find((c) => c.encoding === 'utf-16be-bom' && c.lang === 'ko') as Case;
    await hfs.write(u16.file, 'new text\n');
    expect(nodeFs.readFileSync(path.join(ws.root, u16.file))).toEqual(Buffer.concat([Buffer.from([0xfe, 0xff]), iconv('new text\n', 'UTF-16BE')]));
  });

  it('a new file is UTF-8 without BOM; an explicit encoding overrides the detected one', async () => {
    await hfs.write('new.txt', 'héllo\n');
    expect(nodeFs.readFileSync(path.join(ws.root, 'new.txt'))).toEqual(Buffer.from('héllo\n'));
    await hfs.write('new.txt', 'héllo\n', { encoding: 'windows-1252' });
    expect(nodeFs.readFileSync(path.join(ws.root, 'new.txt'))).toEqual(Buffer.from([0x68, 0xe9, 0x6c, 0x6c, 0x6f, 0x0a]));
    expect((await hfs.read('new.txt', { encoding: 'windows-1252' })).text).toBe('héllo');
    await hfs.write('new.txt', 'a\nb\n', { encoding: 'utf-16le', bom: true, lineEnding: 'crlf' });
    expect(nodeFs.readFileSync(path.join(ws.root, 'new.txt'))).toEqual(Buffer.from([0xff, 0xfe, 0x61, 0, 0x0d, 0, 0x0a, 0, 0x62, 0, 0x0d, 0, 0x0a, 0]));
  });
});

describe('encodings: bytes that do not decode never become U+FFFD on disk', () => {
  const INVALID = Buffer.concat([
    Buffer.from('valid line one\n'),
    Buffer.from([0x62, 0x61, 0x64, 0xff, 0x0a]), // lone 0xff
    Buffer.from('caf'),
    Buffer.from([0xc3, 0x28, 0x0a]), // broken two-byte sequence
    Buffer.from([0xe2, 0x82, 0x0a]), // truncated three-byte sequence
    Buffer.from([0xc0, 0xaf, 0x0a]), // overlong
    Buffer.from([0xed, 0xa0, 0x80, 0x0a]), // encoded surrogate
    Buffer.from([0xf4, 0x90, 0x80, 0x80, 0x0a]), // above U+10FFFF
    Buffer.from('ünïcödé still fine\n'),
  ]);

  it('invalid UTF-8: read (U+FFFD in the text), write back: identical bytes', async () => {
    nodeFs.writeFileSync(path.join(ws.root, 'invalid.txt'), INVALID);
    const { text } = await readAll('invalid.txt');
    expect(text).toContain('\ufffd');
    await hfs.write('invalid.txt', text);
    expect(nodeFs.readFileSync(path.join(ws.root, 'invalid.txt')).equals(INVALID)).toBe(true);
  });

  it('invalid UTF-8: an edit elsewhere keeps every invalid sequence', async () => {
    nodeFs.writeFileSync(path.join(ws.root, 'invalid.txt'), INVALID);
    const { text } = await readAll('invalid.txt');
    await hfs.write('invalid.txt', text.replace('valid line one', 'EDITED first line').replace('still fine', 'changed too'));
    const expected = Buffer.from(INVALID.toString('latin1').replace('valid line one', 'EDITED first line').replace('still fine', 'changed too'), 'latin1');
    const after = nodeFs.readFileSync(path.join(ws.root, 'invalid.txt'));
    expect(after.equals(expected)).toBe(true);
    expect(after.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false);
  });

  it("windows-1252's five undefined bytes survive a round trip", async () => {
    const bytes = Buffer.concat([iconv(SAMPLES[1]?.text ?? '', 'WINDOWS-1252'), Buffer.from([0x81, 0x20, 0x8d, 0x20, 0x8f, 0x20, 0x90, 0x20, 0x9d, 0x0a])]);
    nodeFs.writeFileSync(path.join(ws.root, 'undefined-1252.txt'), bytes);
    const { text, encoding } = await readAll('undefined-1252.txt');
    expect(encoding).toMatch(/1252|8859-1/);
    expect(text).not.toContain('\ufffd');
    await hfs.write('undefined-1252.txt', text);
    expect(nodeFs.readFileSync(path.join(ws.root, 'undefined-1252.txt')).equals(bytes)).toBe(true);
  });

  it('a binary file is EBINARY for text reads, not garbage', async () => {
    nodeFs.writeFileSync(path.join(ws.root, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
    await expect(hfs.read('blob.bin')).rejects.toMatchObject({ code: 'EBINARY', op: 'read', path: 'blob.bin' });
  });
});
