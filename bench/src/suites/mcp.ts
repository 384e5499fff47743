/**
 * The ctxfs MCP server beside the official filesystem server (issue 13),
 * each spawned over stdio and driven by the MCP SDK's own `Client`, on the
 * same tree of real files (the sources of a few packages in this
 * repository's node_modules, copied into a temp dir).
 *
 * Round trips on a 3,500-file tree: reading a 1 KB file (`read_file` and
 * `read_lines` against `read_text_file`), a one-line edit that alternates
 * there and back so every call changes the file (`replace` against
 * `edit_file`), and listing a directory (`list_files` against
 * `list_directory`). Goal: every round trip of ours at most 1.00x the
 * official server's, although ours also budgets, redacts, versions and
 * audits.
 *
 * Start-up: spawn to the first answered request (initialize, then
 * `tools/list`) on a 35,000-file tree, each spawn with a new store, beside
 * the official server on the same tree and ours on a 3,500-file tree. Goal:
 * under 300 ms and not growing with the tree (35,000 ÷ 3,500 files ≤ 1.10x).
 *
 * Until `packages/mcp/src/bin.ts` exists, the official server runs alone and
 * every case says why ours did not run.
 *
 * @module
 */

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_PROFILES } from '@ctxfs/context';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type Case, defineSuite, fmtBytes, fmtMs, single } from '../harness.ts';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const repoDir = join(benchDir, '..');
const OUR_SOURCE = join(repoDir, 'packages', 'mcp', 'src', 'bin.ts');
const OUR_BUILT = join(repoDir, 'packages', 'mcp', 'dist', 'bundle', 'ctxfs-mcp.js');

const BIG = 35_000;
const SMALL = 3_500;
/** Ours on 35,000 files ÷ ours on 3,500: "does not grow with the tree", with room for spawn noise. */
const GROWTH = 1.1;
const FIRST_ANSWER_MS = 300;
/** A scan of 35,000 files may take a while; the SDK's 60 s default would cut it short. */
const SCAN_TIMEOUT_MS = 170_000;
/** Calls that warm a renewed server up before timing goes on. */
const WARM_CALLS = 100;
/** The round trips' profile: the largest session budget, so the fewest renewals. */
const ROUND_TRIP_PROFILE = 'large';

/**
 * Real sources nobody here wrote: [package, package it is resolved from].
 * About 1,760 files a copy (TypeScript and JavaScript, declarations, maps,
 * JSON, Markdown).
 */
const MATERIAL: ReadonlyArray<readonly [string, string?]> = [
  ['@modelcontextprotocol/sdk'],
  ['zod', '@modelcontextprotocol/sdk'],
  ['diff'],
  ['fast-glob'],
  ['memfs'],
];

// ------------------------------------------------------------------ the trees

interface SourceFile {
  readonly src: string;
  /** Path inside one copy of the material. */
  readonly rel: string;
  readonly size: number;
}

/** A package's directory as Node would find it from `fromDir` (no exports map involved). */
function packageDir(name: string, fromDir: string): string {
  const lookups = createRequire(join(fromDir, 'package.json')).resolve.paths(name) ?? [];
  for (const dir of lookups) {
    if (existsSync(join(dir, name, 'package.json'))) return realpathSync(join(dir, name));
  }
  throw new Error(`package ${name} not found from ${fromDir}`);
}

function walk(dir: string, rel: string, out: SourceFile[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // A nested node_modules would be left out by our server's default ignores and counted by theirs.
    if (entry.name === 'node_modules') continue;
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) walk(abs, `${rel}/${entry.name}`, out);
    else if (entry.isFile()) out.push({ src: abs, rel: `${rel}/${entry.name}`, size: statSync(abs).size });
  }
}

function material(): SourceFile[] {
  const files: SourceFile[] = [];
  for (const [name, from] of MATERIAL) {
    const dir = packageDir(name, from === undefined ? benchDir : packageDir(from, benchDir));
    walk(dir, name.replace(/^@/, '').replace('/', '-'), files);
  }
  return files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * Copies of the material side by side (`copy-01/`, `copy-02/`, …) until
 * `count` files. Real copies, not hard links: every file its own inode and
 * its own pages in the cache, as in a checkout.
 */
function buildTree(root: string, files: readonly SourceFile[], count: number): void {
  const made = new Set<string>();
  let n = 0;
  for (let copy = 1; n < count; copy++) {
    for (const f of files) {
      if (n === count) break;
      const to = join(root, `copy-${String(copy).padStart(2, '0')}`, f.rel);
      const parent = dirname(to);
      if (!made.has(parent)) {
        mkdirSync(parent, { recursive: true });
        made.add(parent);
      }
      copyFileSync(f.src, to);
      n++;
    }
  }
}

// ------------------------------------------------------------------ servers

interface Spec {
  readonly label: string;
  readonly args: readonly string[];
}

interface Server {
  readonly label: string;
  readonly client: Client;
  readonly transport: StdioClientTransport;
  /** The last few KB the server wrote to stderr. */
  readonly stderr: () => string;
  /** From the spawn to initialize answered. */
  readonly initializedMs: number;
  /** From the spawn to the tools/list answer's arrival, before the SDK client has processed it (it compiles a validator per output schema). */
  readonly listArrivedMs: number;
}

/** Spawns, initializes and lists the tools: a client's first answered request. */
async function start(spec: Spec): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...spec.args], stderr: 'pipe' });
  let tail = '';
  // Read it always: an unread pipe fills up and blocks the server.
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  });
  const client = new Client({ name: 'ctxfs-bench', version: '0.0.0' });
  const t0 = performance.now();
  let initializedMs: number;
  let listArrivedMs = Number.NaN;
  try {
    await client.connect(transport);
    initializedMs = performance.now() - t0;
    const deliver = transport.onmessage;
    transport.onmessage = (message) => {
      if (Number.isNaN(listArrivedMs)) listArrivedMs = performance.now() - t0;
      deliver?.(message);
    };
    await client.listTools();
  } catch (err) {
    await kill({ client, transport });
    throw new Error(`${spec.label}: ${(err as Error).message}${tail ? `; stderr: ${tail.trim()}` : ''}`);
  }
  return { label: spec.label, client, transport, stderr: () => tail, initializedMs, listArrivedMs };
}

/** Ends a server at once (start-up samples: what it was doing is of no interest). */
async function kill(server: Pick<Server, 'client' | 'transport'>): Promise<void> {
  const pid = server.transport.pid;
  if (pid !== null) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await server.client.close();
}

/** Closes stdin as a client does and waits; the SDK sends SIGTERM after 2 s. Returns the time taken. */
async function stop(server: Server): Promise<number> {
  const t0 = performance.now();
  await server.client.close();
  return performance.now() - t0;
}

/** A tool's answer: its text, and the tokens ours says it served (0 for theirs). */
interface Reply {
  readonly text: string;
  readonly tokens: number;
}

/**
 * Calls a tool. A tool error (`isError`), or an answer without `expect`, is
 * thrown: a refused call must never count as a fast one.
 */
async function call(server: Server, name: string, args: Record<string, unknown>, expect?: string, timeout?: number): Promise<Reply> {
  const result = await server.client.callTool({ name, arguments: args }, undefined, timeout === undefined ? undefined : { timeout });
  const content = (result.content ?? []) as ReadonlyArray<{ type: string; text?: string }>;
  const text = content.map((c) => c.text ?? '').join('\n');
  if (result.isError) throw new Error(`${server.label} ${name}: ${text.slice(0, 400)}`);
  if (expect !== undefined && !text.includes(expect))
    throw new Error(`${server.label} ${name} answered without ${JSON.stringify(expect)}: ${text.slice(0, 400)}`);
  const tokens = (result.structuredContent as { tokens?: unknown } | undefined)?.tokens;
  return { text, tokens: typeof tokens === 'number' ? tokens : 0 };
}

/**
 * Our server for the round trips. Its session has a token budget (the
 * profile's `sessionTokens`), and thousands of timed reads spend it; past it
 * every read is refused. So the tokens served are counted here, and before
 * the budget runs out the server is replaced by a new one (untimed: from
 * the case's cleanup), warmed up with the case's own call.
 */
class OurSession {
  #server: Server;
  #served = 0;
  readonly #open: () => Promise<Server>;
  readonly #budget: number;

  private constructor(server: Server, open: () => Promise<Server>, budget: number) {
    this.#server = server;
    this.#open = open;
    this.#budget = budget;
  }

  static async start(open: () => Promise<Server>, budget: number): Promise<OurSession> {
    return new OurSession(await open(), open, budget);
  }

  get server(): Server {
    return this.#server;
  }

  async call(name: string, args: Record<string, unknown>, expect?: string): Promise<Reply> {
    const reply = await call(this.#server, name, args, expect);
    this.#served += reply.tokens;
    return reply;
  }

  /** A new server when less than a tenth of the budget is left. */
  async renewIfLow(warm: () => Promise<unknown>): Promise<void> {
    if (this.#served < this.#budget * 0.9) return;
    await stop(this.#server);
    this.#server = await this.#open();
    this.#served = 0;
    for (let i = 0; i < WARM_CALLS; i++) await warm();
  }
}

/** Resident and peak resident memory of a process (Linux), in bytes. */
function memoryOf(pid: number | null): { rss: number; peak: number } | undefined {
  if (pid === null) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ the suite

/** How our server is started: its command line, or why it cannot be; and a counter naming its stores. */
interface Launch {
  readonly base: string;
  readonly ours: { readonly args: readonly string[]; readonly how: string } | { readonly missing: string };
  stores: number;
}

interface Env {
  readonly launch: Launch;
  readonly small: string;
  readonly big: string;
  readonly theirsEntry: string;
  readonly ours: OurSession | undefined;
  readonly theirs: Server;
  /** The 1 KB file, relative to a copy of the material. */
  readonly readRel: string;
  readonly readText: string;
  /** The directory listed, relative to a copy of the material, its entry count and one entry's name. */
  readonly list: { readonly rel: string; readonly entries: number; readonly first: string };
  /** The line the edit toggles. */
  readonly editLine: string;
  /** Figures of the 35,000-file probes, for the notes. */
  readonly probes: string;
}

/** Where one copy of the material starts in a tree. */
const copyDir = (n: number) => `copy-${String(n).padStart(2, '0')}`;

function ourCommand(): Launch['ours'] {
  if (!existsSync(OUR_SOURCE)) return { missing: 'packages/mcp/src/bin.ts does not exist yet (the server of issue 13)' };
  // As users run it, the package's bin (the bundle), when `pnpm bench`'s build has made it; else from the sources.
  if (existsSync(OUR_BUILT)) return { args: [OUR_BUILT], how: 'dist/bundle/ctxfs-mcp.js' };
  return { args: ['--conditions=ctxfs-source', OUR_SOURCE], how: 'src/bin.ts (not built)' };
}

/** The spec of our server on `root` with a new store: no state carried over from another spawn. */
function ourSpec(launch: Launch, root: string, label: string, extra: readonly string[] = []): Spec & { store: string } {
  if ('missing' in launch.ours) throw new Error(launch.ours.missing);
  const store = join(launch.base, 'stores', `${launch.stores++}.db`);
  return { label, args: [...launch.ours.args, '--root', root, '--store', store, ...extra], store };
}

function dropStore(store: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${store}${suffix}`, { force: true });
}

/** The text file of the material closest to 1 KB; ties go to the first path. */
function pickReadFile(files: readonly SourceFile[]): SourceFile {
  // Hand-written source, not a declaration file or a build's output.
  const text = files.filter(
    (f) => ['.ts', '.js'].includes(extname(f.rel)) && !f.rel.endsWith('.d.ts') && !f.rel.includes('/dist/') && f.size >= 900 && f.size <= 1200,
  );
  const best = text.reduce<SourceFile | undefined>((a, f) => (a === undefined || Math.abs(f.size - 1024) < Math.abs(a.size - 1024) ? f : a), undefined);
  if (best === undefined) throw new Error('no source file of about 1 KB in the material');
  return best;
}

/** The longest line that occurs once in `text` and is not blank: the edit's anchor. */
function pickEditLine(text: string): string {
  const lines = text.split('\n');
  const unique = lines.filter((l) => l.trim().length > 0 && text.indexOf(l) === text.lastIndexOf(l));
  const line = unique.reduce((a, l) => (l.length > a.length ? l : a), '');
  if (line === '') throw new Error('the 1 KB file has no unique line to edit');
  return line;
}

/** The material's directory with the most entries under 64: a directory a model lists. */
function pickListDir(files: readonly SourceFile[]): Env['list'] {
  const entries = new Map<string, Set<string>>();
  for (const f of files) {
    const parts = f.rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const set = entries.get(dir) ?? new Set<string>();
      set.add(parts[i] as string);
      entries.set(dir, set);
    }
  }
  let best = { rel: '', entries: 0, first: '' };
  for (const [rel, set] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (set.size < 64 && set.size > best.entries) best = { rel, entries: set.size, first: [...set].sort()[0] ?? '' };
  }
  return best;
}

const SUFFIX = ' // edited by the bench';

/** The edit's two directions, taken in turn: every call changes the file, and it stays two states. */
function toggler(line: string): () => { oldText: string; newText: string } {
  let there = false;
  return () => {
    there = !there;
    return there ? { oldText: line, newText: `${line}${SUFFIX}` } : { oldText: `${line}${SUFFIX}`, newText: line };
  };
}

export default defineSuite<Env>({
  name: 'mcp',
  description: 'ctxfs MCP server vs @modelcontextprotocol/server-filesystem over stdio (goal ≤ 1.00x a round trip; first answer < 300 ms, flat in tree size)',
  options: { rounds: 3, minSamples: 10, timeMs: 300, warmupMs: 100 },
  async setup() {
    const files = material();
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-bench-mcp-'));
    const small = join(base, 'small');
    const big = join(base, 'big');
    buildTree(small, files, SMALL);
    buildTree(big, files, BIG);
    mkdirSync(join(base, 'stores'));
    const fsDir = packageDir('@modelcontextprotocol/server-filesystem', benchDir);
    const bin = (JSON.parse(readFileSync(join(fsDir, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['mcp-server-filesystem'];
    if (bin === undefined) throw new Error('@modelcontextprotocol/server-filesystem has no mcp-server-filesystem bin');
    const launch: Launch = { base, ours: ourCommand(), stores: 0 };
    const theirsEntry = join(fsDir, bin);

    // The first tool call on 35,000 files: ours waits for its scan there. Then memory and shutdown.
    const probes: string[] = [];
    const probe = async (spec: Spec, tool: string, args: Record<string, unknown>) => {
      const t0 = performance.now();
      const server = await start(spec);
      const first = performance.now() - t0;
      await call(server, tool, args, undefined, SCAN_TIMEOUT_MS);
      const answered = performance.now() - t0;
      const mem = memoryOf(server.transport.pid);
      const closed = await stop(server);
      const memText = mem ? `RSS ${fmtBytes(mem.rss)} (peak ${fmtBytes(mem.peak)})` : 'RSS not readable here';
      const exit = closed > 1900 ? `did not exit on stdin EOF (closed after ${fmtMs(closed)}, SIGTERM)` : `exits on stdin EOF in ${fmtMs(closed)}`;
      probes.push(
        `${spec.label}: initialize ${fmtMs(server.initializedMs)}, tools/list arrived ${fmtMs(server.listArrivedMs)} and processed by the SDK client ${fmtMs(first)}, first ${tool} ${fmtMs(answered)} after spawn; ${memText}; ${exit}`,
      );
    };
    if (!('missing' in launch.ours)) {
      const spec = ourSpec(launch, big, `ctxfs-mcp (${launch.ours.how}), ${BIG.toLocaleString('en')} files`);
      await probe(spec, 'list_files', {});
      dropStore(spec.store);
    }
    await probe({ label: `server-filesystem, ${BIG.toLocaleString('en')} files`, args: [theirsEntry, big] }, 'list_directory', { path: big });

    // Long-lived servers on the small tree for the round trips; ours past its scan.
    const readFile = pickReadFile(files);
    const list = pickListDir(files);
    const readText = readFileSync(readFile.src, 'utf8');
    // Each server edits its own copy of the file; the second copy is cut short when the tree is, so check it is there.
    if (!existsSync(join(small, copyDir(2), readFile.rel))) throw new Error(`${readFile.rel} is not in the second copy of the material`);
    let ours: OurSession | undefined;
    if (!('missing' in launch.ours)) {
      const open = async () => {
        const server = await start(ourSpec(launch, small, 'ctxfs-mcp', ['--profile', ROUND_TRIP_PROFILE]));
        await call(server, 'list_files', {}, undefined, SCAN_TIMEOUT_MS);
        return server;
      };
      ours = await OurSession.start(open, MODEL_PROFILES[ROUND_TRIP_PROFILE].sessionTokens);
    }
    const theirs = await start({ label: 'server-filesystem', args: [theirsEntry, small] });
    return {
      launch,
      small,
      big,
      theirsEntry,
      ours,
      theirs,
      readRel: readFile.rel,
      readText,
      list,
      editLine: pickEditLine(readText),
      probes: probes.join('; '),
    };
  },
  async teardown(env) {
    if (env.ours) await stop(env.ours.server);
    if (env.theirs) await stop(env.theirs);
    rmSync(env.launch.base, { recursive: true, force: true });
  },
  cases(env) {
    const { theirs, ours } = env;
    const notRun = 'missing' in env.launch.ours ? `ctxfs-mcp not run: ${env.launch.ours.missing}` : '';
    const abs = (copy: number, rel: string) => join(env.small, copyDir(copy), rel);
    const ourPath = (copy: number, rel: string) => `${copyDir(copy)}/${rel}`;
    const lines = env.readText.split('\n').length - (env.readText.endsWith('\n') ? 1 : 0);
    const readNote = `${env.readRel} (${fmtBytes(Buffer.byteLength(env.readText))}, ${lines} lines)`;
    /** What every read must serve (a numbered view shows the line after its number). */
    const readExpect = env.editLine.trim();
    const listName = `list a directory of ${env.list.entries} entries: ${env.list.rel}`;

    // Reads: both servers read copy 1's file. Edits: ours edits copy 1's, theirs copy 2's, so neither sees the other's changes.
    const theirsRead = () => call(theirs, 'read_text_file', { path: abs(1, env.readRel) }, readExpect);
    const theirsToggle = toggler(env.editLine);
    const theirsEdit = () => call(theirs, 'edit_file', { path: abs(2, env.readRel), edits: [theirsToggle()] });
    const theirsList = () => call(theirs, 'list_directory', { path: abs(1, env.list.rel) }, env.list.first);

    /** After an edit there and back, the file on disk must be what it was; in between, edited. */
    const checkEdit = async (label: string, file: string, edit: () => Promise<unknown>) => {
      // The timed runs may have made an odd number of edits, leaving the file edited: the next toggle goes back first.
      if (readFileSync(file, 'utf8').includes(`${env.editLine}${SUFFIX}`)) await edit();
      await edit();
      if (!readFileSync(file, 'utf8').includes(`${env.editLine}${SUFFIX}`)) throw new Error(`${label}: the edit did not reach the disk`);
      await edit();
      if (readFileSync(file, 'utf8') !== env.readText) throw new Error(`${label}: the edit back did not restore the file`);
    };

    const startTheirs = () => start({ label: 'server-filesystem', args: [env.theirsEntry, env.big] });
    type Started = { server: Server; store?: string };
    const startOurs = async (root: string, files: number): Promise<Started> => {
      const spec = ourSpec(env.launch, root, `ctxfs-mcp, ${files.toLocaleString('en')} files`);
      return { server: await start(spec), store: spec.store };
    };
    const cleanupStart = async (r: unknown) => {
      const started = r as Started;
      await kill(started.server);
      if (started.store) dropStore(started.store);
    };
    const firstName = `first answer (spawn → initialize → tools/list), ${BIG.toLocaleString('en')} files, new store each spawn`;

    if (ours === undefined) {
      const theirsOnly = (name: string, subjectName: string, run: () => Promise<unknown>, verify?: () => unknown): Case =>
        single({ kind: 'single', name, subjectName, run, note: notRun, ...(verify ? { verify } : {}) });
      return [
        theirsOnly(`read 1 KB file: ${readNote}`, 'server-filesystem read_text_file', theirsRead),
        theirsOnly('edit one line of that file, there and back in turn', 'server-filesystem edit_file', theirsEdit, () =>
          checkEdit('edit_file', abs(2, env.readRel), theirsEdit),
        ),
        theirsOnly(listName, 'server-filesystem list_directory', theirsList),
        single({
          kind: 'single',
          name: firstName,
          subjectName: 'server-filesystem',
          run: async (): Promise<Started> => ({ server: await startTheirs() }),
          cleanup: cleanupStart,
          note: `${notRun}; ${env.probes}`,
        }),
      ];
    }

    const oursRead = () => ours.call('read_file', { path: ourPath(1, env.readRel) }, readExpect);
    const oursReadLines = () => ours.call('read_lines', { path: ourPath(1, env.readRel), start_line: 1, end_line: lines }, readExpect);
    const oursToggle = toggler(env.editLine);
    const oursEdit = () => ours.call('replace', { path: ourPath(1, env.readRel), ...renamed(oursToggle()) });
    const oursList = () => ours.call('list_files', { path: ourPath(1, env.list.rel) }, env.list.first);
    const target = { maxRatio: 1 };
    const goal = `goal: ≤ 1.00x the official server; ours with --profile ${ROUND_TRIP_PROFILE}, renewed before its session budget runs out`;
    /** A round trip, ours against theirs. */
    const roundTrip = (name: string, subjectName: string, subject: () => Promise<Reply>, baselineName: string, baseline: () => Promise<Reply>): Case => ({
      name,
      subjectName,
      subject,
      baselineName,
      baseline,
      target,
      // Checked after every call of either side: cheap unless ours has to be renewed.
      cleanup: () => ours.renewIfLow(subject),
      note: goal,
    });
    return [
      roundTrip(`read 1 KB file, whole: ${readNote}`, 'ctxfs-mcp read_file', oursRead, 'server-filesystem read_text_file', theirsRead),
      roundTrip(`read 1 KB file, lines 1-${lines}: ${readNote}`, 'ctxfs-mcp read_lines', oursReadLines, 'server-filesystem read_text_file', theirsRead),
      {
        ...roundTrip('edit one line of that file, there and back in turn', 'ctxfs-mcp replace', oursEdit, 'server-filesystem edit_file', theirsEdit),
        verify: async () => {
          await checkEdit('replace', join(env.small, ourPath(1, env.readRel)), oursEdit);
          await checkEdit('edit_file', abs(2, env.readRel), theirsEdit);
        },
        note: `${goal}; each side edits its own copy of the file`,
      },
      roundTrip(listName, 'ctxfs-mcp list_files', oursList, 'server-filesystem list_directory', theirsList),
      {
        name: firstName,
        subjectName: `ctxfs-mcp, ${BIG.toLocaleString('en')} files`,
        subject: () => startOurs(env.big, BIG),
        baselineName: `server-filesystem, ${BIG.toLocaleString('en')} files`,
        baseline: async (): Promise<Started> => ({ server: await startTheirs() }),
        moreBaselines: [{ name: `ctxfs-mcp, ${SMALL.toLocaleString('en')} files`, fn: () => startOurs(env.small, SMALL), target: { maxRatio: GROWTH } }],
        cleanup: cleanupStart,
        budget: { maxMs: FIRST_ANSWER_MS },
        note: `goal: < ${FIRST_ANSWER_MS} ms, and ≤ ${GROWTH.toFixed(2)}x ours on ${SMALL.toLocaleString('en')} files; ${env.probes}`,
      },
    ];
  },
});

/** The official server's edit in our tool's argument names. */
function renamed(edit: { oldText: string; newText: string }): { old_text: string; new_text: string } {
  return { old_text: edit.oldText, new_text: edit.newText };
}
