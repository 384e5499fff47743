/**
 * Runs the built `ctxfs` as a user would: `node dist/bundle/ctxfs.js` (the
 * package's `bin`) in a temporary project, with its own config and state
 * directories (the user's are never read or written), piped
 * stdin/stdout/stderr, no colour variables.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { JSON_SHAPES } from '@ctxfs/cli';
import { outputJsonSchema, TOOLS } from '@ctxfs/tools';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll } from 'vitest';
import type { z } from 'zod';

export const REPO = join(import.meta.dirname, '..', '..', '..', '..');
export const BIN = join(REPO, 'packages', 'cli', 'dist', 'bundle', 'ctxfs.js');
/** The compiled, unbundled `ctxfs` the bundle is made from: its modules one file each, as `tsc -b` wrote them. */
export const UNBUNDLED_BIN = join(REPO, 'packages', 'cli', 'dist', 'bin.js');
/** The vocabulary cache the tests' commands share (not the user's): see `CTXFS_CACHE_DIR`. */
const CACHE_DIR = join(tmpdir(), 'ctxfs-test-cache');

/**
 * Builds the CLI and what it imports as `pnpm build` does (`tsc -b`, then the
 * bundle; each a no-op when current). Test files run in parallel workers, so
 * one builds at a time, behind a lock directory.
 */
export async function ensureBuilt(): Promise<void> {
  const lock = join(REPO, 'packages', 'cli', 'dist', '.build-lock');
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed run is older than any build takes.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000) rmSync(lock, { recursive: true, force: true });
      await sleep(200);
    }
  }
  try {
    execFileSync(join(REPO, 'node_modules', '.bin', 'tsc'), ['-b', join(REPO, 'packages', 'cli')], { cwd: REPO, stdio: 'pipe' });
    execFileSync(process.execPath, [join(REPO, 'scripts', 'bundle-bins.ts'), '--if-stale'], { cwd: REPO, stdio: 'pipe' });
  } finally {
    rmdirSync(lock);
  }
}

/** A temporary project and the environment ctxfs runs in for it. */
export interface Project {
  readonly base: string;
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  /** Writes a file of the project (parents made). */
  write(path: string, text: string): void;
  remove(): void;
}

/** Files of the demo project every test starts from. */
export const FILES: Readonly<Record<string, string>> = {
  'README.md': '# Demo\n\nA small project for the ctxfs CLI tests.\n',
  'src/math.ts': '/** Adds two numbers. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport const retries = 3;\n',
  'src/main.ts': "import { add } from './math.ts';\n\nconsole.log(add(1, 2));\n",
  'notes.txt': 'status: draft\n',
  '.env': 'API_KEY=sk-test-0123456789abcdef\n',
};

/** Makes a project in a fresh temporary directory. */
export function makeProject(files: Readonly<Record<string, string>> = FILES): Project {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-cli-'));
  const root = join(base, 'proj');
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  mkdirSync(root);
  for (const [path, text] of Object.entries(files)) write(path, text);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(base, 'config'), XDG_STATE_HOME: join(base, 'state'), CTXFS_CACHE_DIR: CACHE_DIR };
  for (const k of ['NO_COLOR', 'FORCE_COLOR', 'CTXFS_BACKEND', 'CTXFS_ROOT', 'CTXFS_PROFILE', 'CTXFS_AGENT', 'CTXFS_SESSION', 'CTXFS_STORE']) delete env[k];
  return { base, root, env, write, remove: () => rmSync(base, { recursive: true, force: true }) };
}

/**
 * The project of a `describe` block: the CLI built and the project made
 * before its tests, removed after them. Its fields can be read once the
 * tests run.
 */
export function useProject(files: Readonly<Record<string, string>> = FILES, prepare?: (p: Project) => void): Project {
  let current: Project | undefined;
  beforeAll(async () => {
    await ensureBuilt();
    current = makeProject(files);
    prepare?.(current);
  });
  afterAll(() => current?.remove());
  const get = (): Project => {
    if (current === undefined) throw new Error('the project is made before the tests (beforeAll)');
    return current;
  };
  return {
    get base() {
      return get().base;
    },
    get root() {
      return get().root;
    },
    get env() {
      return get().env;
    },
    write: (path, text) => get().write(path, text),
    remove: () => get().remove(),
  };
}

/** What a run printed and exited with. */
export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout as JSON. */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs `command` in the project as a shell runs a line a person pasted,
 * `ctxfs` being the built binary: how the tests follow a hint as written
 * (in `cwd`, default the project's root, with `env` added to its variables).
 */
export function pasted(project: Project, command: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Omit<Run, 'json'> {
  const r = spawnSync('bash', ['-c', `ctxfs() { "${process.execPath}" "${BIN}" "$@"; }\n${command}`], {
    cwd: options.cwd ?? project.root,
    env: { ...project.env, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TRACER = join(import.meta.dirname, 'trace-modules.ts');

/**
 * Runs `bin args…` (default the bundled `ctxfs`) in the project under the
 * module tracer (trace-modules.ts); it must exit 0. Returns what it printed
 * and the tracer's lines in order: every module URL resolved, and
 * `worker:online` or `worker:error …` for each worker thread.
 */
export function traced(project: Project, args: readonly string[], bin = BIN): { stdout: string; lines: string[] } {
  const file = join(project.base, `trace-${process.hrtime.bigint()}.txt`);
  const r = spawnSync(process.execPath, ['--import', TRACER, bin, ...args], {
    cwd: project.root,
    env: { ...project.env, CTXFS_TRACE_MODULES: file },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  rmSync(file, { force: true });
  return { stdout: r.stdout, lines };
}

/** Runs `ctxfs args…` in the project, piped. */
export function ctxfs(project: Project, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? project.root,
    env: { ...project.env, ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json<T>() {
      try {
        return JSON.parse(r.stdout) as T;
      } catch {
        throw new Error(`stdout is not JSON (exit ${r.status}):\n${r.stdout}\nstderr:\n${r.stderr}`);
      }
    },
  };
}

const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * Checks `data` against the documented `--json` shape of `command` (a key of
 * `JSON_SHAPES`): a tool's output schema, or the CLI's own. Returns the
 * errors, empty when it matches.
 */
export function shapeErrors(command: string, data: unknown): string[] {
  const shape = JSON_SHAPES[command];
  if (shape === undefined) return [`no documented shape for ${command}`];
  if (typeof shape === 'string') {
    const tool = TOOLS.find((t) => t.name === shape);
    if (tool === undefined) return [`no tool ${shape}`];
    const check = ajv.compile(outputJsonSchema(tool));
    return check(data) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }
  const r = (shape as z.ZodType).safeParse(data);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
}

/** How every ANSI escape sequence (colour, cursor movement) starts. */
export const ESC = '\u001b[';
