/**
 * What the README's "Using ctxfs in your project" promises, done for real:
 * the packages are built and packed with the root script, installed with
 * npm into a project in the system's temporary directory (outside this
 * workspace, so nothing resolves through pnpm's links or the source
 * condition), and the README's own program runs there under plain `node`.
 * Third-party dependencies come from the npm registry, so this takes a few
 * seconds to a minute.
 */

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const PACKAGES = ['core', 'memory', 'host', 'container', 'context', 'just-bash', 'commands', 'tools', 'mcp', 'adapters', 'cli'];

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command; a failure says which command, how it ended and the end of what it wrote. */
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err === null) return resolve({ stdout, stderr });
        const how = err.killed ? `killed after ${options.timeoutMs} ms` : `exit ${String(err.code)}`;
        const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-30).join('\n');
        reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd}) failed: ${how}\n${tail}`));
      },
    );
  });
}

/** The README's program: the first `js` block of its "Using ctxfs in your project" section. */
function readmeProgram(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Using ctxfs in your project'));
  const block = /```js\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 1)));
  if (block === null) throw new Error('README.md has no js block under "## Using ctxfs in your project"');
  return block[1] as string;
}

describe('a project outside the workspace, using the packed packages', () => {
  let dir: string;
  let app: string;
  // Plain node as a user runs it: no --conditions from the test runner's NODE_OPTIONS, no NODE_PATH, no user config or state.
  let env: NodeJS.ProcessEnv;
  let tarballs: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(realpathSync(tmpdir()), 'ctxfs-external-'));
    app = join(dir, 'app');
    mkdirSync(app);
    env = { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'state'), XDG_CACHE_HOME: join(dir, 'cache') };
    delete env.NODE_OPTIONS;
    // pnpm's shim of vitest sets NODE_PATH to the workspace's store, where every package of this repository
    // resolves: a program run with it finds libraries its install lacks.
    delete env.NODE_PATH;
    const packs = join(dir, 'packs');
    await run('pnpm', ['run', 'pack:packages'], { cwd: ROOT, env: { ...env, CTXFS_PACK_DIR: packs }, timeoutMs: 120_000 });
    tarballs = readdirSync(packs)
      .filter((f) => f.endsWith('.tgz'))
      .map((t) => join(packs, t));
    expect(tarballs.map((t) => t.replace(/^.*\//, '')).sort()).toEqual(PACKAGES.map((p) => `ctxfs-${p}-0.1.0.tgz`).sort());
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'uses-ctxfs', private: true, type: 'module' }, null, 2)}\n`);
    // --ignore-scripts: no native builds of optional dependencies (dockerode's ssh support); nothing here needs them.
    await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], {
      cwd: app,
      env,
      timeoutMs: 150_000,
    });
  }, 300_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('installs each package with its ctxfs dependencies as versions, and every export it names is in the package', () => {
    for (const name of PACKAGES) {
      const home = join(app, 'node_modules/@ctxfs', name);
      const manifest = JSON.parse(readFileSync(join(home, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        exports: Record<string, Record<string, string>>;
      };
      for (const [dep, spec] of Object.entries(manifest.dependencies ?? {})) expect(spec, `${name} → ${dep}`).not.toMatch(/^workspace:/);
      for (const [subpath, targets] of Object.entries(manifest.exports)) {
        for (const condition of ['types', 'default']) {
          const target = targets[condition];
          expect(target, `${name} ${subpath} ${condition}`).toMatch(/^\.\/dist\//);
          expect(existsSync(join(home, target as string)), `${name} ${subpath} ${condition}: ${target}`).toBe(true);
        }
      }
    }
  });

  it("runs the README's program under plain node: a host directory, scanned, a file read through the tools", async () => {
    writeFileSync(join(app, 'main.mjs'), readmeProgram());
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'src'), { recursive: true });
    writeFileSync(join(repo, 'src/greet.js'), "export function greet(name) {\n  return 'hello ' + name;\n}\n");
    const { stdout } = await run(process.execPath, ['main.mjs', repo, 'src/greet.js'], { cwd: app, env, timeoutMs: 60_000 });
    expect(stdout).toMatch(/^<file path="src\/greet\.js" version="[0-9a-f]{12}" lines="1-3 of 3" view="lines" nonce="\d{12}">\n/);
    expect(stdout).toContain("1\texport function greet(name) {\n2\t  return 'hello ' + name;\n3\t}\n");
    // The state went where the README says: beside the directory, in real SQLite.
    expect(existsSync(join(dir, '.repo.ctxfs/state.db'))).toBe(true);
  }, 60_000);

  it('imports every package, and starts the MCP server’s and the CLI’s commands, without the source condition', async () => {
    const program = PACKAGES.map((p) => `console.log('${p}', Object.keys(await import('@ctxfs/${p}')).length);`).join('\n');
    writeFileSync(join(app, 'imports.mjs'), `${program}\n`);
    const { stdout } = await run(process.execPath, ['imports.mjs'], { cwd: app, env, timeoutMs: 60_000 });
    for (const p of PACKAGES) expect(stdout).toMatch(new RegExp(`^${p} [1-9]\\d*$`, 'm'));
    const help = await run(join(app, 'node_modules/.bin/ctxfs-mcp'), ['--help'], { cwd: app, env, timeoutMs: 60_000 });
    expect(`${help.stdout}${help.stderr}`).toMatch(/--root/);
    const version = await run(join(app, 'node_modules/.bin/ctxfs'), ['--version'], { cwd: app, env, timeoutMs: 60_000 });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    // The bundled bin finds its siblings' files where npm put them: the tokenizer's ranks, tree-sitter's grammars, the digest workers.
    const ctxfs = (args: readonly string[]) => run(join(app, 'node_modules/.bin/ctxfs'), args, { cwd: app, env, timeoutMs: 60_000 });
    expect((await ctxfs(['cat', 'imports.mjs'])).stdout).toMatch(/<file path="imports.mjs"[^>]* lines="1-\d+ of \d+"/);
    expect((await ctxfs(['outline', 'imports.mjs'])).stdout).toContain('imports.mjs');
    for (let i = 0; i < 80; i++) writeFileSync(join(app, `f${i}.txt`), `file ${i}\n`);
    expect((await ctxfs(['scan'])).stdout).toMatch(/\d+ files: /);
  }, 120_000);

  // npm's linked strategy (as pnpm without hoisting) links each package from a store directory of its own, where
  // its dependencies are: the bundled bins must find a package's lazily required libraries from its real path.
  it('the bundled bins work where each package is linked from a store of its own (npm --install-strategy=linked)', async () => {
    const linked = join(dir, 'app-linked');
    mkdirSync(linked);
    writeFileSync(join(linked, 'package.json'), `${JSON.stringify({ name: 'uses-ctxfs-linked', private: true, type: 'module' }, null, 2)}\n`);
    await run('npm', ['install', '--install-strategy=linked', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], {
      cwd: linked,
      env,
      timeoutMs: 150_000,
    });
    writeFileSync(join(linked, 'notes.md'), '# Notes\n\nretries = 3\n');
    const ctxfs = (args: readonly string[]) => run(join(linked, 'node_modules/.bin/ctxfs'), args, { cwd: linked, env, timeoutMs: 60_000 });
    // The tokenizer's rank file, picomatch (the policy's patterns), re2js (grep's engine), tree-sitter's grammars.
    expect((await ctxfs(['cat', 'notes.md'])).stdout).toContain('retries = 3');
    expect((await ctxfs(['grep', 'retries\\s*='])).stdout).toContain('notes.md');
    expect((await ctxfs(['outline', 'notes.md'])).stdout).toContain('Notes');
    const help = await run(join(linked, 'node_modules/.bin/ctxfs-mcp'), ['--help'], { cwd: linked, env, timeoutMs: 60_000 });
    expect(`${help.stdout}${help.stderr}`).toMatch(/--root/);
  }, 240_000);
});
