/**
 * No suggested call escapes the active call style: a surface with its own
 * tool names (the MCP tool set's `read_lines` with JSON arguments) renders
 * every hint through `withCallStyle`, so a call written by hand in the API's
 * spelling would name a call the model does not have there.
 *
 * Under a marker style that writes each call as `⟦op|args|options⟧`, a wide
 * set of small-profile calls on real files — reads over budget, files over
 * the document limit and over the convenience cap, missing files and
 * symbols, capped searches, refused edits, stale edits, undo and rollback
 * with nothing to revert, patches against what is there, the overview of a
 * big README, a policy refusal — must leave no API-style call (`readLines(`,
 * `grep(`, …) outside a marker in any text, `next`, message or thrown
 * error; and each call meant to name one does carry a marker, so the test
 * fails when a probe stops reaching its hint.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFsError } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CallStyle, type ContextLayer, type ContextSession, createContext, withCallStyle } from '../src/index.ts';
import { npmPackage } from './support/npm-package.ts';
import { testState } from './support/test-state.ts';

const MARKER: CallStyle = {
  name: 'marker',
  format: (op, args, options) => `⟦${op}|${JSON.stringify(args)}|${JSON.stringify(options)}⟧`,
};

/** A call in the API's spelling: a session method's name and its opening parenthesis. */
const API_CALL =
  /\b(readLines|readFile|getSymbol|getOutline|getExcerpt|grep|glob|listFiles|findSymbol|summarize|getRelatedFiles|history|rollback|undo|writeFile|createFile|replace|editLines|applyPatch|deleteFile|renameFile|getDiff|checkConflicts|getVersion|overview|scan)\(/g;

const MiB = 1024 * 1024;
/** Set CTXFS_CALL_STYLE_TRACE=1 to print what every probe was told. */
const TRACE = process.env.CTXFS_CALL_STYLE_TRACE === '1';
/** The loader's document limit here: lib.dom.d.ts (1.3 MB) is over it. */
const DOCUMENT_LIMIT = MiB;
/** The backend's convenience cap here: big/huge.log is over it, so an edit of it is refused. */
const CONVENIENCE_CAP = 2 * MiB;

// ------------------------------------------------------------------ corpus

const real = (name: string, version: string, path: string) => readFileSync(join(npmPackage(name, version), path), 'utf8');

const APP = `${Array.from({ length: 30 }, (_, i) => `export const value${i + 1} = ${i + 1};`).join('\n')}\nexport const twice = 'dup';\nexport const again = 'dup';\n`;

function buildFiles(): Record<string, string> {
  const files: Record<string, string> = {
    'README.md': real('eslint', '8.57.0', 'README.md'),
    'package.json': real('semver', '7.6.0', 'package.json'),
    'lib/es5.d.ts': real('typescript', '5.4.5', 'lib/lib.es5.d.ts'),
    'lib/dom.d.ts': real('typescript', '5.4.5', 'lib/lib.dom.d.ts'),
    'src/observable.ts': real('mobx', '6.13.5', 'src/core/observable.ts'),
    'src/observablemap.ts': real('mobx', '6.13.5', 'src/types/observablemap.ts'),
    'py/input.py': real('node-gyp', '10.1.0', 'gyp/pylib/gyp/input.py'),
    'docs/CHANGELOG.md': real('rxjs', '7.8.1', 'CHANGELOG.md'),
    'src/app.ts': APP,
    'src/lines.ts': `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`,
    'src/gone.ts': 'export const gone = 1;\nexport const kept = 2;\n',
    'src/moved.ts': 'export const moved = 1;\n',
    // A doc comment far over the 80 tokens a definition's view keeps of it.
    'src/documented.ts': `/**\n * Retries a call.\n *\n${Array.from({ length: 40 }, (_, i) => ` * Example ${i}: retry(() => fetch("https://example.com/${i}"), { attempts: ${i} }) waits and tries again.`).join('\n')}\n */\nexport function retry(fn: () => unknown): unknown {\n  return fn();\n}\n`,
    // One name defined 50 times: getSymbol serves the first and lists others, past the 40 it names.
    'gen/runners.ts': Array.from({ length: 50 }, (_, i) => `export class Runner${i} {\n  run(): number {\n    return ${i};\n  }\n}\n`).join(''),
    'gen/hub.ts': 'export const hub = 1;\n',
    'big/huge.log': `${'retries happened here and there, again and again\n'.repeat(Math.ceil((CONVENIENCE_CAP + MiB) / 49))}`,
    'secret/keys.txt': 'not for models\n',
  };
  // Many importers of one file, each with a common word: capped listings, searches and related files.
  for (let i = 0; i < 300; i++) {
    files[`gen/m${Math.floor(i / 30)}/mod${i}.ts`] = `import { hub } from '../hub.ts';\nexport const retries${i} = hub + ${i}; // retries\n`;
  }
  return files;
}

const FILES = buildFiles();
/** Every file's text, whitespace runs as one space: a line found here is file content, not a hint. */
const CORPUS = Object.values(FILES)
  .map((t) => t.replace(/\s+/g, ' '))
  .join(' ');

// ------------------------------------------------------------------ reading what a model is told

/** One text a model reads, from one probe. */
interface Said {
  readonly probe: string;
  readonly where: string;
  readonly text: string;
}

/** The texts of a result or a thrown error a model reads: text, next, message, an error's message and hint. */
function textsOf(probe: string, outcome: { value?: unknown; error?: unknown }): Said[] {
  const out: Said[] = [];
  const add = (where: string, text: unknown) => {
    if (typeof text === 'string' && text !== '') out.push({ probe, where, text });
  };
  if ('error' in outcome) {
    const e = outcome.error;
    add('error', e instanceof Error ? e.message : String(e));
    if (isFsError(e)) add('hint', e.hint);
    return out;
  }
  const r = outcome.value as Record<string, unknown> | undefined;
  if (r === undefined || r === null || typeof r !== 'object') return out;
  add('text', r.text);
  add('message', r.message);
  add('next', r.next);
  return out;
}

/**
 * A line inside a `<file>` block that is the file's own content (numbered,
 * a grep row, an outline row): the window from the call on, found in the
 * corpus. ctxfs's own lines name paths and numbers no file holds.
 */
function isContent(line: string, at: number): boolean {
  const window = line
    .slice(at, at + 60)
    .replace(/…$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return window.length >= 8 && CORPUS.includes(window);
}

/** The API-style calls in `text` outside the ⟦…⟧ markers, with the line each is on (file content inside `<file>` blocks left out). */
function leaks(text: string): string[] {
  const bare = text.replace(/⟦[^⟧]*⟧/g, '⟦⟧');
  const found: string[] = [];
  const scan = (piece: string, inBlock: boolean) => {
    for (const line of piece.split('\n')) {
      for (const m of line.matchAll(API_CALL)) {
        if (inBlock && isContent(line, m.index)) continue;
        found.push(line.trim().slice(0, 300));
        break;
      }
    }
  };
  const open = /<file [^\n]*?nonce="([0-9a-f]+)"[^\n]*>\n/g;
  let cursor = 0;
  for (let m = open.exec(bare); m !== null; m = open.exec(bare)) {
    scan(bare.slice(cursor, m.index), false);
    const close = `</file nonce="${m[1]}">`;
    const closeAt = bare.indexOf(close, open.lastIndex);
    const end = closeAt < 0 ? bare.length : closeAt;
    scan(bare.slice(open.lastIndex, end), true);
    cursor = closeAt < 0 ? bare.length : closeAt + close.length;
    open.lastIndex = cursor;
  }
  scan(bare.slice(cursor), false);
  return found;
}

// ------------------------------------------------------------------ probes

/** A call made under the marker style; `quiet` when its answer names no call (a policy refusal). */
interface Probe {
  readonly name: string;
  readonly run: () => Promise<unknown>;
  readonly quiet?: boolean;
}

let fs: MemoryFilesystem;
let layer: ContextLayer;
let unscanned: ContextLayer;
let s: ContextSession;

beforeAll(async () => {
  fs = new MemoryFilesystem({ files: FILES, limits: { maxConvenienceBytes: CONVENIENCE_CAP } });
  layer = await createContext({
    fs,
    store: testState(),
    profile: 'small',
    agent: 'llm:call-style',
    cache: { maxFileBytes: DOCUMENT_LIMIT },
    safety: { policyFiles: false, policy: { rules: [{ effect: 'deny', paths: ['secret/'] }] } },
  });
  await layer.scan();
  s = layer.session({ agent: 'llm:call-style', profile: 'small' });
  // A layer that never scanned: its hints say to scan first.
  unscanned = await createContext({ fs: new MemoryFilesystem({ files: { 'a.ts': 'export const a = 1;\n' } }), store: testState(), profile: 'small' });
}, 120_000);

afterAll(async () => {
  layer?.close();
  unscanned?.close();
  await fs?.close();
});

/** Edits that set up a state (a stale read, a change to undo) run in the API style: only the probe's own answer is checked. */
function probes(): Probe[] {
  const other = () => layer.session({ agent: 'llm:other', profile: 'small' });
  const list: Probe[] = [
    // Reads over budget, cut, out of range.
    { name: 'readFile of a file over budget', run: () => s.readFile('lib/es5.d.ts') },
    { name: 'readFile strategy start', run: () => s.readFile('lib/es5.d.ts', { strategy: 'start' }) },
    { name: 'readFile strategy end', run: () => s.readFile('src/observable.ts', { strategy: 'end' }) },
    { name: 'readFile of a file over the document limit', run: () => s.readFile('lib/dom.d.ts') },
    { name: 'readFile strategy end over the document limit', run: () => s.readFile('lib/dom.d.ts', { strategy: 'end' }) },
    { name: 'readLines past the budget', run: () => s.readLines('lib/es5.d.ts', 1, 5000) },
    { name: 'readLines past the end', run: () => s.readLines('lib/es5.d.ts', 999_999, 1_000_000) },
    { name: 'readLines from line 0', run: () => s.readLines('src/app.ts', 0, 10) },
    { name: 'readLines reversed', run: () => s.readLines('src/app.ts', 10, 2) },
    { name: 'readLines column past the line', run: () => s.readLines('src/app.ts', 3, 3, { column: 500 }) },
    { name: 'readLines over the document limit', run: () => s.readLines('lib/dom.d.ts', 1, 4000) },
    { name: 'getExcerpt', run: () => s.getExcerpt('lib/es5.d.ts') },
    { name: 'readFile of a missing file', run: () => s.readFile('src/missng.ts') },
    { name: 'readFile of a missing file, unscanned', run: () => unscanned.readFile('b.ts') },
    // Symbols and outlines.
    { name: 'getOutline of a large file', run: () => s.getOutline('lib/es5.d.ts') },
    { name: 'getOutline of an unknown symbol', run: () => s.getOutline('lib/es5.d.ts', { symbol: 'NoSuchThing' }) },
    { name: 'getOutline of lines past the end', run: () => s.getOutline('src/app.ts', { startLine: 500, endLine: 600 }) },
    { name: 'getOutline over the document limit', run: () => s.getOutline('lib/dom.d.ts') },
    { name: 'getSymbol of a missing symbol', run: () => s.getSymbol('lib/es5.d.ts', 'noSuchSymbolInThisFile') },
    { name: 'getSymbol of a near miss', run: () => s.getSymbol('lib/es5.d.ts', 'ArrayBufer') },
    { name: 'getSymbol of a large interface', run: () => s.getSymbol('lib/es5.d.ts', 'Array') },
    { name: 'getSymbol of a large class', run: () => s.getSymbol('src/observablemap.ts', 'ObservableMap') },
    { name: 'getSymbol with a long doc comment', run: () => s.getSymbol('src/documented.ts', 'retry') },
    { name: 'getSymbol of a name defined 50 times', run: () => s.getSymbol('gen/runners.ts', 'run') },
    { name: 'getSymbol over the document limit', run: () => s.getSymbol('lib/dom.d.ts', 'Node') },
    { name: 'summarize', run: () => s.summarize('src/observable.ts') },
    { name: 'summarize over the document limit', run: () => s.summarize('lib/dom.d.ts') },
    { name: 'getRelatedFiles with a cut list', run: () => s.getRelatedFiles('gen/hub.ts', 2) },
    // Searches.
    { name: 'listFiles capped', run: () => s.listFiles('', { limit: 20 }) },
    { name: 'listFiles over budget', run: () => s.listFiles('gen') },
    { name: 'glob capped', run: () => s.glob('**/*.ts', { limit: 20 }) },
    { name: 'glob with a file as cwd', run: () => s.glob('*.ts', { cwd: 'src/app.ts' }) },
    { name: 'grep capped', run: () => s.grep('retries') },
    { name: 'grep in a file over the document limit', run: () => s.grep('interface', { path: 'lib/dom.d.ts', limit: 5 }) },
    { name: 'grep of an empty pattern', run: () => s.grep('') },
    { name: 'grep of two lines', run: () => s.grep('a\nb') },
    { name: 'grep in a missing directory', run: () => s.grep('x', { path: 'nope/missing' }) },
    { name: 'findSymbol with no match', run: () => s.findSymbol('zzqqNothingNamedThis') },
    { name: 'findSymbol with many', run: () => s.findSymbol('run') },
    { name: 'findSymbol with weaker matches', run: () => s.findSymbol('value1') },
    { name: 'findSymbol on a layer never scanned', run: () => unscanned.findSymbol('a') },
    { name: 'overview with a big README', run: () => s.overview() },
    // Edits refused.
    { name: 'replace in a missing file', run: () => s.replace('src/missing.ts', 'a', 'b') },
    { name: 'editLines in a missing file', run: () => s.editLines('src/missing.ts', { kind: 'delete', start: 1, end: 1 }) },
    { name: 'deleteFile of a missing file', run: () => s.deleteFile('src/missing.ts') },
    { name: 'createFile over an existing file', run: () => s.createFile('src/app.ts', 'x\n') },
    { name: 'renameFile onto an existing file', run: () => s.renameFile('src/gone.ts', 'src/app.ts') },
    { name: 'renameFile into a directory', run: () => s.renameFile('src/gone.ts', 'src/') },
    { name: 'replace of an ambiguous text', run: () => s.replace('src/app.ts', "'dup'", "'one'") },
    { name: 'replace of a text not there', run: () => s.replace('src/app.ts', 'export const nowhere = 0;', 'x') },
    { name: 'editLines out of range', run: () => s.editLines('src/app.ts', { kind: 'replace', start: 90, end: 91, text: 'x\n' }) },
    { name: 'replace in a file over the convenience cap', run: () => s.replace('big/huge.log', 'retries', 'tries') },
    { name: 'writeFile with an unknown baseVersion', run: () => s.writeFile('src/app.ts', 'x\n', { baseVersion: 'abcdef123456' }) },
    { name: 'applyPatch creating an existing file', run: () => s.applyPatch('--- /dev/null\n+++ b/src/app.ts\n@@ -0,0 +1 @@\n+x\n') },
    { name: 'applyPatch changing a missing file', run: () => s.applyPatch('--- a/src/nope.ts\n+++ b/src/nope.ts\n@@ -1 +1 @@\n-a\n+b\n') },
    {
      name: 'applyPatch deleting only part of a file',
      run: () => s.applyPatch('--- a/src/app.ts\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-export const value1 = 1;\n'),
    },
    // History.
    { name: 'undo with nothing to undo', run: () => s.undo('src/app.ts') },
    { name: 'rollback to a version that is not there', run: () => s.rollback('src/app.ts', 99) },
    { name: 'getDiff from a version that is not there', run: () => s.getDiff('src/app.ts', 99) },
    {
      name: 'a stale edit overlapping another agent’s',
      run: async () => {
        await s.readFile('src/lines.ts');
        await other().replace('src/lines.ts', 'line 2\n', 'line two\n');
        return s.editLines('src/lines.ts', { kind: 'replace', start: 2, end: 2, text: 'line II\n' });
      },
    },
    {
      name: 'a stale delete',
      run: async () => {
        await s.readFile('src/lines.ts');
        await other().replace('src/lines.ts', 'line 5\n', 'line five\n');
        return s.deleteFile('src/lines.ts');
      },
    },
    {
      name: 'undo of a change later changes overlap',
      run: async () => {
        const first = await other().replace('src/lines.ts', 'line 9\n', 'line nine\n');
        await other().replace('src/lines.ts', 'line nine\n', 'line NINE\n');
        return s.undo('src/lines.ts', { change: first.seq });
      },
    },
    {
      name: 'undo of a change to a file deleted since',
      run: async () => {
        const first = await other().replace('src/gone.ts', 'kept = 2', 'kept = 3');
        await other().deleteFile('src/gone.ts');
        return s.undo('src/gone.ts', { change: first.seq });
      },
    },
    {
      name: 'undo of a rename',
      run: async () => {
        await other().renameFile('src/moved.ts', 'src/renamed.ts');
        return s.undo('src/renamed.ts');
      },
    },
    // The safety layer.
    { name: 'readFile denied by the policy', run: () => s.readFile('secret/keys.txt'), quiet: true },
  ];
  return list;
}

describe('every suggested call is written in the active call style', () => {
  test('under a marker style, no result, next, message or error names a call in the API spelling', { timeout: 300_000 }, async () => {
    const leaked: string[] = [];
    const unmarked: string[] = [];
    let markers = 0;
    for (const probe of probes()) {
      let outcome: { value?: unknown; error?: unknown };
      try {
        outcome = { value: await withCallStyle(MARKER, probe.run) };
      } catch (error) {
        outcome = { error };
      }
      const said = textsOf(probe.name, outcome);
      if (TRACE) console.log(`■ ${probe.name}\n${said.map((t) => `  ${t.where}: ${t.text}`).join('\n')}`);
      for (const t of said) for (const line of leaks(t.text)) leaked.push(`${t.probe} (${t.where}): ${line}`);
      const marked = said.filter((t) => t.text.includes('⟦')).length;
      markers += marked;
      if (marked === 0 && !probe.quiet) unmarked.push(`${probe.name}: ${said.map((t) => `${t.where}: ${t.text.slice(0, 200)}`).join(' | ') || '(nothing)'}`);
    }
    expect(leaked, `API-style calls outside the style:\n${leaked.join('\n')}`).toEqual([]);
    expect(unmarked, `probes that named no call in the style:\n${unmarked.join('\n')}`).toEqual([]);
    expect(markers).toBeGreaterThan(40);
  });

  test('outside withCallStyle the same hints are written in the API spelling (the check above can fail)', async () => {
    const r = await s.readFile('lib/es5.d.ts');
    expect(r.next).toMatch(/^(getSymbol|readLines)\("lib\/es5\.d\.ts"/);
    expect(leaks(r.text).length).toBeGreaterThan(0);
    const err = await s.readLines('src/app.ts', 0, 10).catch((e: unknown) => e);
    expect(isFsError(err) && err.hint).toContain('readLines("src/app.ts", 1, 10)');
  });
});
