import { describe, expect, it } from 'vitest';
import { BIN, traced, UNBUNDLED_BIN, useProject } from './support/cli.ts';

// Fast start, checked by what is loaded rather than by a clock (the figures are in bench/: pnpm bench cli).
// Module by module on the unbundled build: the bundle's chunks split where its
// modules import lazily, so what one leaves unloaded the other does too; then
// the bundle itself, by the files it reads.
describe('what ctxfs loads to start', () => {
  const project = useProject();

  function modules(args: readonly string[], bin = UNBUNDLED_BIN): string[] {
    return [...new Set(traced(project, args, bin).lines)];
  }

  /** What a command that serves a model's view needs, and a quick one must not load. */
  const HEAVY = [/\/packages\/(context|tools|mcp)\//, /^node:sqlite$/, /gpt-tokenizer/, /tree-sitter/, /\/zod@/, /@modelcontextprotocol/];
  const heavy = (loaded: readonly string[]): string[] => loaded.filter((url) => HEAVY.some((re) => re.test(url)));
  /** What reading one UTF-8 file never calls: legacy-encoding detection, the regex engine, the lock library, globs. */
  const UNCALLED = [/\/(jschardet|chardet|iconv-lite|re2js|proper-lockfile|picomatch)@/, /\/language-data\.js$/];
  /** What only a command (run_command) needs: the container backend, just-bash and the engines' clients. */
  const COMMANDS = [/\/packages\/(commands|container|just-bash)\//, /\/(dockerode|ssh2|@grpc\+grpc-js|just-bash)@/];
  const matching = (loaded: readonly string[], res: readonly RegExp[]): string[] => loaded.filter((url) => res.some((re) => re.test(url)));

  it('--version loads commander and none of ctxfs', () => {
    const loaded = modules(['--version']);
    expect(loaded.some((u) => u.includes('/commander@'))).toBe(true);
    expect(loaded.filter((u) => /\/packages\/(?!cli\/)/.test(u))).toEqual([]);
    expect(heavy(loaded)).toEqual([]);
  });

  it('cat --raw loads the policy and the audit (a guarded session, SQLite), not retrieval, the tools or the tokenizer', () => {
    const loaded = modules(['cat', '--raw', 'src/math.ts']);
    expect(loaded.some((u) => u.includes('/packages/host/'))).toBe(true);
    expect(loaded).toContain('node:sqlite');
    expect(loaded.some((u) => /\/packages\/context\/(src|dist)\/session\/guarded-session\.[jt]s$/.test(u))).toBe(true);
    // The guard's entry, not the context layer's index: what serves a model's view stays unloaded.
    const contextLayer = /\/packages\/context\/(src|dist)\/(index|context-layer|retrieval\/|search\/|symbols\/|buffers\/|tokens\/)/;
    expect(loaded.filter((u) => contextLayer.test(u))).toEqual([]);
    expect(loaded.filter((u) => /gpt-tokenizer|tree-sitter|\/zod@|\/diff@|\/packages\/tools\//.test(u))).toEqual([]);
    // The policy's path patterns are globs (picomatch); the rest of what a UTF-8 read never calls stays unloaded.
    expect(matching(loaded, UNCALLED).filter((u) => !u.includes('/picomatch@'))).toEqual([]);
    expect(matching(loaded, COMMANDS)).toEqual([]);
  });

  it('the budgeted cat loads SQLite, the tokenizer and the tools, not the command runner', () => {
    const loaded = modules(['cat', 'src/math.ts']);
    expect(loaded).toContain('node:sqlite');
    expect(loaded.some((u) => /\/packages\/context\/(src|dist)\/tokens\/vocabulary-cache\.[jt]s$/.test(u))).toBe(true);
    // The vocabulary is read as data (the rank file, or the user's cache of it built), never as gpt-tokenizer's 2.4 MB module of ranks.
    expect(loaded.some((u) => /\/gpt-tokenizer\/data\/o200k_base\.tiktoken$/.test(u))).toBe(true);
    expect(loaded.filter((u) => /gpt-tokenizer.*\.js$/.test(u))).toEqual([]);
    expect(loaded.some((u) => u.includes('/packages/tools/'))).toBe(true);
    // The tool set holds run_command, but its runner loads with the first command.
    expect(matching(loaded, COMMANDS)).toEqual([]);
  });

  // What the bundle saves is files: each module a resolution, a read and a link.
  describe('the bundle', () => {
    const own = (loaded: readonly string[]): string[] => loaded.filter((u) => /\/packages\/[^/]+\/dist\//.test(u));
    const bundled = (loaded: readonly string[]): string[] => own(loaded).filter((u) => u.includes('/packages/cli/dist/bundle/'));

    it('serves every command below from its own chunks: no compiled module of a ctxfs package is loaded on its own', () => {
      for (const args of [['--version'], ['cat', '--raw', 'src/math.ts'], ['cat', 'src/math.ts'], ['outline', 'src/math.ts']]) {
        const loaded = modules(args, BIN);
        expect(bundled(loaded).length, args.join(' ')).toBeGreaterThan(0);
        expect(
          own(loaded).filter((u) => !u.includes('/packages/cli/dist/bundle/')),
          args.join(' '),
        ).toEqual([]);
      }
    });

    it('loads a handful of files where the unbundled build loads hundreds', () => {
      const files = (loaded: readonly string[]) => loaded.filter((u) => u.startsWith('file:') && /\.[cm]?js$/.test(u));
      const version = files(modules(['--version'], BIN));
      const cat = files(modules(['cat', 'src/math.ts'], BIN));
      const unbundled = files(modules(['cat', 'src/math.ts']));
      expect(version.length).toBeLessThanOrEqual(4);
      expect(cat.length).toBeLessThanOrEqual(25);
      expect(unbundled.length).toBeGreaterThan(200);
      // --version needs no SQLite, and the budgeted cat no tree-sitter, in the bundle as out of it.
      expect(heavy(modules(['--version'], BIN)).filter((u) => !u.includes('/packages/cli/dist/bundle/'))).toEqual([]);
      expect(cat.filter((u) => /tree-sitter/.test(u))).toEqual([]);
    });

    it("takes Node's own modules without their ES module faces, which would load what no command here calls", () => {
      // An import of node:util loaded worker_threads, of node:crypto Web Crypto, and commander's of child_process dgram.
      // The public modules a command may load once Node has started are listed, so one newly pulled in at start-up
      // fails here instead of passing unnoticed (net comes all the same when stdout is a pipe, which is a socket;
      // perf_hooks with the first look at the global `performance`). Node's internal modules are not listed: they
      // change between patch releases; Web Crypto's is named because it is what an ES face of crypto costs.
      const allowed: Record<string, readonly string[]> = {
        '--version': ['process', 'net'],
        'cat --raw src/math.ts': ['process', 'net', 'crypto', 'sqlite', 'perf_hooks'],
        'cat src/math.ts': ['process', 'net', 'crypto', 'sqlite', 'fs/promises', 'perf_hooks'],
      };
      for (const [command, modulesAllowed] of Object.entries(allowed)) {
        const loaded = modules(command.split(' '), BIN).filter((u) => u.startsWith('builtin:'));
        const named = loaded.map((u) => u.slice('builtin:'.length));
        expect(
          named.filter((m) => !m.startsWith('internal/') && !modulesAllowed.includes(m)),
          command,
        ).toEqual([]);
        expect(
          named.filter((m) => m === 'internal/crypto/webcrypto'),
          command,
        ).toEqual([]);
        if (command !== '--version') expect(named, command).toContain('sqlite');
      }
    });
  });
});
