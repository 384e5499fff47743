/**
 * The clean room of issue #14: README's first Quickstart command, run in a
 * fresh clone of this repository with PATH holding only the system's
 * directories (Node 20 on this machine) and a fresh HOME, so Node 24, pnpm
 * and every dependency are downloaded as on a new machine. About half a
 * minute here. What is tested is what is committed: the clone is of HEAD.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../../..');
const SYSTEM_NODE = '/usr/bin/node';

/** The major version of the system's own Node; 0 when it has none. */
function systemNodeMajor(): number {
  if (!existsSync(SYSTEM_NODE)) return 0;
  return Number(execFileSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' }).slice(1).split('.')[0]);
}

/** The commands of README's Quickstart block, comments cut. */
function quickstartCommands(): string[] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quickstart'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README has no sh block under ## Quickstart');
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}

const work = mkdtempSync(join(tmpdir(), 'ctxfs-quickstart-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the quickstart on a fresh machine', () => {
  it('README gives exactly two commands: the tour and the tests CI runs', () => {
    expect(quickstartCommands()).toEqual(['./start', './run-tests']);
    // .ci/run must call the second one, so the two cannot drift apart.
    expect(readFileSync(join(REPO, '.ci/run'), 'utf8')).toMatch(/^\.\/run-tests$/m);
  });

  it("a fresh clone runs README's first command to the end with only the system's PATH", { timeout: 300_000 }, () => {
    const clone = join(work, 'repo');
    const home = join(work, 'home');
    mkdirSync(home);
    execFileSync('git', ['clone', '--quiet', REPO, clone]);
    chmodSync(work, 0o755);

    // Only the machine's own settings for reaching the registry (its CA
    // bundle, a proxy) come through; nothing of this checkout's toolchain.
    const network = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
    const env: Record<string, string> = { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
    for (const name of network) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }

    const [first] = quickstartCommands();
    const started = Date.now();
    const run = spawnSync('bash', ['-c', first ?? 'false'], { cwd: clone, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const output = `${run.stdout}\n${run.stderr}`;
    console.log(`quickstart: ${first} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(run.status, output).toBe(0);

    // This machine's Node is older than 24, so the first command had to fetch its own.
    if (systemNodeMajor() < 24) expect(output).toContain('ctxfs: installing Node');
    expect(output).toMatch(/ctxfs: node v24\./);

    // Each step of the tour, by the product's own words rather than the headings alone.
    const steps: Array<[string, RegExp]> = [
      ['overview', /== 1\. Overview[\s\S]*# Workspace overview/],
      ['budgeted read', /== 2\. Budgeted read[\s\S]*over this call's budget of 1500 tokens[\s\S]*Content not sent/],
      ['search', /== 3\. Search[\s\S]*grep "WARN_DAYS": \d+ matching lines/],
      ['patch with its diff', /== 4\. Patch[\s\S]*Patched src\/pantry\.ts[\s\S]*-export const WARN_DAYS = 3;\n.*\+export const WARN_DAYS = 2;/],
      ['merge', /== 5\. Concurrent change, merged[\s\S]*your edit was merged with those changes/],
      ['conflict', /== 6\. Concurrent change, conflict[\s\S]*overlap yours[\s\S]*Nothing was written/],
      // The person's edit before the first ctxfs change is a version of its own (external), after the file's first content.
      ['history', /== 7\. History[\s\S]*#4 replace by llm:reviewer[\s\S]*#2 external by external[\s\S]*#1 initial/],
      ['undo', /== 8\. Undo[\s\S]*Undid change #\d+ of src\/shopping\.ts/],
      ['MCP', /== 9\. Connect an agent over MCP[\s\S]*packages\/mcp\/src\/bin\.ts --root[\s\S]*"mcpServers"/],
    ];
    for (const [step, pattern] of steps) expect(output, `the tour's ${step} step`).toMatch(pattern);

    // The tour works on a copy: the clone is as it was checked out.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: clone, encoding: 'utf8' })).toBe('');
  });

  // Runs only where the system Node is old (this machine's Node 20); elsewhere there is nothing old to run.
  it.runIf(existsSync(SYSTEM_NODE) && systemNodeMajor() < 22)('an old Node is told what it needs, by both bins and by pnpm demo', () => {
    const demo = spawnSync(SYSTEM_NODE, [join(REPO, 'examples', 'require-node.mjs')], { encoding: 'utf8' });
    expect(demo.status).toBe(1);
    expect(demo.stderr).toMatch(/ctxfs needs Node >= 22\.18 \(it runs TypeScript directly\); this is Node 20\.[\s\S]*\.\/start/);
    // The bins as `tsc` emits them (types stripped, nothing else changed), run by the old Node:
    // the check must stop it before the first import it cannot load.
    for (const [pkg, name] of [
      ['cli', 'ctxfs'],
      ['mcp', 'ctxfs-mcp'],
    ] as const) {
      const js = join(work, `${name}-bin.mjs`);
      writeFileSync(js, stripTypeScriptTypes(readFileSync(join(REPO, 'packages', pkg, 'src', 'bin.ts'), 'utf8')));
      const run = spawnSync(SYSTEM_NODE, [js, '--version'], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^${name} needs Node >= 22\\.18; this is Node 20\\.`));
      expect(run.stderr).not.toMatch(/ERR_|SyntaxError/);
    }
  });
});
