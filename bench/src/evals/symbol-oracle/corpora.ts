/**
 * The corpora of the symbol oracle eval: real source trees nobody here
 * wrote, each in its language's own hands — Python packages as Debian
 * ships them, TypeScript packages as npm ships them, Go's standard library
 * (Debian's golang source), Java from the JDK's own `src.zip`. Fetched on
 * first use into ~/.cache/ctxfs-bench.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { npmPackage } from '../../../../packages/context/test/support/npm-package.ts';

const CACHE = join(homedir(), '.cache', 'ctxfs-bench');

/** One source tree of a language and the files of it that are drawn. */
export interface OracleCorpus {
  /** Registry language id of the files (`typescript`, `python`, `go`, `java`). */
  readonly language: string;
  readonly name: string;
  /** Where the tree comes from, as a person would say it. */
  readonly source: string;
  /** The tree's root on disk (fetched when missing). */
  readonly root: () => string;
  /** Files whose definitions count (paths below the root). */
  readonly files: RegExp;
}

/** A Debian package unpacked with `dpkg -x` (downloaded with `apt-get download`). */
function debianPackage(name: string, version: string): string {
  const dir = join(CACHE, 'debian', `${name}_${version}`);
  if (existsSync(join(dir, 'usr'))) return dir;
  mkdirSync(join(CACHE, 'debian'), { recursive: true });
  const download = spawnSync('apt-get', ['download', `${name}=${version}`], { cwd: join(CACHE, 'debian'), encoding: 'utf8' });
  if (download.status !== 0) throw new Error(`apt-get download ${name}=${version} failed: ${download.stderr}`);
  const deb = readdirSync(join(CACHE, 'debian')).find((f) => f.startsWith(`${name}_${version}_`) && f.endsWith('.deb'));
  if (deb === undefined) throw new Error(`apt-get download ${name} left no .deb`);
  rmSync(dir, { recursive: true, force: true });
  const unpack = spawnSync('dpkg', ['-x', join(CACHE, 'debian', deb), dir]);
  if (unpack.status !== 0) throw new Error(`dpkg -x ${deb} failed`);
  return dir;
}

/** Go's standard library as the installed toolchain holds it (Debian's golang-go). */
function goRoot(): string {
  const r = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error('go is not installed (apt-get install golang-go)');
  return join(r.stdout.trim(), 'src');
}

/** The JDK's own sources, unpacked from the `src.zip` of the first JDK that has one. */
function jdkSources(): string {
  const dir = join(CACHE, 'jdk-src');
  if (existsSync(join(dir, 'java.base'))) return dir;
  const zip = ['/usr/lib/jvm']
    .flatMap((base) => (existsSync(base) ? readdirSync(base).map((d) => join(base, d, 'lib', 'src.zip')) : []))
    .find((p) => existsSync(p));
  if (zip === undefined) throw new Error('no JDK src.zip under /usr/lib/jvm');
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('unzip', ['-q', '-o', zip, 'java.base/java/util/*', 'jdk.compiler/com/sun/tools/javac/comp/*', 'java.net.http/*', '-d', dir]);
  if (r.status !== 0) throw new Error(`cannot unzip ${zip}`);
  return dir;
}

const PY = 'usr/lib/python3/dist-packages';

export const ORACLE_CORPORA: readonly OracleCorpus[] = [
  {
    language: 'python',
    name: 'pytest',
    source: 'Debian python3-pytest 7.2.1-2',
    root: () => debianPackage('python3-pytest', '7.2.1-2'),
    files: new RegExp(`^${PY}/_?pytest/.*\\.py$`),
  },
  {
    language: 'python',
    name: 'click',
    source: 'Debian python3-click 8.1.3-2',
    root: () => debianPackage('python3-click', '8.1.3-2'),
    files: new RegExp(`^${PY}/click/.*\\.py$`),
  },
  {
    language: 'python',
    name: 'attrs',
    source: 'Debian python3-attr 22.2.0-1',
    root: () => debianPackage('python3-attr', '22.2.0-1'),
    files: new RegExp(`^${PY}/attrs?/.*\\.py$`),
  },
  { language: 'python', name: 'gyp', source: 'npm node-gyp 10.1.0 (gyp)', root: () => npmPackage('node-gyp', '10.1.0'), files: /^gyp\/pylib\/gyp\/.*\.py$/ },
  { language: 'typescript', name: 'mobx', source: 'npm mobx 6.13.5', root: () => npmPackage('mobx', '6.13.5'), files: /^src\/.*\.ts$/ },
  { language: 'typescript', name: 'rxjs', source: 'npm rxjs 7.8.1', root: () => npmPackage('rxjs', '7.8.1'), files: /^src\/internal\/.*\.ts$/ },
  {
    language: 'typescript',
    name: 'query-core',
    source: 'npm @tanstack/query-core 5.59.0',
    root: () => npmPackage('@tanstack/query-core', '5.59.0'),
    files: /^src\/.*\.ts$/,
  },
  {
    language: 'javascript',
    name: 'webpack',
    source: 'npm webpack 5.91.0',
    root: () => npmPackage('webpack', '5.91.0'),
    files: /^lib\/.*\.js$/,
  },
  {
    language: 'javascript',
    name: 'eslint',
    source: 'npm eslint 8.57.0',
    root: () => npmPackage('eslint', '8.57.0'),
    files: /^lib\/(linter|rule-tester|source-code|rules\/utils)\/.*\.js$/,
  },
  {
    language: 'go',
    name: 'go-stdlib',
    source: 'Go standard library (Debian golang-go)',
    root: goRoot,
    files: /^(encoding\/json|net\/http|net\/http\/httputil|text\/template|go\/ast|go\/printer|go\/types|database\/sql|sort|strings)\/[^/]*\.go$/,
  },
  {
    language: 'java',
    name: 'jdk',
    source: 'JDK sources (src.zip)',
    root: jdkSources,
    files: /^(java\.base\/java\/util\/(concurrent\/)?[^/]*|jdk\.compiler\/com\/sun\/tools\/javac\/comp\/[^/]*|java\.net\.http\/.*)\.java$/,
  },
];

/** The corpus's files (relative paths, sorted), without `.d.ts` declarations. */
export function corpusFiles(corpus: OracleCorpus, root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split('\\').join('/');
      if (e.isDirectory()) walk(abs);
      else if (e.isFile() && corpus.files.test(rel) && !rel.endsWith('.d.ts') && statSync(abs).size <= 1024 * 1024) out.push(rel);
    }
  };
  walk(root);
  return out.sort();
}

/** A file's text when it is UTF-8, else undefined. */
export function readUtf8(path: string): string | undefined {
  const bytes = readFileSync(path);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
