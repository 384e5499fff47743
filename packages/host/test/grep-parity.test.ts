import { spawnSync } from 'node:child_process';
import nodeFs from 'node:fs';
import path from 'node:path';
import { collect } from '@ctxfs/conformance';
import { compileGrep, type GrepMatch, type GrepOptions, splitLines } from '@ctxfs/core';
import { findRipgrep, HostFilesystem } from '@ctxfs/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';
import { buildEncodingCorpus, CORPUS_SOURCES, type EncodingCase, npmRelease } from './support/encoding-corpus.ts';

const ws = tempWorkspace('ctxfs-grep-');
let rg: HostFilesystem;
let js: HostFilesystem;
let rgIgn: HostFilesystem;
let jsIgn: HostFilesystem;

beforeAll(async () => {
  const w = (p: string, data: string | Uint8Array) => {
    nodeFs.mkdirSync(path.dirname(path.join(ws.root, p)), { recursive: true });
    nodeFs.writeFileSync(path.join(ws.root, p), data);
  };
  w('a.txt', 'alpha beta\r\nGamma alpha\nlast alpha');
  w('b/c.ts', 'const alpha = 1;\n// TODO: alpha\nfunction beta() {}\n');
  w('b/d/e.md', '# Alpha\n\nαλφα alpha 😀 alpha\n');
  w('bin.dat', Buffer.concat([Buffer.from('alpha\n'), Buffer.from([0, 1, 2]), Buffer.from('alpha\n')]));
  w('late-nul.txt', Buffer.concat([Buffer.from('alpha line\n'.repeat(2000)), Buffer.from([0]), Buffer.from('alpha after\n')]));
  w('utf16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('utf16 alpha\nsecond\n', 'utf16le')]));
  w('bom8.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bom alpha\n')]));
  w('invalid.txt', Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0xff, 0x0a]));
  w('.hidden/h.txt', 'alpha hidden\n');
  w('.dot.txt', 'alpha dot\n');
  w('z/zz/deep.txt', 'x'.repeat(10) + 'alpha'.repeat(3) + '\n');
  w('u/cafe.txt', 'café alpha\nalphaé x\nnaïve\n_alpha1 2024\nnbsp\u00a0alpha\ttab\n');
  w('aa-b.txt', 'alpha order\n');
  w('a/b.txt', 'alpha order2\n');
  w('.git/config', 'alpha in git dir\n');
  w('.gitignore', 'ignored-dir/\n*.log\n!keep.log\n/rooted.txt\n');
  w('ignored-dir/x.txt', 'alpha ignored\n');
  w('b/debug.log', 'alpha log\n');
  w('b/keep.log', 'alpha kept\n');
  w('rooted.txt', 'alpha rooted\n');
  w('b/rooted.txt', 'alpha not rooted\n');
  w('b/d/.gitignore', 'e.md\n');
  // Names that could confuse rg's plain output: a newline splits its lines, a control character, and its binary notice's words.
  w('we\nird.txt', 'alpha in a name with a newline\n');
  w('ctl\u0001dir/f.txt', 'alpha below a name with a control character\n');
  w('odd: binary file matches (x).dat', Buffer.concat([Buffer.from('alpha\n'), Buffer.from([0]), Buffer.from('alpha\n')]));
  w('plain: binary file matches (found "0" byte around offset 1).txt', 'alpha in a text file\n');
  // One line of 2 MB (a minified bundle): rg reports it as one JSON message arriving in many chunks.
  w('long/min.js', `${'var x=1;'.repeat(262_144)}alpha${';'.repeat(1000)}\nalpha after the long line\n`);
  rg = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
  js = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, grep: 'js' });
  rgIgn = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, gitignore: true });
  jsIgn = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, grep: 'js', gitignore: true });
});

afterAll(async () => {
  for (const f of [rg, js, rgIgn, jsIgn]) await f.close();
  ws.remove();
});

// Past the default cap of 1,000 lines, so that the small files late in the walk are compared too.
const ALL: GrepOptions = { maxMatches: 100_000 };

const CASES: Array<[string, GrepOptions]> = [
  ['alpha', {}],
  ['alpha', { dot: true }],
  ['ALPHA', { ignoreCase: true }],
  ['a.p', {}],
  ['alpha$', {}],
  ['^alpha', {}],
  ['(alpha|beta)', {}],
  ['al+pha', { glob: '**/*.ts' }],
  ['alpha', { path: 'b' }],
  ['alpha', { maxMatches: 3 }],
  ['\\w+a\\b', ALL],
  ['\\balpha\\b', ALL], // ASCII word boundaries: rg gets (?-u:\b)
  ['alpha\\B', ALL],
  ['\\W\\w', ALL], // ASCII classes: é is \W here, a word character to Rust
  ['[^\\w ]+', ALL],
  ['\\d{4}|\\D1', ALL],
  ['alpha\\s+\\S', ALL], // Unicode white space, as rg
  ['[[:alpha:]]+a', ALL],
  ['\\u03b1\\x{3bb}', ALL],
  ['(?i)ALPHA', ALL],
  ['\\p{Greek}+', ALL],
  ['\\Qa.b\\E|(?<n>al)pha', ALL], // RE2-only spellings: rg gets plain ones
  ['al.ha$', ALL],
  ['\\Aalpha|alpha\\z', ALL],
  ['x{2,}|{,3}', ALL],
  ['(?<=const )alpha', ALL], // refused by both
  ['(a)\\1', ALL], // refused by both
  ['(?=x)', ALL],
  ['(a+)+$', ALL],
  ['a.b', { literal: true }],
  ['alpha', { literal: true }],
  ['alpha', { literal: true, dot: true, path: 'b' }],
  [' alpha', { literal: true, ignoreCase: true }],
  ['// TODO', { literal: true }],
  ['utf16 alpha', { literal: true }],
  ['😀', {}],
  ['λ', {}],
  ['[ab]l', { ignoreCase: true, dot: true }],
];

describe('grep: ripgrep and the JS scanner agree', () => {
  it.runIf(findRipgrep() !== undefined)('uses ripgrep when it is on PATH', () => {
    expect(rg.capabilities.nativeGrep).toBe(true);
    expect(js.capabilities.nativeGrep).toBe(false);
  });

  for (const [pattern, options] of CASES) {
    it(`${JSON.stringify(pattern)} ${JSON.stringify(options)}`, async () => {
      const a = await outcome(rg, pattern, options);
      const b = await outcome(js, pattern, options);
      expect(a).toEqual(b);
      if (pattern === 'alpha' && Object.keys(options).length === 0) expect(b.length).toBeGreaterThan(5);
    });
  }

  it('a line of 2 MB (one message of rg in many chunks) is found whole, and the line after it', async () => {
    for (const literal of [false, true]) {
      const a = await collect(rg.grep('alpha', { path: 'long', literal }));
      expect(a).toEqual(await collect(js.grep('alpha', { path: 'long', literal })));
      expect(a.map((m) => [m.line, m.text.length, m.matchStart])).toEqual([
        [1, 2_097_152 + 5 + 1000, 2_097_152],
        [2, 'alpha after the long line'.length, 0],
      ]);
    }
  });

  it('names that look like rg output are read right: a newline or control character is never served, the notice words are', async () => {
    for (const literal of [false, true]) {
      const a = await collect(rg.grep('alpha', { literal, maxMatches: 100_000 }));
      expect(a).toEqual(await collect(js.grep('alpha', { literal, maxMatches: 100_000 })));
      const paths = a.map((m) => m.path);
      expect(paths.some((p) => [...p].some((c) => c < ' '))).toBe(false);
      expect(paths.some((p) => p.startsWith('we') || p.startsWith('ctl'))).toBe(false);
      expect(paths).toContain('plain: binary file matches (found "0" byte around offset 1).txt');
      expect(paths).not.toContain('odd: binary file matches (x).dat');
    }
  });

  for (const [pattern, options] of [
    ['alpha', { dot: true }],
    ['alpha', { literal: true, dot: true }],
    ['al.ha', {}],
  ] as Array<[string, GrepOptions]>) {
    it(`with .gitignore: ${JSON.stringify(pattern)} ${JSON.stringify(options)}`, async () => {
      const a = await collect(rgIgn.grep(pattern, options));
      const b = await collect(jsIgn.grep(pattern, options));
      expect(a).toEqual(b);
      const paths = new Set(b.map((m) => m.path));
      for (const gone of ['ignored-dir/x.txt', 'b/debug.log', 'rooted.txt', 'b/d/e.md', '.git/config']) expect(paths.has(gone), gone).toBe(false);
      for (const kept of ['b/keep.log', 'b/rooted.txt', 'a.txt']) expect(paths.has(kept), kept).toBe(true);
    });
  }

  it.runIf(findRipgrep() !== undefined)('this rg takes the Rust rendering of every accepted pattern above (none falls back unseen)', () => {
    const rg = findRipgrep() as string;
    for (const [pattern, options] of CASES) {
      let rust: string | undefined;
      try {
        rust = compileGrep(pattern, options).rustPattern;
      } catch {
        continue; // refused by core, so by both
      }
      expect(rust, pattern).toBeDefined();
      const run = spawnSync(rg, ['--no-config', '--regexp', rust as string, '--', path.join(ws.root, 'a.txt')], { encoding: 'utf8' });
      expect(run.status, `${pattern} → ${rust}: ${run.stderr}`).not.toBe(2);
    }
  });

  it('glob honours .gitignore on request and excludes .git by default', async () => {
    const all = (await collect(js.glob('**', { dot: true }))).map((m) => m.path);
    expect(all).toContain('ignored-dir/x.txt');
    expect(all.some((p) => p.startsWith('.git/') || p === '.git')).toBe(false);
    const ign = (await collect(jsIgn.glob('**', { dot: true }))).map((m) => m.path);
    expect(ign).not.toContain('ignored-dir');
    expect(ign).not.toContain('ignored-dir/x.txt');
    expect(ign).not.toContain('b/debug.log');
    expect(ign).toContain('b/keep.log');
    const everything = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, exclude: [] });
    expect((await collect(everything.glob('.git/*', { dot: true }))).map((m) => m.path)).toEqual(['.git/config']);
    await everything.close();
  });
});

describe('grep: ripgrep and the JS scanner agree on real text in every encoding', () => {
  // A CKEditor 5 catalogue in UTF-8, damaged UTF-8, UTF-16 with and without BOM and every legacy encoding its scripts allow.
  const corpus = tempWorkspace('ctxfs-grep-corpus-');
  let cases: EncodingCase[] = [];
  let rgc: HostFilesystem;
  let jsc: HostFilesystem;

  beforeAll(async () => {
    cases = buildEncodingCorpus({ sources: CORPUS_SOURCES.filter((s) => s.name === '@ckeditor/ckeditor5-table'), fragmentsPerDocument: 1 });
    for (const [i, c] of cases.entries()) nodeFs.writeFileSync(path.join(corpus.root, `${String(i).padStart(4, '0')}-${c.encoding}-${c.cls}.po`), c.bytes);
    rgc = await HostFilesystem.open({ root: corpus.root, stateDir: corpus.state });
    jsc = await HostFilesystem.open({ root: corpus.root, stateDir: corpus.state, grep: 'js' });
  }, 300_000);

  afterAll(async () => {
    await rgc?.close();
    await jsc?.close();
    corpus.remove();
  });

  const CORPUS_CASES: Array<[string, GrepOptions]> = [
    ['\\p{Cyrillic}{4,}', ALL],
    ['\\p{Han}\\p{Han}', ALL],
    ['msgstr "[^"]*[^\\x00-\\x7f]', ALL],
    ['[ąęłńóśźż]', { ignoreCase: true, maxMatches: 100_000 }],
    ['Tabela', { literal: true, maxMatches: 100_000 }],
    // Text outside ASCII: rg is given every line that is not UTF-8 beside it.
    ['и', ALL],
    ['の', { literal: true, maxMatches: 100_000 }],
    ['的|表', ALL],
    ['Ą', { ignoreCase: true, maxMatches: 100_000 }],
    ['msgstr\\s+".{2}\\S', ALL],
    ['msgstr', { maxMatches: 100_000 }],
    ['\\\\', ALL], // a trail byte of Shift_JIS, Big5 or GBK is a backslash to a byte search
  ];

  for (const [pattern, options] of CORPUS_CASES) {
    it(`${JSON.stringify(pattern)} ${JSON.stringify(options)}`, async () => {
      const a = await outcome(rgc, pattern, options);
      expect(a).toEqual(await outcome(jsc, pattern, options));
      expect(Array.isArray(a)).toBe(true);
    }, 120_000);
  }

  it('legacy-encoded files are searched as their text, by rg as by the scanner', async () => {
    const found = new Set((await collect(rgc.grep('\\p{Cyrillic}{4,}', ALL))).map((m) => m.path.split('-').slice(1, -1).join('-')));
    for (const encoding of ['koi8-r', 'koi8-u', 'windows-1251', 'iso-8859-5', 'ibm866']) {
      if (cases.some((c) => c.encoding === encoding)) expect(found, encoding).toContain(encoding);
    }
    const han = new Set((await collect(rgc.grep('\\p{Han}\\p{Han}', ALL))).map((m) => m.path.split('-').slice(1, -1).join('-')));
    for (const encoding of ['shift_jis', 'euc-jp', 'iso-2022-jp', 'gbk', 'gb18030', 'big5']) {
      if (cases.some((c) => c.encoding === encoding)) expect(han, encoding).toContain(encoding);
    }
    // Every line reported holds a backslash in its text, and every such line is reported: a trail byte a byte search sees as one is not.
    const byFile = new Map<string, number[]>();
    for (const m of await collect(rgc.grep('\\\\', ALL))) byFile.set(m.path, [...(byFile.get(m.path) ?? []), m.line]);
    const wrong: string[] = [];
    for (const [i, c] of cases.entries()) {
      if (c.cls !== 'file' && c.cls !== 'late' && c.cls !== 'fragment') continue;
      const expected = splitLines(c.text).flatMap((line, k) => (line.includes('\\') ? [k + 1] : []));
      const name = `${String(i).padStart(4, '0')}-${c.encoding}-${c.cls}.po`;
      if ((byFile.get(name) ?? []).join() !== expected.join()) wrong.push(c.id);
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});

describe('grep: ripgrep and the JS scanner agree on real CRLF files', () => {
  // tslib ships its sources with CRLF line ends: rg reads each line with its CR, the scanner's line ends before it.
  const crlf = tempWorkspace('ctxfs-grep-crlf-');
  const FILES = ['tslib.d.ts', 'tslib.js', 'tslib.es6.js'];
  let texts: string[] = [];
  let rgc: HostFilesystem;
  let jsc: HostFilesystem;

  beforeAll(async () => {
    const pkg = npmRelease('tslib', '2.8.1');
    texts = FILES.map((f) => nodeFs.readFileSync(path.join(pkg, f), 'latin1'));
    for (const [i, f] of FILES.entries()) nodeFs.writeFileSync(path.join(crlf.root, f), texts[i] as string, 'latin1');
    // The same declarations with a CR that is text in some lines (before a comment, and doubled at a line's end), ending in a lone CR.
    const stray = (texts[0] as string).replaceAll(' */\r\n', ' */\r\r\n').replaceAll('(', '\r(').replace(/\r\n$/, '\r');
    nodeFs.writeFileSync(path.join(crlf.root, 'stray.d.ts'), stray, 'latin1');
    rgc = await HostFilesystem.open({ root: crlf.root, stateDir: crlf.state });
    jsc = await HostFilesystem.open({ root: crlf.root, stateDir: crlf.state, grep: 'js' });
  }, 120_000);

  afterAll(async () => {
    await rgc?.close();
    await jsc?.close();
    crlf.remove();
  });

  it('the files are CRLF throughout', () => {
    for (const [i, text] of texts.entries()) {
      const lf = text.split('\n').length - 1;
      expect(lf, FILES[i]).toBeGreaterThan(100);
      expect(text.split('\r\n').length - 1, FILES[i]).toBe(lf);
    }
  });

  for (const pattern of [';$', '\\)\\s*\\{$', '^\\s*$', '\\*/$', '\\s$', '\\W$', '[^;]\\z', '\\r', '\\r$', '\\r\\(', '\\s\\(', '[\\r]\\(', '\\W\\(\\w']) {
    it(JSON.stringify(pattern), async () => {
      const a = await collect(rgc.grep(pattern, ALL));
      expect(a).toEqual(await collect(jsc.grep(pattern, ALL)));
      // Every pattern finds something, in the stray-CR file at least; what it finds never ends in a terminator's CR.
      expect(a.length).toBeGreaterThan(0);
      for (const m of a) if (m.path !== 'stray.d.ts') expect(m.text.endsWith('\r'), `${m.path}:${m.line}`).toBe(false);
    });
  }
});

/** The matches, or the code of the error the search ends with. */
async function outcome(fs: HostFilesystem, pattern: string, options: GrepOptions): Promise<GrepMatch[] | string> {
  try {
    return await collect(fs.grep(pattern, options));
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}
