/**
 * A program acting on the workspace for a session's agent — a bash script
 * run by just-bash over the workspace, one command — between its start and
 * its end. The program reads and writes the backend directly (its writes
 * are visible to its own next read, as on a disk), but every path it
 * touches is first decided by the policy, and the content of every file
 * before its first change is kept in the version store (the run holds only
 * hashes, so a script over a large tree costs no memory for it) and noted
 * in history then; when the program ends, what changed is recorded as one
 * change of history with the command as its message, so one undo per file
 * restores what the program did to it.
 *
 * Another agent may change a file while the program runs. Its version then
 * sits between the program's: content the program wrote before it is
 * recorded as the program's when that agent reads the file (see
 * {@link programChanging}), and the program's version at the end follows
 * theirs. Undo reverts the program's versions together and keeps what the
 * other agent changed (or refuses, when the changes overlap).
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { type Filesystem, fsError, isFsError } from '@ctxfs/core';
import type { RecordedFile, StoredContent } from '../edits/file-editor.ts';
import type { FileVersion } from '../history/version-store.ts';
import type { Decision, OpClass } from '../safety/policy.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { type ProgramInFlight, programEnded, programStarted } from './in-flight.ts';

/** What a program run needs from its session. */
export interface ProgramRunDeps {
  readonly fs: Filesystem;
  /** The command line, recorded as the change's message. */
  readonly command: string;
  /** The policy's decision for one path. */
  decide(opClass: OpClass, path: string): Decision;
  /** Puts a content in the version store (so the run holds hashes, not contents). */
  keep(bytes: Uint8Array): Promise<StoredContent>;
  /** Records what changed as one change, and notes a file's content before the change (see `FileEditor.recordMade`). */
  record(files: readonly RecordedFile[], message: string): Promise<FileVersion[]>;
}

/** One file a program changed, as history recorded it. */
export interface ProgramChange {
  readonly path: string;
  readonly op: string;
  /** Its history position: `undo(path)` reverts it. */
  readonly seq: number;
  /** The content hash after the program (absent for a deletion). */
  readonly version: string | undefined;
}

/**
 * The policy's view and the history of one program run.
 *
 * @example
 * ```ts
 * const { value, changes } = await session.command('sed -i s/a/b/ *.txt', async (run) => {
 *   run.check('write', 'a.txt');
 *   await run.willChange('a.txt');
 *   await run.fs.writeBytes('a.txt', bytes);
 * });
 * changes.map((c) => c.path); // ['a.txt']
 * ```
 */
export class ProgramRun {
  readonly fs: Filesystem;
  readonly command: string;
  readonly #deps: ProgramRunDeps;
  /** Each touched file's content before the program's first change, kept in the version store (`null`: it did not exist). */
  readonly #before = new Map<string, StoredContent | null>();
  /** What a reader of a file the program is changing learns of it; absent outside a session's call (no author to record). */
  readonly #inFlight: ProgramInFlight | undefined;
  readonly #changeId = randomUUID();
  #finished = false;

  constructor(deps: ProgramRunDeps) {
    this.#deps = deps;
    this.fs = deps.fs;
    this.command = deps.command;
    const author = currentCall()?.agent;
    this.#inFlight =
      author === undefined ? undefined : { author, message: `$ ${deps.command}`, changeId: this.#changeId, before: (path) => this.#before.get(path) };
  }

  /**
   * Throws `EDENIED` when the policy refuses `opClass` on `path`. A path the
   * policy would ask a person about is refused too: a running program cannot
   * wait for an answer (allow it by a rule, or run the command with approval).
   */
  check(opClass: OpClass, path: string): void {
    const d = this.#deps.decide(opClass, path);
    if (d.effect === 'allow') return;
    throw fsError('EDENIED', opClass === 'read' ? 'read' : opClass === 'search' ? 'list' : 'write', path, {
      reason: d.effect === 'ask' ? `${d.reason}, and a running command cannot wait for an answer` : d.reason,
      hint: 'the policy keeps this path from the command; leave it alone or ask the user to change the policy',
    });
  }

  /** Keeps the content of `path` before its first change (call before every write, delete or rename). */
  async willChange(path: string): Promise<void> {
    if (this.#finished) throw new Error('ProgramRun: the program has ended');
    if (this.#before.has(path)) return;
    const before = await this.#current(path);
    // Noted now, not when the program ends: a version another agent records meanwhile then comes after it,
    // and the program's change is recorded after theirs, not over a return to this content nobody made.
    await this.#deps.record([{ path, before, after: before }], `$ ${this.command}`);
    if (this.#before.has(path)) return;
    this.#before.set(path, before);
    if (this.#inFlight !== undefined && this.#before.size === 1) programStarted(this.fs, this.#inFlight);
  }

  /** {@link willChange} for every file below `path` (a recursive delete, a directory moved away). */
  async willChangeTree(path: string): Promise<void> {
    const st = await this.fs.stat(path).catch(() => undefined);
    if (st?.kind !== 'directory') return this.willChange(path);
    for await (const batch of this.fs.walk(path)) {
      for (const e of batch) if (e.kind === 'file') await this.willChange(e.path);
    }
  }

  /** Paths the program changed or may have changed so far. */
  get touched(): readonly string[] {
    return [...this.#before.keys()];
  }

  /** Records what the program changed as one change; call once, when it ended (whatever its exit status). */
  async finish(): Promise<ProgramChange[]> {
    if (this.#finished) return [];
    this.#finished = true;
    try {
      const files: RecordedFile[] = [];
      for (const [path, before] of this.#before) files.push({ path, before, after: await this.#current(path), changeId: this.#changeId });
      if (files.length === 0) return [];
      const versions = await this.#deps.record(files, `$ ${this.command}`);
      return versions.map((v) => ({ path: v.path, op: v.op, seq: v.seq, version: v.sha256 }));
    } finally {
      if (this.#inFlight !== undefined) programEnded(this.fs, this.#inFlight);
    }
  }

  /** The file's content now, put in the version store; `null` where there is no file. */
  async #current(path: string): Promise<StoredContent | null> {
    const bytes = await currentBytes(this.fs, path);
    return bytes === null ? null : await this.#deps.keep(bytes);
  }
}

/** A file's bytes, or `null` where there is no file (absent, or a directory now). */
async function currentBytes(fs: Filesystem, path: string): Promise<Uint8Array | null> {
  try {
    return await fs.readBytes(path);
  } catch (err) {
    if (isFsError(err, 'ENOENT') || isFsError(err, 'EISDIR') || isFsError(err, 'ENOTDIR')) return null;
    throw err;
  }
}
