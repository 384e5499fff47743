/**
 * Scripts over files that are not UTF-8: CKEditor 5's real gettext
 * catalogues (ckeditor5-table 39.0.0) stored as KOI8-R, windows-1251,
 * Shift_JIS, latin-1 and UTF-16 with a BOM, and a UTF-8 one with a stray
 * invalid byte. `sed -i 's/a/b/'` read each as UTF-8 and wrote every byte
 * that is not UTF-8 back as U+FFFD (EF BF BD), lines it never touched
 * included. Now bytes the command did not change stay as they were (as
 * GNU sed leaves them), a legacy file is edited as its text in its own
 * encoding (as bash run under that file's locale edits it), and text the
 * encoding cannot hold is refused with nothing written. On memory, host
 * and container, and against /bin/bash on an identical tree.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { concatBytes, decodeLikeReader, encodeText, type Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, describe, expect, it } from 'vitest';
import { npmRelease } from '../../host/test/support/encoding-corpus.ts';
import { CtxfsBash } from '../src/index.ts';
import { useBackends } from './backends.ts';

const CATALOGUES = join(npmRelease('@ckeditor/ckeditor5-table', '39.0.0'), 'lang/translations');

/** A catalogue's lines that `encoding` holds (all of these, in practice), as the translators wrote them. */
function catalogue(locale: string, encoding: string): string {
  const text = readFileSync(join(CATALOGUES, `${locale}.po`), 'utf8');
  return text
    .split('\n')
    .filter((line) => decodeLikeReader(encodeText(line, encoding), encoding) === line)
    .join('\n');
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The German catalogue as UTF-8 with one stray 0xFF in the middle of its header's first line. */
function damagedUtf8(): Uint8Array {
  const text = catalogue('de', 'utf-8');
  const at = text.indexOf('Language: de') + 'Language'.length;
  return concatBytes([utf8(text.slice(0, at)), Uint8Array.of(0xff), utf8(text.slice(at))]);
}

interface Sample {
  readonly path: string;
  /** The encoding its text is stored in. */
  readonly encoding: string;
  readonly bytes: Uint8Array;
  /** A translation in it, and another the encoding holds too. */
  readonly from: string;
  readonly to: string;
}

/** The catalogue of `locale` stored in `encoding` at `path`, after `bom`. */
function stored(path: string, locale: string, encoding: string, from: string, to: string, bom = new Uint8Array()): Sample {
  return { path, encoding, bytes: concatBytes([bom, encodeText(catalogue(locale, encoding), encoding)]), from, to };
}

const SAMPLES: readonly Sample[] = [
  stored('po/ru-koi8.po', 'ru', 'koi8-r', 'Вставить таблицу', 'Вставка таблицы'),
  stored('po/ru-1251.po', 'ru', 'windows-1251', 'Вставить таблицу', 'Вставка таблицы'),
  // Not 表 (0x95 0x5C): bash under the C locale would read its trail byte as a backslash of the script.
  stored('po/ja.po', 'ja', 'shift_jis', '左に列を挿入', '左側に列を挿入'),
  stored('po/fr.po', 'fr', 'iso-8859-1', 'Insérer un tableau', 'Insérer une table'),
  { path: 'po/de.po', encoding: 'utf-8', bytes: damagedUtf8(), from: 'Tabelle einfügen', to: 'Tabelle hinzufügen' },
  stored('po/ko.po', 'ko', 'utf-16le', '표 삽입', '표 넣기', Uint8Array.of(0xff, 0xfe)),
];

/** Those GNU sed edits as bytes, in an ASCII-compatible encoding. */
const BYTE_SAMPLES = SAMPLES.filter((s) => s.encoding !== 'utf-16le');

/** `bytes` with every occurrence of `from` replaced by `to`, byte for byte. */
function replaced(bytes: Uint8Array, from: Uint8Array, to: Uint8Array): Uint8Array {
  const buf = Buffer.from(bytes);
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = buf.indexOf(from); i >= 0; i = buf.indexOf(from, start)) {
    parts.push(buf.subarray(start, i), to);
    start = i + from.byteLength;
  }
  parts.push(buf.subarray(start));
  return concatBytes(parts);
}

/** The sample with `from` changed to `to` in its own encoding. */
const edited = (s: Sample, from: string, to: string): Uint8Array => replaced(s.bytes, encodeText(from, s.encoding), encodeText(to, s.encoding));

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Writes every sample into `fs`, as bytes. */
async function plant(fs: Filesystem): Promise<void> {
  for (const s of SAMPLES) await fs.writeBytes(s.path, s.bytes, { createParents: true });
}

const ASCII_EDIT = 'sed -i \'s/msgid "Insert table"/msgid "Insert a table"/\'';

const { BACKENDS, open: openOn } = useBackends('enc');

describe.each(Object.keys(BACKENDS))('files not in UTF-8 through CtxfsBash on %s', { timeout: 60_000 }, (name) => {
  const open = openOn(name);

  it('sed -i of ASCII text changes those bytes only: every other byte of each file stays as it was', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const r = await new CtxfsBash(ctx).exec(`${ASCII_EDIT} ${SAMPLES.map((s) => s.path).join(' ')}`);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    for (const s of SAMPLES) expect(hex(await fs.readBytes(s.path)), s.path).toBe(hex(edited(s, 'msgid "Insert table"', 'msgid "Insert a table"')));
  });

  it('sed -i edits translated text in the file’s own encoding, as bash under that locale does', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const bash = new CtxfsBash(ctx);
    for (const s of SAMPLES) {
      const r = await bash.exec(`sed -i 's/${s.from}/${s.to}/' ${s.path}`);
      expect(r.stderr, s.path).toBe('');
      expect(r.exitCode, s.path).toBe(0);
      expect(hex(await fs.readBytes(s.path)), s.path).toBe(hex(edited(s, s.from, s.to)));
    }
  });

  it('text the file’s encoding cannot hold is refused, and nothing is written or recorded', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const bash = new CtxfsBash(ctx);
    const [koi8] = SAMPLES as [Sample];
    // just-bash's sed prints any failed write as a missing file; the write's own words reach a redirection.
    const sed = await bash.exec(`sed -i 's/Вставить/表/' ${koi8.path}`);
    expect(sed.exitCode).toBe(1);
    expect(sed.changes).toEqual([]);
    const append = await bash.exec(`echo 'msgstr "表"' >> ${koi8.path}`);
    expect(append.exitCode).toBe(1);
    expect(append.stderr).toContain(`EINVAL: invalid argument, write '/${koi8.path}'`);
    expect(append.stderr).toContain('is stored as koi8-r, which has no "表" (U+8868');
    expect(append.stderr).toContain('Nothing was written');
    expect(append.changes).toEqual([]);
    expect(hex(await fs.readBytes(koi8.path))).toBe(hex(koi8.bytes));
  });

  it('>> adds text in the file’s own encoding; ASCII as its bytes', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const line = 'msgstr "Удалить столбец"\n';
    const [koi8, cp1251, ja] = SAMPLES as [Sample, Sample, Sample];
    const r = await new CtxfsBash(ctx).exec(
      `echo '${line.trim()}' >> ${koi8.path}; printf '%s\\n' '${line.trim()}' >> ${cp1251.path}; echo '# end' >> ${ja.path}`,
    );
    expect(r.stderr).toBe('');
    expect(hex(await fs.readBytes(koi8.path))).toBe(hex(concatBytes([koi8.bytes, encodeText(line, 'koi8-r')])));
    expect(hex(await fs.readBytes(cp1251.path))).toBe(hex(concatBytes([cp1251.bytes, encodeText(line, 'windows-1251')])));
    expect(hex(await fs.readBytes(ja.path))).toBe(hex(concatBytes([ja.bytes, utf8('# end\n')])));
  });

  it('a UTF-8 file with a byte-order mark, or in two encodings, keeps every byte sed -i did not change', async () => {
    const { fs, ctx } = await open({});
    const de = utf8(catalogue('de', 'utf-8'));
    // A windows-1252 line pasted into a UTF-8 catalogue: the file is UTF-8 with damage, its 0xFC stays 0xFC.
    const pasted = concatBytes([de, encodeText('msgstr "Spalte einfügen"\n', 'windows-1252')]);
    await fs.writeBytes('bom.po', concatBytes([Uint8Array.of(0xef, 0xbb, 0xbf), de]));
    await fs.writeBytes('pasted.po', pasted);
    const r = await new CtxfsBash(ctx).exec(`${ASCII_EDIT} bom.po pasted.po`);
    expect(r.exitCode, r.stderr).toBe(0);
    const change = (b: Uint8Array): Uint8Array => replaced(b, utf8('msgid "Insert table"'), utf8('msgid "Insert a table"'));
    expect(hex(await fs.readBytes('bom.po'))).toBe(hex(concatBytes([Uint8Array.of(0xef, 0xbb, 0xbf), change(de)])));
    expect(hex(await fs.readBytes('pasted.po'))).toBe(hex(change(pasted)));
  });

  it('sort -o of a file over itself keeps each line’s bytes', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const r = await new CtxfsBash(ctx).exec(BYTE_SAMPLES.map((s) => `sort -o ${s.path} ${s.path}`).join('; '));
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = (b: Uint8Array): string[] => Buffer.from(b).toString('latin1').split('\n').sort();
    for (const s of BYTE_SAMPLES) expect(lines(await fs.readBytes(s.path)), s.path).toEqual(lines(s.bytes));
  });

  it('grep and awk read the translations as text', async () => {
    const { fs, ctx } = await open({});
    await plant(fs);
    const r = await new CtxfsBash(ctx).exec("grep -c 'Вставить' po/ru-koi8.po po/ru-1251.po; awk '/挿入/ { n++ } END { print n }' po/ja.po");
    const count = (s: string, text: string): number => s.split('\n').filter((l) => l.includes(text)).length;
    const ru = catalogue('ru', 'koi8-r');
    expect(r.stdout).toBe(
      `po/ru-koi8.po:${count(ru, 'Вставить')}\npo/ru-1251.po:${count(catalogue('ru', 'windows-1251'), 'Вставить')}\n${count(catalogue('ja', 'shift_jis'), '挿入')}\n`,
    );
    expect(count(ru, 'Вставить')).toBeGreaterThan(3);
  });
});

describe('CtxfsBash on files not in UTF-8 leaves the tree /bin/bash leaves', { timeout: 60_000 }, () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  const tree = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-legacy-bash-'));
    made.push(dir);
    for (const s of BYTE_SAMPLES) {
      mkdirSync(join(dir, 'po'), { recursive: true });
      writeFileSync(join(dir, s.path), s.bytes);
    }
    return dir;
  };
  const picture = (dir: string): Record<string, string> =>
    Object.fromEntries(readdirSync(join(dir, 'po')).map((f) => [f, readFileSync(join(dir, 'po', f)).toString('hex')]));

  /** Runs `script` with CtxfsBash on the host backend over a fresh tree, and with /bin/bash, stored in `encoding` under `locale`, on another. */
  async function both(script: string, encoding: string, locale: string): Promise<{ ours: string; real: string }> {
    const real = tree();
    const ours = tree();
    const file = join(mkdtempSync(join(tmpdir(), 'ctxfs-legacy-script-')), 'script.sh');
    made.push(join(file, '..'));
    writeFileSync(file, encodeText(script, encoding));
    const bash = spawnSync('/bin/bash', [file], { cwd: real, env: { PATH: '/usr/bin:/bin', LC_ALL: locale, HOME: '/' } });
    expect(bash.status, String(bash.stderr)).toBe(0);
    const fs = new HostFilesystem({ root: ours });
    const ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
    try {
      const r = await new CtxfsBash(ctx).exec(script);
      expect(r.exitCode, r.stderr).toBe(0);
    } finally {
      await ctx.close();
      await fs.close();
    }
    return { ours, real };
  }

  it('sed -i of ASCII text: every byte the same as GNU sed leaves it (C.UTF-8)', async () => {
    const { ours, real } = await both(`${ASCII_EDIT} ${BYTE_SAMPLES.map((s) => s.path).join(' ')}`, 'utf-8', 'C.UTF-8');
    expect(picture(ours)).toEqual(picture(real));
  });

  it('sort -o of a file over itself writes the lines it sorted as their bytes, as GNU sort (C) does', async () => {
    // just-bash's sort takes bytes that are not UTF-8 as latin-1 characters; they go back as those bytes. Its order
    // is its own (it puts "à droite" before "au centre"), so each file's lines are compared as a set.
    const files = BYTE_SAMPLES.filter((s) => s.encoding !== 'utf-8').map((s) => s.path);
    const { ours, real } = await both(files.map((f) => `sort -o ${f} ${f}`).join('; '), 'utf-8', 'C');
    const lines = (dir: string): string[][] => files.map((f) => readFileSync(join(dir, f)).toString('latin1').split('\n').sort());
    expect(lines(ours)).toEqual(lines(real));
  });

  it.each(BYTE_SAMPLES.map((s) => [s.path, s] as const))(
    'sed -i of translated text in %s: the same as bash with the script in the file’s encoding',
    async (_, s) => {
      // The C locale compares bytes, as the file's own single-byte locale does for a literal; GNU sed under C.UTF-8 reads the damaged UTF-8 file.
      const locale = s.encoding === 'utf-8' ? 'C.UTF-8' : 'C';
      const { ours, real } = await both(`sed -i 's/${s.from}/${s.to}/' ${s.path}`, s.encoding, locale);
      expect(picture(ours)).toEqual(picture(real));
      expect(picture(ours)[s.path.slice(3)]).toBe(hex(edited(s, s.from, s.to)));
    },
  );
});
