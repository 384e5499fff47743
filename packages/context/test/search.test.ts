/**
 * Search in the context layer — listFiles, glob, grep, findSymbol — over a
 * real package (semver, downloaded from the npm registry) with what real
 * repositories also hold planted around it: a `node_modules`, a `.git`, a
 * `.gitignore`d build, a `.env` and secrets in code (a key generated here).
 */
import { generateKeyPairSync } from 'node:crypto';
import { type FileEntry, isFsError, splitLines } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  type ContextLayer,
  type ContextSession,
  createContext,
  DEFAULT_TOOLS,
  GREP_TALLY_CAP,
  type GrepHit,
  MAX_LINE_CHARS,
  MODEL_PROFILES,
  o200kTokenizer,
  type PolicyConfig,
  type ProfileInput,
  type SearchResult,
  type Served,
} from '../src/index.ts';
import { symbolIndex } from '../src/search/symbol-index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';
import { testState } from './support/test-state.ts';

const STRIPE = 'sk_live_51HqLyjWDarjtT1zdp7dcXq9bGQ4mZ';
const AWS = 'AKIAZ7XQ2M4N6P3R3T5V';
const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
/** A line from the middle of the key's base64 body: only a secret holds it. */
const PEM_BODY_LINE = splitLines(PEM)[5] as string;

let REAL: Record<string, string>;
let FILES: Record<string, string>;

beforeAll(() => {
  REAL = packageFiles(npmPackage('semver', '7.6.0'));
  FILES = {
    ...REAL,
    'node_modules/dep/index.js': 'const satisfies = require("x"); // needle-in-deps\n',
    'packages/app/node_modules/dep/x.js': '// needle-in-deps\n',
    '.git/config': '[core]\n# needle-in-deps\n',
    '.gitignore': 'dist/\n*.log\n',
    'dist/bundle.js': 'function satisfies() {} // needle-in-deps\n',
    'debug.log': 'needle-in-deps\n',
    'config/.env': `STRIPE_KEY=${STRIPE}\nAWS_ACCESS_KEY_ID=${AWS}\n`,
    'src/settings.js': `// payment settings\nconst stripeKey = "${STRIPE}";\nconst region = "eu-west-1";\nmodule.exports = { stripeKey, region };\n`,
    'src/deploy-key.pem.js': `module.exports = \`${PEM}\`;\n`,
  };
});

/** The files a default search covers: not ignored, not sensitive. */
function searchable(path: string): boolean {
  return !/(^|\/)(node_modules|\.git)\//.test(path) && !path.startsWith('dist/') && !path.endsWith('.log') && !path.endsWith('.env');
}

/** Evaluates a `next` call (`grep("x", {offset: 40})`) on a session, as a model would make it. */
function follow<Item = { path: string }>(session: ContextSession, call: string): Promise<SearchResult<Item>> {
  return new Function('s', `return s.${call};`)(session) as Promise<SearchResult<Item>>;
}

function expectWithin(r: SearchResult, budget: number): void {
  expect(r.tokens).toBe(o200kTokenizer.count(r.text));
  expect(r.tokens).toBeLessThanOrEqual(budget);
}

for (const backend of BACKENDS) {
  describe(`search over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });
    async function setup(profile: ProfileInput = 'large', policy?: PolicyConfig) {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), profile, agent: 'llm:test', safety: { policyFiles: false, policy } });
      await ctx.scan();
      return ctx;
    }

    test('every tool the overview offers is a method of the session, and the search tools are listed', async () => {
      await setup();
      const session = ctx.session({ agent: 'llm:other' }) as unknown as Record<string, unknown>;
      for (const tool of DEFAULT_TOOLS) {
        expect(tool.signature.startsWith(`${tool.name}(`)).toBe(true);
        expect(typeof session[tool.name], tool.name).toBe('function');
      }
      expect(DEFAULT_TOOLS.map((t) => t.name)).toEqual(expect.arrayContaining(['listFiles', 'glob', 'grep', 'findSymbol']));
      expect((await ctx.overview()).text).toContain('findSymbol(query, {kind, limit})');
    });

    test('grep finds what the files hold, counted exactly, node_modules, .git and .gitignored paths left out unless includeIgnored', async () => {
      await setup();
      const pattern = /\bsatisfies\b/;
      let expected = 0;
      const expectedFiles = new Set<string>();
      for (const [path, text] of Object.entries(FILES)) {
        if (!searchable(path)) continue;
        for (const line of splitLines(text)) {
          if (pattern.test(line)) {
            expected++;
            expectedFiles.add(path);
          }
        }
      }
      expect(expected).toBeGreaterThan(10);
      const r = await ctx.grep('\\bsatisfies\\b', { output: 'count', limit: 1000 });
      expect(r.counts).toMatchObject({ total: expectedFiles.size, files: expectedFiles.size, exact: true });
      expect(r.items.reduce((n, h) => n + h.matches, 0)).toBe(expected);
      expect(r.text).not.toContain('node_modules');
      expect(r.text).not.toContain('dist/bundle.js');

      expect((await ctx.grep('needle-in-deps')).counts.total).toBe(0);
      const none = await ctx.grep('needle-in-deps');
      expect(none.text).toContain('includeIgnored: true');
      const all = await ctx.grep('needle-in-deps', { includeIgnored: true, output: 'files' });
      // The host backend keeps `.git` out of every search itself.
      const planted = ['.git/config', 'debug.log', 'dist/bundle.js', 'node_modules/dep/index.js', 'packages/app/node_modules/dep/x.js'];
      const visible = [];
      for (const p of planted) if (backend.name !== 'host' || !p.startsWith('.git/')) visible.push(p);
      expect(all.items.map((h) => h.path).sort()).toEqual(visible.sort());
      // A scope named explicitly is searched even inside an ignored directory.
      expect((await ctx.grep('needle-in-deps', { path: 'node_modules/dep' })).counts.total).toBe(1);
    });

    test('secrets are never shown: lines are redacted, and a pattern that only matches inside a secret finds nothing in any output mode', async () => {
      await setup('small');
      for (const output of ['content', 'files', 'count'] as const) {
        for (const pattern of [STRIPE, 'sk_live_', AWS, PEM_BODY_LINE.slice(0, 24), 'PRIVATE KEY']) {
          const r = await ctx.grep(pattern, { output, literal: true, includeSensitive: true, includeIgnored: true, contextLines: 3 });
          expect(r.text).not.toContain(STRIPE);
          expect(r.text).not.toContain(AWS);
          expect(r.text).not.toContain(PEM_BODY_LINE);
          if (pattern !== 'PRIVATE KEY') expect(r.counts.total, `${pattern} ${output}`).toBe(0);
        }
      }
      const r = await ctx.grep('stripeKey', { contextLines: 1 });
      expect(r.text).toContain('[REDACTED:');
      expect(r.text).not.toContain(STRIPE);
      expect(r.redactions).toBeGreaterThan(0);
      // Context lines inside a key block are masked too.
      const around = await ctx.grep('module.exports = `', { contextLines: 5, path: 'src' });
      expect(around.counts.total).toBe(1);
      for (const line of splitLines(PEM).slice(1, -1)) expect(around.text).not.toContain(line);
    });

    test('sensitive files the policy withholds are neither searched nor named, whatever the flags', async () => {
      await setup();
      const r = await ctx.grep('AWS_ACCESS_KEY_ID', { includeSensitive: true });
      expect(r.counts.total).toBe(0);
      expect(r.counts.sensitiveLeftOut).toBe(0);
      expect(r.text).not.toContain('config/.env');
      expect((await ctx.listFiles('config')).items.map((f) => f.path)).not.toContain('config/.env');
    });

    test('an empty grep of a directory names what the ignore rules left out; of one file it does not', async () => {
      await setup();
      const tree = await ctx.grep('no-such-text-anywhere');
      expect(tree.counts.total).toBe(0);
      // What lies in the tree; the host backend never walks .git, so there includeIgnored would not search it either.
      expect(tree.text).toMatch(/\[not searched: ignored [^\]]*node_modules/);
      expect(tree.text.includes('.git,')).toBe(backend.name !== 'host');
      const file = await ctx.grep('no-such-text-anywhere', { path: 'src/settings.js' });
      expect(file.counts.total).toBe(0);
      expect(file.text).not.toContain('not searched');
    });

    test('sensitive files a rule allows are not searched unless asked, and the result says so', async () => {
      await setup(undefined, { rules: [{ effect: 'allow', paths: ['config/.env'], ops: ['read', 'search'] }] });
      const r = await ctx.grep('AWS_ACCESS_KEY_ID');
      expect(r.counts.total).toBe(0);
      expect(r.counts.sensitiveLeftOut).toBe(1);
      expect(r.text).toContain('sensitive files not searched: config/.env');
      const asked = await ctx.grep('AWS_ACCESS_KEY_ID', { includeSensitive: true });
      expect(asked.items.map((h) => h.path)).toEqual(['config/.env']);
      expect(asked.text).toContain('AWS_ACCESS_KEY_ID=[REDACTED:');
      expect(asked.text).not.toContain(AWS);
    });

    test('caps are honest: the counts are the truth, every next call works in the profile and pages reach every match', async () => {
      // Small calls, a session long enough to page through everything.
      await setup({ base: 'small', sessionTokens: 10_000_000 });
      const budget = MODEL_PROFILES.small.perCallTokens;
      const truth: string[] = [];
      for (const [path, text] of Object.entries(FILES).sort(([a], [b]) => (a.replaceAll('/', '\0') < b.replaceAll('/', '\0') ? -1 : 1))) {
        if (!searchable(path)) continue;
        splitLines(text).forEach((line, i) => {
          if (/\bconst\b/.test(line)) truth.push(`${path}:${i + 1}`);
        });
      }
      let r: SearchResult<GrepHit> = await ctx.grep('\\bconst\\b');
      expect(r.counts.total).toBe(truth.length);
      expect(r.truncated).toBe(true);
      expect(r.text).toMatch(/more matching lines; narrow with grep\(/);
      const seen: string[] = [];
      for (let page = 0; page < 200; page++) {
        expectWithin(r, budget);
        seen.push(...r.items.map((h) => `${h.path}:${h.line}`));
        if (!r.truncated) break;
        expect(r.next).toBeDefined();
        r = await follow<GrepHit>(ctx, r.next as string);
      }
      expect(seen).toEqual(truth);
    });

    test('a narrower call offered for what was left out fits the profile', async () => {
      await setup('small');
      const r = await ctx.grep('\\bconst\\b', { output: 'files' });
      const narrow = r.text.match(/narrow with (grep\([^)]*\}\)) \((\d+) files?\)/);
      if (narrow) {
        const n = await follow(ctx, narrow[1] as string);
        expect(n.counts.total).toBe(Number(narrow[2]));
        expect(n.truncated).toBe(false);
        expectWithin(n, MODEL_PROFILES.small.perCallTokens);
      }
      const listing = await ctx.listFiles('', { limit: 5 });
      expect(listing.truncated).toBe(true);
      expect(listing.text).toMatch(/more; narrow with listFiles\(/);
      const next = await follow(ctx, listing.next as string);
      expect(next.items[0]?.path).not.toBe(listing.items[0]?.path);
    });

    test.each(['small', 'medium', 'large'] as const)('no call exceeds the %s profile budget', async (profile) => {
      await setup(profile);
      const budget = MODEL_PROFILES[profile].perCallTokens;
      const calls: Array<() => Promise<SearchResult>> = [
        () => ctx.listFiles(),
        () => ctx.listFiles('', { limit: 10_000 }),
        () => ctx.listFiles('', { depth: 1, includeIgnored: true }),
        () => ctx.glob('**', { limit: 10_000, includeIgnored: true }),
        () => ctx.grep('e', { limit: 10_000, contextLines: 5 }),
        () => ctx.grep('.', { output: 'count', limit: 10_000 }),
        () => ctx.grep('\\w+', { output: 'files', limit: 10_000, includeIgnored: true }),
        () => ctx.findSymbol('e', { match: 'all', limit: 1000 }),
        () => ctx.findSymbol('compare', { match: 'all', limit: 1000 }),
      ];
      for (const call of calls) {
        const r = await call();
        expect(r.view).not.toBe('over-budget');
        expectWithin(r, budget);
      }
      for (const maxTokens of [60, 200]) {
        expectWithin(await ctx.grep('const', { maxTokens }), maxTokens);
        expectWithin(await ctx.findSymbol('compare', { maxTokens, match: 'all' }), maxTokens);
      }
    });

    test('a spent session serves nothing more, and what it served never passes its budget', async () => {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), profile: { base: 'small', sessionTokens: 4000 }, agent: 'llm:test' });
      await ctx.scan();
      let last: SearchResult | undefined;
      for (let i = 0; i < 20; i++) {
        last = await ctx.grep('\\bconst\\b', { offset: i * 10 });
        if (last.view === 'over-budget') break;
      }
      expect(last?.view).toBe('over-budget');
      expect(last?.text).toContain('Session budget spent');
      expect(ctx.sessionContext.tokensServed).toBeLessThanOrEqual(4000);
    });

    test('a search is recorded: reads of the files whose lines it shows, the session charged, the audit written', async () => {
      await setup();
      const before = ctx.sessionContext.tokensServed;
      const r = await ctx.grep('const compareIdentifiers =', { contextLines: 2 });
      expect(r.counts.total).toBe(1);
      const path = r.items[0]?.path as string;
      expect(ctx.sessionContext.tokensServed - before).toBe(r.tokens);
      const read = await ctx.sessionContext.lastRead('llm:test', path);
      expect(read).toMatchObject({ op: 'grep', sha256: ctx.registry.get(path)?.sha256 });
      expect(read?.startLine).toBe(Math.max(1, (r.items[0]?.line ?? 0) - 2));
      expect(read?.endLine).toBe((r.items[0]?.line ?? 0) + 2);
      const audit = (await ctx.store.auditLog({ limit: 1 }))[0];
      expect(audit).toMatchObject({ op: 'grep', agent: 'llm:test', tokens: r.tokens, result: 'ok' });
      const g = await ctx.glob('**/*.js');
      expect((await ctx.store.auditLog({ limit: 1 }))[0]).toMatchObject({ op: 'glob', tokens: g.tokens });
      const audited = await ctx.grep(STRIPE, { literal: true });
      expect(JSON.stringify((await ctx.store.auditLog({ limit: 1 }))[0]?.params)).not.toContain(STRIPE);
      expect(audited.counts.total, audited.text).toBe(0);
    });

    test("a glob naming a directory ('functions', 'functions/') matches no file, and says which call lists the files below it", async () => {
      await setup();
      const below = Object.keys(REAL).filter((p) => p.startsWith('functions/')).length;
      expect(below).toBeGreaterThan(10);
      for (const pattern of ['functions', 'functions/', './functions/']) {
        const r = await ctx.glob(pattern);
        expect(r.counts.total).toBe(0);
        expect(r.text).toContain('no files match; functions is a directory, and a glob matches files: glob("functions/**") lists the files below it.');
        const followed = await follow(ctx, 'glob("functions/**")');
        expect(followed.counts.total).toBe(below);
      }
      // A name that is no directory keeps the plain answer.
      expect((await ctx.glob('nothing-here')).text).toMatch(/no files match \(ignored paths left out/);
    });

    test('hostile patterns and paths are refused before any I/O with stable codes and hints', async () => {
      await setup();
      const cases: Array<[() => Promise<unknown>, string]> = [
        [() => ctx.grep('x', { path: '../etc' }), 'EPATHESCAPE'],
        [() => ctx.grep('x', { path: '/etc' }), 'EPATHESCAPE'],
        [() => ctx.grep('x', { path: 'C:\\Windows' }), 'EPATHESCAPE'],
        [() => ctx.grep('x', { path: 'a\0b' }), 'EINVAL'],
        [() => ctx.grep('('), 'EBADPATTERN'],
        [() => ctx.grep('a{2,1}'), 'EBADPATTERN'],
        [() => ctx.grep(''), 'EBADPATTERN'],
        [() => ctx.grep('a\nb'), 'EBADPATTERN'],
        [() => ctx.grep('x'.repeat(5000)), 'EBADPATTERN'],
        [() => ctx.grep('x', { glob: '' }), 'EBADPATTERN'],
        [() => ctx.grep('x', { contextLines: 500 }), 'EINVAL'],
        [() => ctx.grep('x', { limit: -1 }), 'EINVAL'],
        [() => ctx.grep('x', { output: 'lines' as 'content' }), 'EINVAL'],
        [() => ctx.grep('x', { path: 'no/such/dir' }), 'ENOENT'],
        [() => ctx.glob('../*'), 'EPATHESCAPE'],
        [() => ctx.glob('/etc/*'), 'EPATHESCAPE'],
        [() => ctx.glob('**', { cwd: '../..' }), 'EPATHESCAPE'],
        [() => ctx.glob('**', { cwd: 'index.js' }), 'ENOTDIR'],
        [() => ctx.glob(''), 'EBADPATTERN'],
        [() => ctx.listFiles('../'), 'EPATHESCAPE'],
        [() => ctx.listFiles('missing'), 'ENOENT'],
        [() => ctx.listFiles('', { depth: 0 }), 'EINVAL'],
        [() => ctx.listFiles('', { glob: '../x' }), 'EPATHESCAPE'],
        [() => ctx.findSymbol(''), 'EINVAL'],
        [() => ctx.findSymbol('a\u0000b'), 'EINVAL'],
        [() => ctx.findSymbol('x', { kind: 'banana' as 'class' }), 'EINVAL'],
        [() => ctx.findSymbol('x', { limit: 0 }), 'EINVAL'],
      ];
      for (const [call, code] of cases) {
        let err: unknown;
        try {
          await call();
        } catch (e) {
          err = e;
        }
        expect(isFsError(err), `${call}`).toBe(true);
        expect((err as { code: string }).code, `${call}`).toBe(code);
        expect((err as { hint: string }).hint.length, `${call}`).toBeGreaterThan(10);
      }
      const invalid = (await ctx.grep('(').catch((e: unknown) => e)) as { hint: string };
      expect(invalid.hint).toContain('literal');
      // The literal search offered keeps the call's scope and options: it dropped `path`, and searched everywhere.
      const scoped = (await ctx.grep('send(', { path: 'lib', ignoreCase: true, glob: '*.js' }).catch((e: unknown) => e)) as { hint: string };
      expect(scoped.hint).toContain('grep("send(", {literal: true, ignoreCase: true, path: "lib", glob: "*.js"})');
    });

    test('paths are canonical: spellings of one directory give one result', async () => {
      await setup();
      const a = await ctx.grep('\\bconst\\b', { path: 'classes', output: 'count' });
      const b = await ctx.grep('\\bconst\\b', { path: './functions/../classes/', output: 'count' });
      expect(b.items).toEqual(a.items);
      expect((await ctx.listFiles('classes//')).items).toEqual((await ctx.listFiles('classes')).items);
      expect((await ctx.glob('*.js', { cwd: 'internal/' })).items).toEqual((await ctx.glob('*.js', { cwd: 'internal' })).items);
    });

    test('listFiles: registry metadata, depth rows counting their files, lines once indexed; glob leaves ignored paths out', async () => {
      await setup();
      const top = await ctx.listFiles('', { depth: 1 });
      const classes = top.items.find((f) => f.path === 'classes');
      expect(classes).toMatchObject({ kind: 'directory', files: Object.keys(FILES).filter((p) => p.startsWith('classes/')).length });
      expect(top.items.some((f) => f.path.startsWith('node_modules') || f.path === 'dist')).toBe(false);
      const readme = top.items.find((f) => f.path === 'README.md');
      expect(readme).toMatchObject({ kind: 'file', size: ctx.registry.get('README.md')?.size, language: 'markdown', tags: ['doc'] });
      await ctx.findSymbol('SemVer');
      const file = (await ctx.listFiles('classes/semver.js')).items[0];
      expect(file?.lines).toBe(splitLines(FILES['classes/semver.js'] as string).length);
      // Among its directory's rows (their line counts asked for together) it keeps its own.
      const row = (await ctx.listFiles('classes')).items.find((f) => f.path === 'classes/semver.js');
      expect(row?.lines).toBe(file?.lines);
      // A sensitive file is listed (marked) only where the policy lets this caller see it.
      expect((await ctx.listFiles('config')).items.map((f) => f.path)).not.toContain('config/.env');
      const allowed = await createContext({
        fs: ws.fs,
        store: testState(),
        agent: 'llm:test',
        safety: { policyFiles: false, policy: { rules: [{ effect: 'allow', paths: ['config/'] }] } },
      });
      await allowed.scan();
      expect((await allowed.listFiles('config')).items.find((f) => f.path === 'config/.env')).toMatchObject({ sensitive: true });
      await allowed.close();
      const indexes = Object.keys(FILES).filter((p) => /(^|\/)index\.js$/.test(p) && searchable(p));
      expect((await ctx.glob('**/index.js')).items.map((f) => f.path).sort()).toEqual(indexes.sort());
      expect((await ctx.glob('**/index.js', { includeIgnored: true })).items.map((f) => f.path)).toContain('node_modules/dep/index.js');
    });

    test('findSymbol finds real definitions, and the getSymbol call it gives shows each one', async () => {
      await setup('small');
      for (const query of ['SemVer.compareMain', 'Range.parseRange', 'satisfies', 'compareIdentifiers', 'Comparator.test']) {
        const r = await ctx.findSymbol(query);
        expectWithin(r, MODEL_PROFILES.small.perCallTokens);
        const hit = r.items[0];
        expect(hit?.tier, query).toBe('exact');
        const served = (await follow(ctx, hit?.call as string)) as unknown as Served;
        expect(served.view).toBe('symbol');
        expect(served.startLine).toBeLessThanOrEqual(hit?.startLine ?? 0);
        expect(served.text).toContain(hit?.name);
        expectWithin(served as unknown as SearchResult, MODEL_PROFILES.small.perCallTokens);
      }
    });

    test('findSymbol ranks exact > prefix > word match > fuzzy', async () => {
      await setup();
      const tiersOf = async (q: string) => (await ctx.findSymbol(q, { match: 'all', limit: 1000 })).items.map((h) => h.tier);
      const exact = await ctx.findSymbol('compareMain');
      expect(exact.items[0]).toMatchObject({ qualifiedName: 'SemVer.compareMain', tier: 'exact' });
      const prefix = await ctx.findSymbol('comparePr');
      expect(prefix.items[0]).toMatchObject({ name: 'comparePre', tier: 'prefix' });
      const words = await ctx.findSymbol('comp main', { match: 'all' });
      expect(words.items.map((h) => h.name)).toContain('compareMain');
      const typo = await ctx.findSymbol('compareMian');
      expect(typo.items[0]).toMatchObject({ name: 'compareMain', tier: 'fuzzy' });
      for (const q of ['compare', 'parse', 'inc']) {
        const tiers = await tiersOf(q);
        const order = tiers.map((t) => ['exact', 'prefix', 'words', 'fuzzy'].indexOf(t));
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
      const classes = await ctx.findSymbol('Range', { kind: 'class' });
      expect(classes.items.every((h) => h.kind === 'class')).toBe(true);
    });

    test('the symbol index follows the registry: built once, then only changed files are parsed again; gone files drop out', async () => {
      await setup();
      const index = symbolIndex(wsOf(ctx));
      const first = await index.refresh();
      expect(first.parsed).toBeGreaterThan(20);
      expect((await index.refresh()).parsed).toBe(0);
      const edit = await ctx.writeFile('src/settings.js', `${FILES['src/settings.js']}\nfunction rotateStripeKeyNow() {}\n`);
      expect(edit.success).toBe(true);
      expect((await ctx.findSymbol('rotateStripeKeyNow')).items[0]?.path).toBe('src/settings.js');
      await ws.external('functions/clean.js', 'function scrubVersionString(v) {\n  return v;\n}\nmodule.exports = scrubVersionString;\n');
      await ctx.scan();
      const after = await index.refresh();
      expect(after.parsed).toBe(1);
      expect((await ctx.findSymbol('scrubVersionString')).items[0]?.path).toBe('functions/clean.js');
      await ws.external('functions/clean.js', null);
      await ctx.scan();
      expect((await index.refresh()).dropped).toBe(1);
      expect((await ctx.findSymbol('scrubVersionString')).counts.total).toBe(0);
    });
  });
}

/** The workspace services of a layer (for the index, which lives per workspace). */
function wsOf(ctx: ContextLayer): Parameters<typeof symbolIndex>[0] {
  return {
    fs: ctx.fs,
    store: ctx.store,
    registry: ctx.registry,
    loader: ctx.loader,
    tokenizer: ctx.tokenizer,
    redactor: ctx.redactor,
    summarizer: ctx.summarizer,
    summaries: undefined as never,
    relations: ctx.relations,
  };
}

describe('node_modules is never walked', () => {
  class Recording extends MemoryFilesystem {
    readonly listed: string[] = [];
    protected override async readDirectory(path: string): Promise<FileEntry[]> {
      this.listed.push(path);
      return super.readDirectory(path);
    }
  }

  test('grep, glob and listFiles leave ignored directories unread; includeIgnored reads them', async () => {
    const fs = new Recording({ files: FILES });
    const ctx = await createContext({ fs, store: testState(), profile: 'large' });
    await ctx.scan();
    fs.listed.length = 0;
    await ctx.grep('satisfies');
    await ctx.grep('x', { output: 'count' });
    await ctx.glob('**/*.js');
    await ctx.listFiles();
    await ctx.findSymbol('satisfies');
    expect(fs.listed.filter((p) => /(^|\/)(node_modules|\.git|dist)(\/|$)/.test(p))).toEqual([]);
    expect(fs.listed.length).toBeGreaterThan(0);
    await ctx.grep('x', { includeIgnored: true });
    expect(fs.listed).toContain('node_modules');
    await ctx.close();
    await fs.close();
  });
});

describe('grep on a large real package (rxjs, memory backend)', () => {
  let RXJS: Record<string, string>;
  beforeAll(() => {
    RXJS = packageFiles(npmPackage('rxjs', '7.8.1'), () => true, 4 * 1024 * 1024);
  });

  test('a minified line is shown as a window around its match, within the small budget', async () => {
    const fs = new MemoryFilesystem({ files: RXJS });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    const r = await ctx.grep('mergeMap', { path: 'dist/bundles/rxjs.umd.min.js' });
    expect(r.counts.total).toBeGreaterThan(0);
    expectWithin(r, MODEL_PROFILES.small.perCallTokens);
    for (const hit of r.items) {
      expect(hit.text).toContain('mergeMap');
      expect(hit.text.length).toBeLessThanOrEqual(MAX_LINE_CHARS + 4);
    }
    await ctx.close();
    await fs.close();
  });

  test('past the counting cap a total is a lower bound, and says so', async () => {
    const fs = new MemoryFilesystem({ files: RXJS });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    const r = await ctx.grep(';', { literal: true, output: 'count' });
    expect(r.counts.exact).toBe(false);
    expect(r.counts.total).toBeGreaterThan(100);
    expect(r.items.reduce((n, h) => n + h.matches, 0)).toBeLessThanOrEqual(GREP_TALLY_CAP);
    expect(r.text).toMatch(/: at least [\d,]+ matching lines in at least [\d,]+ files/);
    expect(r.text).toContain('at least');
    expectWithin(r, MODEL_PROFILES.small.perCallTokens);
    await ctx.close();
    await fs.close();
  });
});

describe('findSymbol on eslint (memory backend)', () => {
  test('same-named definitions in a file are one hit whose getSymbol call lists the others; many hits offer a narrower path', async () => {
    const fs = new MemoryFilesystem({ files: packageFiles(npmPackage('eslint', '8.57.0'), (p) => p.startsWith('lib/')) });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    // A static getter and setter of one name.
    const path = 'lib/rule-tester/rule-tester.js';
    const r = await ctx.findSymbol('RuleTester.describe');
    expect(r.items.map((h) => `${h.path} ${h.qualifiedName}`)).toEqual([`${path} RuleTester.describe`]);
    const hit = r.items[0];
    expect(hit?.sameName).toBe(1);
    expect(r.text).toContain('(+1 same-named');
    // The adjacent pair is served as one property; `:set` serves the setter alone.
    const served = await ctx.getSymbol(path, 'RuleTester.describe');
    expect(served.startLine).toBeLessThanOrEqual(hit?.startLine ?? 0);
    expect(served.text).toContain('static get describe()');
    expect(served.text).toContain('static set describe(value)');
    const setter = await ctx.getSymbol(path, 'RuleTester.describe:set');
    expect(setter.text).toContain('static set describe(value)');
    expect(setter.text).not.toContain('static get describe()');

    // Every rule has a `create`: the result says how many, and where to narrow.
    const many = await ctx.findSymbol('create');
    expect(many.counts.total).toBeGreaterThan(200);
    expect(many.truncated).toBe(true);
    expect(many.text).toMatch(/narrow with findSymbol\("create", \{path: "lib\/[^"]+"\}\)/);
    expectWithin(many, MODEL_PROFILES.small.perCallTokens);
    const one = await ctx.findSymbol('create', { path: 'lib/rules/no-alert.js' });
    expect(one.items.map((h) => h.path)).toEqual(['lib/rules/no-alert.js']);
    const under = await ctx.findSymbol('create', { path: 'lib/rules/utils', limit: 100 });
    expect(under.items.every((h) => h.path.startsWith('lib/rules/utils/'))).toBe(true);
    await expect(ctx.findSymbol('create', { path: 'lib/nope' })).rejects.toMatchObject({ code: 'ENOENT' });
    await ctx.close();
    await fs.close();
  });
});

describe('grep past its counting cap (typescript lib declarations, memory backend)', () => {
  let LIB: Record<string, string>;
  /** Every line holding "(", as `rg --fixed-strings "("` lists them: 18,728 lines in 102 files, 10,818 of them in lib.dom.d.ts. */
  let WANT: Set<string>;
  beforeAll(() => {
    LIB = packageFiles(npmPackage('typescript', '5.9.3'), (p) => /^lib\/[^/]+\.d\.ts$/.test(p), 4 * 1024 * 1024);
    WANT = new Set(Object.entries(LIB).flatMap(([path, text]) => splitLines(text).flatMap((l, i) => (l.includes('(') ? [`${path}:${i + 1}`] : []))));
  });
  // Pages as large as the counting cap, so following the calls takes a few of them.
  const profile: ProfileInput = { base: 'large', perCallTokens: 200_000, sessionTokens: 100_000_000 };

  test('following next from the first page reaches every matching line; every capped page names the call for the rest', { timeout: 300_000 }, async () => {
    expect(WANT.size).toBeGreaterThan(GREP_TALLY_CAP * 1.5);
    const fs = new MemoryFilesystem({ files: LIB });
    const ctx = await createContext({ fs, store: testState(), profile });
    await ctx.scan();
    const seen = new Set<string>();
    let r: SearchResult<GrepHit> = await ctx.grep('(', { literal: true, limit: 10_000 });
    for (let pages = 1; ; pages++) {
      for (const h of r.items) seen.add(`${h.path}:${h.line}`);
      if (!r.counts.exact || r.counts.total > r.counts.skipped + r.counts.shown) expect(r.next, r.text.split('\n')[0]).toBeDefined();
      if (r.next === undefined || pages > 20) break;
      r = await follow<GrepHit>(ctx, r.next);
    }
    expect(seen.size).toBe(WANT.size);
    expect([...seen].filter((k) => !WANT.has(k))).toEqual([]);
    // Files: the same, a file a row.
    const files = new Set<string>();
    let f: SearchResult<GrepHit> = await ctx.grep('(', { literal: true, output: 'files', limit: 20 });
    for (let pages = 1; ; pages++) {
      for (const h of f.items) files.add(h.path);
      if (f.next === undefined || pages > 50) break;
      f = await follow<GrepHit>(ctx, f.next);
    }
    expect(files).toEqual(new Set([...WANT].map((k) => k.slice(0, k.lastIndexOf(':')))));
    await ctx.close();
    await fs.close();
  });

  test('an offset past the cap serves the lines there, counted from the offset on', { timeout: 300_000 }, async () => {
    const fs = new MemoryFilesystem({ files: LIB });
    const ctx = await createContext({ fs, store: testState(), profile });
    await ctx.scan();
    const all = await ctx.grep('(', { literal: true, limit: 10_000 });
    const past = await ctx.grep('(', { literal: true, offset: 10_001, limit: 20 });
    expect(past.counts.shown).toBe(20);
    expect(past.text.split('\n')[0]).toMatch(/showing lines 10,?002-10,?021/);
    expect(past.next).toMatch(/offset: 10021/);
    // The first page's lines end where the cap cut them; lines there are not served twice.
    expect(all.items.map((h) => `${h.path}:${h.line}`)).not.toContain(`${past.items[0]?.path}:${past.items[0]?.line}`);
    await ctx.close();
    await fs.close();
  });
});

describe('an offset at or past the end (semver, memory backend)', () => {
  test('says it is past the results and offers the last page, for every search', async () => {
    const fs = new MemoryFilesystem({ files: REAL });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    const first = {
      grep: await ctx.grep('satisfies'),
      files: await ctx.grep('satisfies', { output: 'files' }),
      glob: await ctx.glob('**/*.js'),
      listFiles: await ctx.listFiles('functions'),
      findSymbol: await ctx.findSymbol('parse'),
    };
    const past = (n: number) => ({
      grep: () => ctx.grep('satisfies', { offset: n }),
      files: () => ctx.grep('satisfies', { output: 'files', offset: n }),
      glob: () => ctx.glob('**/*.js', { offset: n }),
      listFiles: () => ctx.listFiles('functions', { offset: n }),
      findSymbol: () => ctx.findSymbol('parse', { offset: n }),
    });
    for (const [name, r0] of Object.entries(first)) {
      const total = r0.counts.total;
      expect(total, name).toBeGreaterThan(1);
      for (const n of [total, total + 50]) {
        const r = await past(n)[name as keyof typeof first]();
        const header = r.text.split('\n')[0] ?? '';
        expect(r.counts.shown, name).toBe(0);
        // No inverted range ("showing lines 14-13"), and the way back.
        expect(header, name).not.toMatch(/showing/);
        expect(r.text, name).toContain(`offset ${n} is past the`);
        expect(r.next, name).toBeDefined();
        const last = await follow<{ path: string }>(ctx, r.next as string);
        expect(last.counts.shown, `${name}: ${r.next}`).toBeGreaterThan(0);
        expect(last.counts.skipped + last.counts.shown, `${name}: ${r.next}`).toBe(total);
      }
    }
    await ctx.close();
    await fs.close();
  });
});

describe('findSymbol and declaration files', () => {
  test('hand-written declaration files are searched; when nothing is indexed, the note says why, truly', async () => {
    const fs = new MemoryFilesystem({
      files: {
        'src/env.d.ts': "export interface AppConfig {\n  port: number;\n}\nexport type Mode = 'dev' | 'prod';\n",
        'dist/index.d.ts': 'export declare function start(config: AppConfig): void;\n',
      },
    });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    const r = await ctx.findSymbol('AppConfig');
    expect(r.items.map((h) => `${h.path} ${h.qualifiedName} ${h.kind}`)).toEqual(['src/env.d.ts AppConfig interface']);
    // Emitted declarations are not searched, and a search that finds only them says so instead of asking for a scan.
    await ctx.close();
    const generatedOnly = new MemoryFilesystem({
      files: { 'dist/index.d.ts': 'export declare function start(): void;\n', 'dist/index.js': 'export function start() {}\n' },
    });
    const other = await createContext({ fs: generatedOnly, store: testState(), profile: 'small' });
    await other.scan();
    const none = await other.findSymbol('start');
    expect(none.counts.total).toBe(0);
    expect(none.text).not.toMatch(/scan/);
    expect(none.text).toContain('2 code files here are generated');
    expect(none.text).toContain('grep("start")');
    await other.close();
    const empty = await createContext({ fs: new MemoryFilesystem({ files: { 'README.md': '# x\n' } }), store: testState(), profile: 'small' });
    expect((await empty.findSymbol('start')).text).toContain('no code files');
    await empty.close();
  });
});
