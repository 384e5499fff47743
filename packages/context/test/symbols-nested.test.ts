/**
 * Issue 19, defects 1 and 2, on snippets of real packages: definitions
 * inside function bodies exist (qualified by what encloses them), a name
 * several definitions share says so with each one's lines and the name
 * that serves it, and a getter and its setter are both reachable — together
 * when adjacent, each by `:get` / `:set`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { type CodeSymbol, type ContextLayer, createContext, findSymbol, flattenSymbols, symbolSelector, treeSitterSymbols } from '../src/index.ts';
import { testState } from './support/test-state.ts';

/** Runs `use` on a context over `files` in memory (large profile unless told). */
async function withContext(files: Record<string, string>, use: (ctx: ContextLayer) => Promise<void>, profile: 'small' | 'large' = 'large'): Promise<void> {
  const fs = new MemoryFilesystem({ files });
  const ctx = await createContext({ fs, store: testState(), profile, agent: 'test' });
  try {
    await ctx.scan();
    await use(ctx);
  } finally {
    await ctx.close();
    await fs.close();
  }
}

function brief(symbols: readonly CodeSymbol[]): string[] {
  return flattenSymbols(symbols).map((s) => `${s.kind} ${s.qualifiedName} ${s.docStartLine}/${s.startLine}-${s.endLine}`);
}

// _pytest/pytester.py (pytest 7.2.1): a class inside a method, whose method shares its name with a module-level hook.
const PYTESTER = `def pytest_configure(config: Config) -> None:
    if config.getvalue("lsof"):
        checker = LsofFdLeakChecker()


class Pytester:
    def inline_run(self, *args, plugins=(), no_reraise_ctlc: bool = False):
        plugins = list(plugins)
        finalizers = []
        try:
            rec = []

            class Collect:
                def pytest_configure(x, config: Config) -> None:
                    rec.append(self.make_hook_recorder(config.pluginmanager))

            plugins.append(Collect())
            if len(rec) == 1:
                reprec = rec.pop()
            else:

                class reprec:  # type: ignore
                    pass

            return reprec
        finally:
            for finalizer in finalizers:
                finalizer()
`;

// src/retryer.ts (@tanstack/query-core 5.59.0): arrow functions bound by const inside a function.
const RETRYER = `export function createRetryer<TData = unknown, TError = DefaultError>(
  config: RetryerConfig<TData, TError>,
): Retryer<TData> {
  let isRetryCancelled = false

  const cancelRetry = () => {
    isRetryCancelled = true
  }

  const continueRetry = () => {
    isRetryCancelled = false
  }

  function run() {
    class RetryError extends Error {}
    let promiseOrValue: any
    const { isArray } = Array
    return promiseOrValue
  }

  return { cancelRetry, continueRetry }
}
`;

// src/core/atom.ts (mobx 6.13.5): getter and setter pairs.
const ATOM = `export class Atom implements IAtom {
    // for effective unobserving. BaseAtom has true, for extra optimization, so its onBecomeUnobserved never gets called, because it's not needed
    get isBeingObserved(): boolean {
        return getFlag(this.flags_, Atom.isBeingObservedMask_)
    }
    set isBeingObserved(newValue: boolean) {
        this.flags_ = setFlag(this.flags_, Atom.isBeingObservedMask_, newValue)
    }

    get isPendingUnobservation(): boolean {
        return getFlag(this.flags_, Atom.isPendingUnobservationMask_)
    }

    public reportObserved(): boolean {
        return reportObserved(this)
    }

    set isPendingUnobservation(newValue: boolean) {
        this.flags_ = setFlag(this.flags_, Atom.isPendingUnobservationMask_, newValue)
    }
}
`;

describe('definitions inside function bodies', () => {
  test('Python: a class and its method inside a method are indexed, qualified by what encloses them', async () => {
    const symbols = await treeSitterSymbols('python', PYTESTER);
    expect(brief(symbols)).toEqual([
      'function pytest_configure 1/1-3',
      'class Pytester 6/6-28',
      'method Pytester.inline_run 7/7-28',
      'class Pytester.inline_run.Collect 13/13-15',
      'method Pytester.inline_run.Collect.pytest_configure 14/14-15',
      'class Pytester.inline_run.reprec 22/22-23',
    ]);
  });

  test('TypeScript: const-bound arrows, a function and a class in a function body; destructuring and plain locals are not definitions', async () => {
    const symbols = await treeSitterSymbols('typescript', RETRYER);
    expect(brief(symbols)).toEqual([
      'function createRetryer 1/1-22',
      'function createRetryer.cancelRetry 6/6-8',
      'function createRetryer.continueRetry 10/10-12',
      'function createRetryer.run 14/14-19',
      'class createRetryer.run.RetryError 15/15-15',
    ]);
  });

  test('C#: a local function inside a method; Rust: a fn item inside a fn', async () => {
    const cs = `public class Parser {\n    public int Parse(string s) {\n        int Digit(char c) => c - 48;\n        return Digit(s[0]);\n    }\n}\n`;
    expect(brief(await treeSitterSymbols('c-sharp', cs))).toEqual(['class Parser 1/1-6', 'method Parser.Parse 2/2-5', 'function Parser.Parse.Digit 3/3-3']);
    const rs = `fn parse(s: &str) -> u32 {\n    fn digit(c: char) -> u32 {\n        c as u32 - 48\n    }\n    digit(s.chars().next().unwrap())\n}\n`;
    expect(brief(await treeSitterSymbols('rust', rs))).toEqual(['function parse 1/1-6', 'function parse.digit 2/2-4']);
  });

  test('a plain name shared by a module-level and a nested definition serves the first and names the other', async () => {
    const table = { source: 'tree-sitter' as const, symbols: await treeSitterSymbols('python', PYTESTER) };
    const found = findSymbol(table, 'pytest_configure');
    expect(found.symbol?.qualifiedName).toBe('pytest_configure');
    expect(found.others.map((o) => symbolSelector(table, o))).toEqual(['Pytester.inline_run.Collect.pytest_configure']);
    expect(findSymbol(table, 'Pytester.inline_run.Collect.pytest_configure').symbol?.startLine).toBe(14);
    // The tail of a qualified name reaches it too.
    expect(findSymbol(table, 'Collect.pytest_configure').symbol?.startLine).toBe(14);
  });

  test('getSymbol serves the nested definition, and lists every same-named one with its lines and the name that serves it', async () => {
    await withContext({ 'pytester.py': PYTESTER, 'retryer.ts': RETRYER }, async (ctx) => {
      const nested = await ctx.getSymbol('retryer.ts', 'createRetryer.continueRetry');
      expect([nested.startLine, nested.endLine]).toEqual([10, 12]);
      const top = await ctx.getSymbol('pytester.py', 'pytest_configure');
      expect([top.startLine, top.endLine]).toEqual([1, 3]);
      expect(top.text).toContain(
        `[also named 'pytest_configure': "Pytester.inline_run.Collect.pytest_configure" (14-15); getSymbol("pytester.py", "Pytester.inline_run.Collect.pytest_configure") serves the first, each name likewise]`,
      );
      await expect(ctx.getSymbol('retryer.ts', 'isArray')).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });

  test('a path and a name given the other way round are told as such, with the call that works; a sensitive file is never named', async () => {
    await withContext({ 'retryer.ts': RETRYER, '.env': 'TOKEN=1\n' }, async (ctx) => {
      const swapped = await ctx.getSymbol('createRetryer.continueRetry', 'retryer.ts').then(
        () => undefined,
        (e: { code?: string; message?: string; hint?: string }) => e,
      );
      expect(swapped).toMatchObject({ code: 'ENOENT' });
      expect(swapped?.message).toContain("the path and the symbol's name are the other way round");
      expect(swapped?.hint).toBe('getSymbol("retryer.ts", "createRetryer.continueRetry")');
      // The call named works.
      expect((await ctx.getSymbol('retryer.ts', 'createRetryer.continueRetry')).startLine).toBe(10);
      // ./ spelled name too; a file the registry counts sensitive, or no file, keeps the plain refusal.
      for (const spelled of ['./retryer.ts', 'x/../retryer.ts', '.\\retryer.ts', './/retryer.ts']) {
        await expect(ctx.getSymbol('createRetryer', spelled)).rejects.toMatchObject({ hint: 'getSymbol("retryer.ts", "createRetryer")' });
      }
      const secret = await ctx.getSymbol('TOKEN', '.env').catch((e: { message?: string; hint?: string }) => e);
      expect(`${(secret as { message?: string }).message} ${(secret as { hint?: string }).hint}`).not.toContain('other way round');
      const none = await ctx.getSymbol('nothing.ts', 'noSuchFile.ts').catch((e: { message?: string }) => e);
      expect((none as { message?: string }).message).not.toContain('other way round');
    });
  });

  test('the outline lists definitions at every depth when the budget holds them', async () => {
    await withContext({ 'pytester.py': PYTESTER }, async (ctx) => {
      // Scoped, so the outline is served even where the small file itself would be the cheaper answer.
      const outline = await ctx.getOutline('pytester.py', { startLine: 1 });
      expect(outline.view).toBe('outline');
      expect(outline.text).toContain('\n      14-15     def pytest_configure(x, config: Config) -> None\n');
      expect(outline.text).not.toContain('more symbols not listed');
    });
  });
});

describe('a symbol index stored by an earlier extractor', () => {
  test('is parsed again, so nested definitions of files that did not change are found', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-symbols-'));
    const store = join(dir, 'state.db');
    const fs = new MemoryFilesystem({ files: { 'retryer.ts': RETRYER } });
    try {
      const first = await createContext({ fs, store, profile: 'large', agent: 'test' });
      await first.findSymbol('createRetryer');
      // As the index of the previous version left it: no nested definitions, its source unversioned.
      await first.store.run("DELETE FROM symbols WHERE qualified_name <> 'createRetryer'");
      await first.store.run("UPDATE symbol_files SET source = 'tree-sitter', symbols = 1");
      await first.close();
      const again = await createContext({ fs, store, profile: 'large', agent: 'test' });
      const found = await again.findSymbol('continueRetry');
      await again.close();
      expect(found.items.map((h) => h.qualifiedName)).toEqual(['createRetryer.continueRetry']);
    } finally {
      await fs.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('getters and setters', () => {
  test('accessors have their own kinds', async () => {
    const symbols = await treeSitterSymbols('typescript', ATOM);
    expect(brief(symbols)).toEqual([
      'class Atom 1/1-21',
      'get Atom.isBeingObserved 2/3-5',
      'set Atom.isBeingObserved 6/6-8',
      'get Atom.isPendingUnobservation 10/10-12',
      'method Atom.reportObserved 14/14-16',
      'set Atom.isPendingUnobservation 18/18-20',
    ]);
  });

  test('an adjacent pair is served together; a pair apart serves the getter and names the setter; :get and :set serve each', async () => {
    const table = { source: 'tree-sitter' as const, symbols: await treeSitterSymbols('typescript', ATOM) };
    const pair = findSymbol(table, 'Atom.isBeingObserved');
    expect(pair.symbol).toMatchObject({ kind: 'property', docStartLine: 2, startLine: 3, endLine: 8 });
    expect(pair.others).toEqual([]);
    expect(findSymbol(table, 'isBeingObserved').symbol?.kind).toBe('property');
    expect(findSymbol(table, 'Atom.isBeingObserved:set').symbol).toMatchObject({ kind: 'set', startLine: 6, endLine: 8 });
    expect(findSymbol(table, 'Atom.isBeingObserved:get').symbol).toMatchObject({ kind: 'get', startLine: 3, endLine: 5 });

    const apart = findSymbol(table, 'Atom.isPendingUnobservation');
    expect(apart.symbol).toMatchObject({ kind: 'get', startLine: 10 });
    expect(apart.others.map((o) => symbolSelector(table, o))).toEqual(['Atom.isPendingUnobservation:set']);
    expect(findSymbol(table, 'Atom.isPendingUnobservation:set').symbol).toMatchObject({ kind: 'set', startLine: 18, endLine: 20 });
  });

  test('Python: a property getter and its setter are accessors too, served together', async () => {
    // _pytest/terminal.py (pytest 7.2.1)
    const source = `class TerminalReporter:
    @property
    def showfspath(self) -> bool:
        if self._showfspath is None:
            return self.verbosity >= 0
        return self._showfspath

    @showfspath.setter
    def showfspath(self, value: Optional[bool]) -> None:
        self._showfspath = value

    @property
    def showlongtestinfo(self) -> bool:
        return self.verbosity > 0
`;
    const table = { source: 'tree-sitter' as const, symbols: await treeSitterSymbols('python', source) };
    expect(brief(table.symbols)).toEqual([
      'class TerminalReporter 1/1-14',
      'get TerminalReporter.showfspath 2/2-6',
      'set TerminalReporter.showfspath 8/8-10',
      'get TerminalReporter.showlongtestinfo 12/12-14',
    ]);
    expect(findSymbol(table, 'TerminalReporter.showfspath').symbol).toMatchObject({ kind: 'property', startLine: 2, endLine: 10 });
    expect(findSymbol(table, 'showfspath:set').symbol).toMatchObject({ kind: 'set', startLine: 8 });
  });

  test('getSymbol serves the pair as one property, and the setter alone by its selector', async () => {
    await withContext({ 'atom.ts': ATOM }, async (ctx) => {
      const both = await ctx.getSymbol('atom.ts', 'Atom.isBeingObserved');
      expect([both.startLine, both.endLine]).toEqual([2, 8]);
      // Getter and setter in one view (no header line: the range says what it is).
      expect(both.view).toBe('symbol');
      expect(both.text).toMatch(/\n3\t.*get isBeingObserved/);
      expect(both.text).toMatch(/\n\d\t.*set isBeingObserved/);
      const setter = await ctx.getSymbol('atom.ts', 'Atom.isPendingUnobservation:set');
      expect([setter.startLine, setter.endLine]).toEqual([18, 20]);
      const getter = await ctx.getSymbol('atom.ts', 'Atom.isPendingUnobservation');
      expect([getter.startLine, getter.endLine]).toEqual([10, 12]);
      expect(getter.text).toContain(`"Atom.isPendingUnobservation:set" (18-20)`);
    });
  });
});

describe('selectors', () => {
  test('a name many definitions share lists forty with their selectors and counts the rest, within the small profile', async () => {
    const classes = Array.from({ length: 50 }, (_, i) => `class C${i} {\n  toString() {\n    return 'c${i}';\n  }\n}\n`).join('');
    await withContext(
      { 'many.ts': classes },
      async (ctx) => {
        const served = await ctx.getSymbol('many.ts', 'toString');
        expect([served.startLine, served.endLine]).toEqual([2, 4]);
        expect(served.text).toContain('"C40.toString" (202-204); 9 more, getOutline("many.ts") lists them;');
        expect(served.tokens).toBeLessThanOrEqual(1500);
      },
      'small',
    );
  });

  // java/util/Objects.java (JDK): overloads share a qualified name.
  const OBJECTS = `public final class Objects {
    public static boolean equals(Object a, Object b) {
        return (a == b) || (a != null && a.equals(b));
    }

    public static String toString(Object o) {
        return String.valueOf(o);
    }

    public static String toString(Object o, String nullDefault) {
        return (o != null) ? o.toString() : nullDefault;
    }
}
`;

  test('overloads share one entry of the note, each range served by its first line', async () => {
    const overloads = `public final class Objects {\n${Array.from({ length: 20 }, (_, i) => `    static int hash(int a${i}) { return ${i}; }\n`).join('')}}\n`;
    await withContext({ 'Objects.java': overloads }, async (ctx) => {
      const served = await ctx.getSymbol('Objects.java', 'Objects.hash');
      expect([served.startLine, served.endLine]).toEqual([2, 2]);
      expect(served.text).toContain(`[also named 'Objects.hash': "Objects.hash@<first line>" for lines 3-3, 4-4, 5-5, 6-6,`);
      const last = await ctx.getSymbol('Objects.java', 'Objects.hash@21');
      expect(last.text).toContain('static int hash(int a19)');
    });
  });

  test('overloads: the first is served, the others by @line; a line inside a definition selects it', async () => {
    const table = { source: 'tree-sitter' as const, symbols: await treeSitterSymbols('java', OBJECTS) };
    const found = findSymbol(table, 'Objects.toString');
    expect(found.symbol?.startLine).toBe(6);
    expect(found.others.map((o) => symbolSelector(table, o))).toEqual(['Objects.toString@10']);
    expect(findSymbol(table, 'Objects.toString@10').symbol?.startLine).toBe(10);
    expect(findSymbol(table, 'Objects.toString@11').symbol?.startLine).toBe(10);
    expect(findSymbol(table, 'toString@10').symbol?.startLine).toBe(10);
    expect(symbolSelector(table, found.symbol as CodeSymbol)).toBe('Objects.toString@6');
    expect(symbolSelector(table, flattenSymbols(table.symbols)[1] as CodeSymbol)).toBe('Objects.equals');
  });
});

describe('a definition whose members share its line (minified code)', () => {
  test('the note of what precedes the first member names a range that exists, and its call works', async () => {
    const methods = Array.from({ length: 300 }, (_, i) => `m${i}(){return ${i}*${i}}`).join('');
    await withContext({ 'min.js': `/* lib 1.0 */\nclass S{${methods}}\nexport{S};\n` }, async (ctx) => {
      const served = await ctx.getSymbol('min.js', 'S', { maxTokens: 600 });
      const calls = [...served.text.matchAll(/readLines\("min\.js", (\d+), (\d+)\)/g)];
      expect(calls.length).toBeGreaterThan(0);
      for (const [call, a, b] of calls) {
        expect(Number(a), call).toBeLessThanOrEqual(Number(b));
        expect((await ctx.readLines('min.js', Number(a), Number(b))).view, call).not.toBe('over-budget');
      }
      expect(served.text).toContain('[… line 2 before the first member: readLines("min.js", 2, 2) …]');
    });
  });
});
