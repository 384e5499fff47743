/**
 * Workspaces the MCP tests serve: a small TypeScript project written to a
 * temporary directory, and real files from the installed packages where a
 * test needs size (a 2 MB declaration file, thousands of files).
 *
 * @module
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A small project: a README, a manifest, a few modules that import each other, notes. */
export const PROJECT: Readonly<Record<string, string>> = Object.freeze({
  'README.md': '# Demo service\n\nA login service used by the ctxfs MCP tests.\n',
  'package.json': '{\n  "name": "demo-service",\n  "version": "1.0.0",\n  "type": "module"\n}\n',
  'src/config.ts': [
    '/** Settings of the service. */',
    'export const retries = 3;',
    'export const timeoutMs = 5000;',
    '',
    'export function describeConfig(): string {',
    "  return 'retries=' + retries + ' timeout=' + timeoutMs;",
    '}',
    '',
  ].join('\n'),
  'src/auth.ts': [
    "import { retries } from './config.ts';",
    '',
    '/** Checks passwords. */',
    'export class AuthManager {',
    '  private attempts = 0;',
    '',
    '  login(user: string, password: string): boolean {',
    '    this.attempts += 1;',
    '    if (this.attempts > retries) return false;',
    "    return user === 'admin' && password === 'secret';",
    '  }',
    '',
    '  logout(): void {',
    '    this.attempts = 0;',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/util.ts': ['export function slugify(text: string): string {', "  return text.toLowerCase().replace(/\\s+/g, '-');", '}', ''].join('\n'),
  'docs/guide.md': '# Guide\n\n## Install\n\nRun the service.\n\n## Use\n\nCall login.\n',
});

/** Twenty numbered lines, `line 1` … `line 20`, for edits whose positions a test names. */
export const NUMBERED = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** A temporary directory holding a workspace at `root` (its state database goes beside it, inside `dir`). */
export interface TempWorkspace {
  readonly dir: string;
  readonly root: string;
  /** Reads a workspace file as it is on disk. */
  read(path: string): string;
  write(path: string, content: string | Uint8Array): void;
  remove(): void;
}

/** Writes `files` to a fresh temporary workspace. */
export function tempWorkspace(files: Readonly<Record<string, string | Uint8Array>> = PROJECT): TempWorkspace {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-mcp-test-'));
  const root = join(dir, 'ws');
  const write = (path: string, content: string | Uint8Array): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  mkdirSync(root);
  for (const [path, content] of Object.entries(files)) write(path, content);
  return {
    dir,
    root,
    read: (path) => readFileSync(join(root, path), 'utf8'),
    write,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const require = createRequire(import.meta.url);

/**
 * The DOM declarations TypeScript ships (about 2.3 MB, 40,000 lines): a large
 * real file. TypeScript 7 keeps its lib files in its platform package.
 */
export function libDomPath(): string {
  const typescript = dirname(realpathSync(require.resolve('typescript/package.json')));
  const platform = createRequire(join(typescript, 'package.json')).resolve(`@typescript/typescript-${process.platform}-${process.arch}/package.json`);
  return join(dirname(platform), 'lib', 'lib.dom.d.ts');
}

/**
 * `count` real source files from the repository's pnpm store (files of at
 * most 64 KB: most sources; a native binary would only slow the test), by
 * their store paths. Read into memory, so a test can seed them anywhere
 * without writing thousands of files to a temporary directory first.
 */
export function realFiles(count: number): Record<string, Uint8Array> {
  // typescript's real directory is <store>/typescript@<version>/node_modules/typescript.
  const store = join(dirname(realpathSync(require.resolve('typescript/package.json'))), '..', '..', '..');
  const files: Record<string, Uint8Array> = {};
  let found = 0;
  const walk = (dir: string, rel: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (found >= count) return;
      const abs = join(dir, e.name);
      // Links in the store lead to the same files again (a package's dependencies), so only real entries count.
      // node_modules is renamed: the scan leaves node_modules out, and these files are to be scanned.
      if (e.isDirectory()) walk(abs, `${rel}/${e.name === 'node_modules' ? 'deps' : e.name}`);
      else if (e.isFile() && statSync(abs).size <= 64 * 1024) {
        files[`${rel}/${e.name}`] = readFileSync(abs);
        found += 1;
      }
    }
  };
  for (const entry of readdirSync(store, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (found >= count) break;
    if (entry.isDirectory() && !entry.name.startsWith('.')) walk(join(store, entry.name), `vendor/${entry.name}`);
  }
  if (found < count) throw new Error(`only ${found} files found in ${store}; expected ${count}`);
  return files;
}
