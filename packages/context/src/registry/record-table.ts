/**
 * The registry's records in memory, in columns: per file one map entry
 * (path to slot) and a few typed-array cells, instead of an object, a hash
 * string, boxed numbers and a tags array. A registry of a large tree holds
 * tens of thousands of records for its whole life; as objects they made V8
 * grow its young generation to the maximum during a first scan (every one
 * of them survives the collections that run while the scan allocates), and
 * that was most of a scan's resident memory.
 *
 * {@link FileRecord} objects are made when asked for, and are not kept.
 *
 * @module
 */

import { type FileTag, isGeneratedMask, maskOfTags, tagsOfMask } from './classify.ts';
import type { FileRecord } from './file-registry.ts';

const GENERATED_BIT = maskOfTags(['generated']);
const FLAG_ENTRYPOINT = 1;
const FLAG_SENSITIVE = 2;
const FLAG_HASHED = 4;

const SHA_BYTES = 32;

/** The records of one registry, by path. */
export class RecordTable {
  readonly #slots = new Map<string, number>();
  readonly #free: number[] = [];
  #capacity = 0;
  #next = 0;
  #size = new Float64Array(0);
  #mtimeMs = new Float64Array(0);
  #versionMs = new Float64Array(0);
  /** NaN when never accessed. */
  #lastAccessedMs = new Float64Array(0);
  #version = new Uint32Array(0);
  #accessCount = new Uint32Array(0);
  #tags = new Uint8Array(0);
  #flags = new Uint8Array(0);
  /** Index into `#languages`; 0 is no language. */
  #language = new Uint16Array(0);
  /** 32 bytes a slot: hex strings would be an object each. */
  #sha = Buffer.alloc(0);
  readonly #languages: Array<string | undefined> = [undefined];
  readonly #languageIndex = new Map<string, number>();

  /** Number of records. */
  get size(): number {
    return this.#slots.size;
  }

  has(path: string): boolean {
    return this.#slots.has(path);
  }

  /** Paths of all records, in no particular order. */
  paths(): IterableIterator<string> {
    return this.#slots.keys();
  }

  /** The record of `path`, made afresh. */
  get(path: string): FileRecord | undefined {
    const slot = this.#slots.get(path);
    return slot === undefined ? undefined : this.#recordAt(path, slot);
  }

  /** Records whose path starts with `prefix` and that carry `tag` (when given). */
  *select(prefix: string, tag: FileTag | undefined): Generator<FileRecord> {
    const bit = tag === undefined ? 0 : maskOfTags([tag]);
    for (const [path, slot] of this.#slots) {
      if (bit !== 0 && ((this.#tags[slot] as number) & bit) === 0) continue;
      if (prefix !== '' && !path.startsWith(prefix)) continue;
      yield this.#recordAt(path, slot);
    }
  }

  /** Paths of the sensitive records starting with `prefix`, unsorted; reads only the flags (no record is built). */
  sensitivePaths(prefix: string): string[] {
    const out: string[] = [];
    for (const [path, slot] of this.#slots) {
      if (((this.#flags[slot] as number) & FLAG_SENSITIVE) !== 0 && (prefix === '' || path.startsWith(prefix))) out.push(path);
    }
    return out;
  }

  /**
   * How a file the scan found stands against its record: `absent` (no
   * record), `unchanged` (hashed, same size and mtime) or `changed`.
   */
  compare(path: string, size: number, mtimeMs: number): 'absent' | 'unchanged' | 'changed' {
    const slot = this.#slots.get(path);
    if (slot === undefined) return 'absent';
    const same = ((this.#flags[slot] as number) & FLAG_HASHED) !== 0 && this.#size[slot] === size && this.#mtimeMs[slot] === mtimeMs;
    return same ? 'unchanged' : 'changed';
  }

  /** Stores `record` (replacing the record of its path). */
  set(record: FileRecord): void {
    let slot = this.#slots.get(record.path);
    if (slot === undefined) {
      slot = this.#free.pop() ?? this.#allocate();
      this.#slots.set(record.path, slot);
    }
    this.#size[slot] = record.size;
    this.#mtimeMs[slot] = record.mtimeMs;
    this.#versionMs[slot] = record.versionMs;
    this.#lastAccessedMs[slot] = record.lastAccessedMs ?? Number.NaN;
    this.#version[slot] = record.version;
    this.#accessCount[slot] = record.accessCount;
    this.#tags[slot] = maskOfTags(record.tags) | (record.generated ? GENERATED_BIT : 0);
    const hashed = record.sha256.length === SHA_BYTES * 2;
    this.#flags[slot] = (record.entrypoint ? FLAG_ENTRYPOINT : 0) | (record.sensitive ? FLAG_SENSITIVE : 0) | (hashed ? FLAG_HASHED : 0);
    this.#language[slot] = this.#languageId(record.language);
    if (hashed) this.#sha.write(record.sha256, slot * SHA_BYTES, SHA_BYTES, 'hex');
  }

  /** Counts one access at `now`. Returns false when there is no such record. */
  touch(path: string, now: number): boolean {
    const slot = this.#slots.get(path);
    if (slot === undefined) return false;
    this.#accessCount[slot] = (this.#accessCount[slot] as number) + 1;
    this.#lastAccessedMs[slot] = now;
    return true;
  }

  delete(path: string): boolean {
    const slot = this.#slots.get(path);
    if (slot === undefined) return false;
    this.#slots.delete(path);
    this.#free.push(slot);
    return true;
  }

  #recordAt(path: string, slot: number): FileRecord {
    const flags = this.#flags[slot] as number;
    const tags = this.#tags[slot] as number;
    const lastAccessedMs = this.#lastAccessedMs[slot] as number;
    return {
      path,
      language: this.#languages[this.#language[slot] as number],
      tags: tagsOfMask(tags),
      size: this.#size[slot] as number,
      mtimeMs: this.#mtimeMs[slot] as number,
      sha256: (flags & FLAG_HASHED) === 0 ? '' : this.#sha.toString('hex', slot * SHA_BYTES, (slot + 1) * SHA_BYTES),
      version: this.#version[slot] as number,
      versionMs: this.#versionMs[slot] as number,
      accessCount: this.#accessCount[slot] as number,
      lastAccessedMs: Number.isNaN(lastAccessedMs) ? undefined : lastAccessedMs,
      entrypoint: (flags & FLAG_ENTRYPOINT) !== 0,
      sensitive: (flags & FLAG_SENSITIVE) !== 0,
      generated: isGeneratedMask(tags),
    };
  }

  #languageId(language: string | undefined): number {
    if (language === undefined) return 0;
    let id = this.#languageIndex.get(language);
    if (id === undefined) {
      id = this.#languages.length;
      this.#languages.push(language);
      this.#languageIndex.set(language, id);
    }
    return id;
  }

  #allocate(): number {
    if (this.#next === this.#capacity) {
      const capacity = Math.max(1024, this.#capacity * 2);
      this.#size = grown(this.#size, new Float64Array(capacity));
      this.#mtimeMs = grown(this.#mtimeMs, new Float64Array(capacity));
      this.#versionMs = grown(this.#versionMs, new Float64Array(capacity));
      this.#lastAccessedMs = grown(this.#lastAccessedMs, new Float64Array(capacity));
      this.#version = grown(this.#version, new Uint32Array(capacity));
      this.#accessCount = grown(this.#accessCount, new Uint32Array(capacity));
      this.#tags = grown(this.#tags, new Uint8Array(capacity));
      this.#flags = grown(this.#flags, new Uint8Array(capacity));
      this.#language = grown(this.#language, new Uint16Array(capacity));
      this.#sha = grown(this.#sha, Buffer.alloc(capacity * SHA_BYTES));
      this.#capacity = capacity;
    }
    return this.#next++;
  }
}

function grown<T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(old: T, next: T): T {
  next.set(old as never);
  return next;
}
