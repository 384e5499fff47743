import { afterEach, describe, expect, it } from 'vitest';
import { FileRegistry, type PolicyConfig, resolvePolicy, SqliteStateStore } from '../src/index.ts';
import { compileGitignore, gitignoreNames } from '../src/registry/gitignore.ts';
import { BACKENDS, type Workspace } from './backends.ts';

// Policy paths and the root .gitignore are git patterns: what a glob library
// reads otherwise (a leading `!` after a backslash, `[!x]`, braces,
// parentheses) must mean what git means, or an allow rule opens the wrong files.

const read = (config: PolicyConfig, path: string, sensitive = false) =>
  resolvePolicy([{ source: 'code', config }]).decide({ op: 'read', path, agent: 'llm:test', sensitive }).effect;

describe('policy rules read their paths as git does', () => {
  it('an allow rule for the literal file `!important.md` (`\\!important.md`) allows that file and nothing else', () => {
    const config: PolicyConfig = { rules: [{ effect: 'allow', paths: ['\\!important.md'], ops: ['read'] }] };
    expect(read(config, '!important.md', true)).toBe('allow');
    expect(read(config, '.env', true)).toBe('deny');
    expect(read(config, 'id_rsa', true)).toBe('deny');
    expect(read({ ...config, mode: 'deny' }, '!important.md')).toBe('allow');
    expect(read({ ...config, mode: 'deny' }, 'README.md')).toBe('deny');
  });

  it('deny "config/[!p]*.json" is a negated class: db.json is denied, public.json is not', () => {
    const config: PolicyConfig = { rules: [{ effect: 'deny', paths: ['config/[!p]*.json'] }] };
    expect(read(config, 'config/db.json')).toBe('deny');
    expect(read(config, 'config/public.json')).toBe('allow');
    expect(read(config, 'config/sub/db.json')).toBe('allow');
  });

  it('braces and parentheses are plain characters', () => {
    const config: PolicyConfig = { rules: [{ effect: 'deny', paths: ['*.{pem,key}', 'x(1).txt'] }] };
    expect(read(config, 'k.pem')).toBe('allow');
    expect(read(config, 'k.{pem,key}')).toBe('deny');
    expect(read(config, 'x(1).txt')).toBe('deny');
    expect(read(config, 'x1.txt')).toBe('allow');
  });

  it('a directory rule covers what is inside; `dir/**` does not name the directory itself', () => {
    const config: PolicyConfig = { rules: [{ effect: 'deny', paths: ['secrets/', 'vendor/**'] }] };
    expect(read(config, 'secrets/db.txt')).toBe('deny');
    expect(read(config, 'app/secrets/x/y.txt')).toBe('deny');
    expect(read(config, 'vendor/lib.js')).toBe('deny');
    expect(read(config, 'vendor')).toBe('allow');
  });
});

describe('the root .gitignore, read as git reads it', () => {
  it('an escaped `!` names a file, braces and parentheses are literal, `!` re-includes', () => {
    expect(compileGitignore('\\!important.txt\n')('!important.txt')).toBe(true);
    expect(compileGitignore('\\!important.txt\n')('README.md')).toBe(false);
    expect(compileGitignore('*.{js,map}\n')('src/app.js')).toBe(false);
    expect(compileGitignore('x(1).txt\n')('x(1).txt')).toBe(true);
    expect(compileGitignore('x(1).txt\n')('x1.txt')).toBe(false);
    const logs = compileGitignore('*.log\n!keep.log\nbuild/\n!build/keep.txt\n');
    expect(logs('a/b.log')).toBe(true);
    expect(logs('keep.log')).toBe(false);
    expect(logs('build/keep.txt')).toBe(true);
  });

  it('a `name/` rule leaves out a path of that name when the kind is unknown, a file when told', () => {
    const m = compileGitignore('target/\n');
    expect(m('target')).toBe(true);
    expect(m('target', false)).toBe(false);
    expect(m('crates/x/target/out.rs', false)).toBe(true);
  });

  it('plain names go to the walk unless a later `!` could bring them back', () => {
    expect(gitignoreNames('dist\n!dist\ncache\n')).toEqual(['cache']);
    expect(gitignoreNames('dist\n!src/dis?\n')).toEqual([]);
    expect(gitignoreNames('dist\n!dist/keep.txt\n')).toEqual(['dist']);
  });
});

for (const backend of BACKENDS) {
  describe(`a registry over ${backend.name} with a .gitignore git reads literally`, () => {
    let ws: Workspace;
    let store: SqliteStateStore;
    afterEach(async () => {
      await store.close();
      await ws.cleanup();
    });

    it('`\\!important.txt` leaves out that one file; `*.{js,map}` and `x(1).txt` leave out only files so named', async () => {
      ws = await backend.create({
        '.gitignore': '\\!important.txt\n*.{js,map}\nx(1).txt\n',
        '!important.txt': 'x\n',
        'src/app.js': 'x\n',
        'src/app.js.map': 'x\n',
        'x1.txt': 'x\n',
        'x(1).txt': 'x\n',
        'README.md': 'x\n',
      });
      store = await SqliteStateStore.open();
      const registry = new FileRegistry(ws.fs, store);
      await registry.scan();
      expect(
        registry
          .list()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['.gitignore', 'README.md', 'src/app.js', 'src/app.js.map', 'x1.txt']);
    });
  });
}
