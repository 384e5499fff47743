/**
 * Text reading with `openText`: line splitting (LF, CRLF, mixed, lone CR),
 * BOM detection and stripping, explicit encodings, binary refusal, strict
 * decoding, multibyte characters that straddle chunk boundaries, and
 * `decodeText` reading bytes in hand as `openText` reads the file.
 *
 * @module
 */

import { encodeText, isFsError, splitLines } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext } from '../context.ts';

const enc = new TextEncoder();

function utf16le(s: string, bom = false): Uint8Array {
  const out = new Uint8Array((bom ? 2 : 0) + s.length * 2);
  let at = 0;
  if (bom) {
    out[0] = 0xff;
    out[1] = 0xfe;
    at = 2;
  }
  for (let i = 0; i < s.length; i++, at += 2) {
    const u = s.charCodeAt(i);
    out[at] = u & 0xff;
    out[at + 1] = u >> 8;
  }
  return out;
}

function utf16be(s: string, bom = false): Uint8Array {
  const le = utf16le(s, bom);
  for (let i = 0; i + 1 < le.length; i += 2) {
    const a = le[i] as number;
    le[i] = le[i + 1] as number;
    le[i + 1] = a;
  }
  return le;
}

const withBom = (bytes: Uint8Array) => Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]);

export function textSection(ctx: SuiteContext): void {
  async function linesOf(content: string | Uint8Array, options?: { encoding?: string; fatal?: boolean }): Promise<string[]> {
    const fs = await ctx.make({ files: { 'f.txt': content } });
    await using reader = await fs.openText('f.txt', options);
    return collect(reader.lines());
  }

  it.each([
    ['LF', 'a\nb\nc\n', ['a', 'b', 'c']],
    ['CRLF', 'a\r\nb\r\nc\r\n', ['a', 'b', 'c']],
    ['mixed LF and CRLF', 'a\r\nb\nc\r\nd', ['a', 'b', 'c', 'd']],
    ['no final newline', 'a\nb', ['a', 'b']],
    ['single line without newline', 'only', ['only']],
    ['empty file', '', []],
    ['only a newline', '\n', ['']],
    ['only newlines', '\n\n\n', ['', '', '']],
    ['only CRLFs', '\r\n\r\n', ['', '']],
    ['blank line inside', 'a\n\nb\n', ['a', '', 'b']],
    ['lone CR is not a terminator', 'a\rb\nc', ['a\rb', 'c']],
    ['CR CR LF keeps one CR', 'a\r\r\nb', ['a\r', 'b']],
    ['leading newline', '\nx', ['', 'x']],
    ['whitespace is kept', '  a \t\n\tb  \n', ['  a \t', '\tb  ']],
    ['unicode lines', 'héllo\n世界\n😀 ok\n', ['héllo', '世界', '😀 ok']],
  ] as const)('lines: %s', async (_label, content, expected) => {
    expect(await linesOf(content)).toEqual(expected);
  });

  it('iterating the reader yields the whole text', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'one\ntwo\r\nthree' } });
    await using reader = await fs.openText('f.txt');
    expect((await collect(reader)).join('')).toBe('one\ntwo\r\nthree');
  });

  it('a plain UTF-8 file reports utf-8 and no BOM', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'plain' } });
    await using reader = await fs.openText('f.txt');
    expect(reader.encoding).toBe('utf-8');
    expect(reader.bom).toBe(false);
    expect(reader.path).toBe('f.txt');
  });

  it('an empty file is utf-8 with no lines', async () => {
    const fs = await ctx.make({ files: { 'e.txt': '' } });
    await using reader = await fs.openText('e.txt');
    expect(reader.encoding).toBe('utf-8');
    expect(reader.bom).toBe(false);
    expect(await collect(reader.lines())).toEqual([]);
  });

  it.each([
    ['UTF-8', withBom(enc.encode('héllo\nwörld\n')), 'utf-8'],
    ['UTF-16LE', utf16le('héllo\nwörld\n', true), 'utf-16le'],
    ['UTF-16BE', utf16be('héllo\nwörld\n', true), 'utf-16be'],
  ] as const)('a %s BOM is detected, reported and stripped', async (_label, bytes, encoding) => {
    const fs = await ctx.make({ files: { 'b.txt': bytes } });
    await using reader = await fs.openText('b.txt');
    expect(reader.encoding).toBe(encoding);
    expect(reader.bom).toBe(true);
    const lines = await collect(reader.lines());
    expect(lines).toEqual(['héllo', 'wörld']);
    expect(lines[0]?.charCodeAt(0)).not.toBe(0xfeff);
  });

  it('a BOM-only file is empty text', async () => {
    const fs = await ctx.make({ files: { 'b.txt': Uint8Array.from([0xef, 0xbb, 0xbf]) } });
    await using reader = await fs.openText('b.txt');
    expect(reader.bom).toBe(true);
    expect((await collect(reader)).join('')).toBe('');
  });

  it('an explicit encoding matching the BOM strips it', async () => {
    const fs = await ctx.make({ files: { 'b.txt': utf16le('x\ny', true) } });
    await using reader = await fs.openText('b.txt', { encoding: 'utf-16le' });
    expect(reader.bom).toBe(true);
    expect(await collect(reader.lines())).toEqual(['x', 'y']);
  });

  it('latin1 decodes high bytes as Latin-1 characters', async () => {
    const fs = await ctx.make({ files: { 'l.txt': Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0xfc, 0x62, 0x65, 0x72]) } });
    await using reader = await fs.openText('l.txt', { encoding: 'latin1' });
    expect(reader.bom).toBe(false);
    expect(await collect(reader.lines())).toEqual(['café', 'über']);
  });

  it('utf-16le without a BOM decodes when named', async () => {
    const fs = await ctx.make({ files: { 'u.txt': utf16le('ab\r\ncd') } });
    await using reader = await fs.openText('u.txt', { encoding: 'utf-16le' });
    expect(reader.encoding).toBe('utf-16le');
    expect(reader.bom).toBe(false);
    expect(await collect(reader.lines())).toEqual(['ab', 'cd']);
  });

  it('utf-8 spelled utf8 is accepted', async () => {
    expect(await linesOf('a\nb', { encoding: 'utf8' })).toEqual(['a', 'b']);
  });

  it('an unknown encoding is EINVAL', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'x' } });
    expect(await codeOf(fs.openText('f.txt', { encoding: 'no-such-encoding' }))).toBe('EINVAL');
  });

  it('a binary file is EBINARY with a hint', async () => {
    const fs = await ctx.make({ files: { 'bin.dat': Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x00, 0xff]) } });
    const err = await fs.openText('bin.dat').catch((e: unknown) => e);
    expect(isFsError(err, 'EBINARY')).toBe(true);
    if (isFsError(err)) {
      expect(err.op).toBe('openText');
      expect(err.path).toBe('bin.dat');
      expect(err.hint).toMatch(/readBytes|openRead/);
    }
  });

  it('a NUL late in the detection window still makes a file binary', async () => {
    const bytes = enc.encode(`${'text '.repeat(1000)}\u0000tail`);
    const fs = await ctx.make({ files: { 'late.bin': bytes } });
    expect(await codeOf(fs.openText('late.bin'))).toBe('EBINARY');
  });

  it('a binary file decodes when an encoding is named', async () => {
    const fs = await ctx.make({ files: { 'bin.dat': Uint8Array.from([0x61, 0x00, 0x62]) } });
    await using reader = await fs.openText('bin.dat', { encoding: 'utf-8' });
    expect((await collect(reader)).join('')).toBe('a\u0000b');
  });

  it('fatal: invalid UTF-8 is EDECODE', async () => {
    const fs = await ctx.make({ files: { 'bad.txt': Uint8Array.from([0x61, 0x0a, 0xc3, 0x28, 0x0a]) } });
    const outcome = await (async () => {
      await using reader = await fs.openText('bad.txt', { encoding: 'utf-8', fatal: true });
      return collect(reader.lines());
    })().then(
      () => 'OK',
      (err: unknown) => (isFsError(err) ? err.code : 'non-FsError'),
    );
    expect(outcome).toBe('EDECODE');
  });

  it('fatal: a truncated sequence at end of file is EDECODE', async () => {
    const fs = await ctx.make({ files: { 'cut.txt': Uint8Array.from([0x61, 0xe4, 0xb8]) } });
    const outcome = await (async () => {
      await using reader = await fs.openText('cut.txt', { encoding: 'utf-8', fatal: true });
      return collect(reader);
    })().then(
      () => 'OK',
      (err: unknown) => (isFsError(err) ? err.code : 'non-FsError'),
    );
    expect(outcome).toBe('EDECODE');
  });

  it('without fatal, an invalid byte becomes one replacement character', async () => {
    const lines = await linesOf(Uint8Array.from([0x61, 0xff, 0x62, 0x0a, 0x63]), { encoding: 'utf-8' });
    // U+FFFD per the TextOptions contract, or the lossless escape U+DC00+byte
    // (a backend that round-trips undecodable bytes on edit).
    expect([
      ['a\ufffdb', 'c'],
      ['a\udcffb', 'c'],
    ]).toContainEqual(lines);
  });

  it('multibyte UTF-8 characters split across chunk boundaries decode intact', async () => {
    // 10-byte unit (3 + 4 + 2 + 1): every chunk size in use splits some character.
    const unit = '中😀éx';
    const line = unit.repeat(50);
    const content = `${line}\n`.repeat(400); // ~200 KB, several 64 KiB chunks
    const fs = await ctx.make({ files: { 'mb.txt': content } });
    await using reader = await fs.openText('mb.txt');
    const lines = await collect(reader.lines());
    expect(lines.length).toBe(400);
    expect(lines.every((l) => l === line)).toBe(true);
  });

  it('a large file read as text chunks reassembles exactly', async () => {
    const content = Array.from({ length: 30_000 }, (_, i) => `${i}:${'ü'.repeat(i % 7)}😀`).join('\n');
    const fs = await ctx.make({ files: { 'big.txt': content } });
    await using reader = await fs.openText('big.txt');
    expect((await collect(reader)).join('')).toBe(content);
  });

  it('UTF-16 surrogate pairs split across chunk boundaries decode intact', async () => {
    const line = '😀a中'.repeat(100);
    const content = `${line}\n`.repeat(300);
    const fs = await ctx.make({ files: { 'u16.txt': utf16le(content, true) } });
    await using reader = await fs.openText('u16.txt');
    expect(reader.encoding).toBe('utf-16le');
    const lines = await collect(reader.lines());
    expect(lines.length).toBe(300);
    expect(lines.every((l) => l === line)).toBe(true);
  });

  it('CRLF terminators across chunk boundaries never leave a stray CR', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => 'y'.repeat(i % 13));
    const fs = await ctx.make({ files: { 'crlf.txt': `${lines.join('\r\n')}\r\n` } });
    await using reader = await fs.openText('crlf.txt');
    expect(await collect(reader.lines())).toEqual(lines);
  });

  it.each([
    ['a missing file', 'missing.txt', 'ENOENT'],
    ['a directory', 'dir', 'EISDIR'],
    ['a child of a file', 'f.txt/x', 'ENOTDIR'],
  ])('openText on %s is %s', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'f.txt': 'x' }, dirs: ['dir'] });
    const err = await fs.openText(path).catch((e: unknown) => e);
    expect(isFsError(err, code as 'ENOENT')).toBe(true);
    if (isFsError(err)) expect(err.op).toBe('openText');
  });

  it('close is idempotent and await using closes', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'a\nb' } });
    const reader = await fs.openText('f.txt');
    await reader.close();
    await reader.close();
    {
      await using again = await fs.openText('f.txt');
      expect(await collect(again.lines())).toEqual(['a', 'b']);
    }
  });

  it('stopping early at the first line is fine', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'first\nsecond\nthird\n' } });
    await using reader = await fs.openText('f.txt');
    for await (const line of reader.lines()) {
      expect(line).toBe('first');
      break;
    }
  });

  it('decodeText reads bytes as openText reads the file: Unicode, legacy, late non-ASCII, binary', async () => {
    const ru = 'Псевдоним для %s не найден.\nПроверьте имя.\n';
    const files: Record<string, Uint8Array> = {
      'bom.txt': withBom(enc.encode('héllo\nwörld\n')),
      'u16.txt': utf16be('plain text in UTF-16 big-endian\n'),
      'koi8.txt': encodeText(ru, 'koi8-r'),
      'late.txt': Uint8Array.from([...enc.encode('// ascii\n'.repeat(8000)), ...encodeText(ru, 'windows-1251')]),
    };
    const fs = await ctx.make({ files: { ...files, 'blob.bin': Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d) } });
    for (const path of Object.keys(files)) {
      const bytes = await fs.readBytes(path);
      const decoded = fs.decodeText(bytes, { path });
      await using reader = await fs.openText(path);
      const lines = await collect(reader.lines());
      expect(splitLines(decoded.text), path).toEqual(lines);
      expect(decoded.encoding, path).toBe(reader.encoding);
    }
    expect(fs.decodeText(await fs.readBytes('koi8.txt')).text).toBe(ru);
    expect(fs.decodeText(await fs.readBytes('blob.bin'))).toMatchObject({ binary: true, text: '' });
    expect(await codeOf(fs.openText('blob.bin'))).toBe('EBINARY');
    expect(fs.decodeText(enc.encode('caf\u00e9'), { encoding: 'windows-1252' })).toMatchObject({ text: 'cafÃ©', source: 'explicit' });
  });
}
