/**
 * Loading a file as a document: its bytes hashed (the hash is the version a
 * reader is handed), decoded by the backend (`fs.decodeText`, the decoding of
 * `fs.read`), split into lines. Documents are cached by
 * content hash, so anything derived from one (symbols, token counts) is
 * reused until the content changes — and never after.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { type Filesystem, type FsError, fsError, isFsError, splitLines } from '@ctxfs/core';
import { callShape, callText } from '../calls/call-text.ts';
import { languageOf } from '../registry/classify.ts';
import { LruCache } from './lru.ts';

/** A decoded file at one version. */
export interface Document {
  readonly path: string;
  /** Hex SHA-256 of the bytes: the version id. */
  readonly sha256: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly encoding: string;
  readonly language: string | undefined;
  readonly text: string;
  readonly lines: readonly string[];
  /** Memo for data derived from this exact content. */
  readonly derived: Map<string, unknown>;
  /** Served from the session's open buffer of the file, not from the disk (see `buffers/buffer-routing.ts`). */
  readonly buffered?:
    | {
        readonly version: number;
        readonly dirty: boolean;
        readonly overwritten?: string | undefined;
        /** Called when a read served {@link overwritten}'s note. */
        readonly said?: (() => void) | undefined;
      }
    | undefined;
}

/** Where retrieval gets documents: the workspace's loader, or a session's view of it over its open buffers. */
export interface DocumentSource {
  load(path: string, op?: string): Promise<Document>;
}

/** Options of {@link DocumentLoader}. */
export interface DocumentLoaderOptions {
  /** Documents kept in memory; default 64. */
  maxEntries?: number;
  /** Bytes of text kept in memory; default 64 MiB. */
  maxBytes?: number;
  /** Largest file read as a document; default 16 MiB. */
  maxFileBytes?: number;
}

/**
 * Reads documents through the protocol with an in-memory LRU keyed by path
 * and validated by content hash.
 */
export class DocumentLoader {
  readonly fs: Filesystem;
  readonly #byHash: LruCache<string, Document>;
  /**
   * The bytes of the files just read, by hash: what a reader was served is
   * kept as the base of its later edit from these, not by reading the file
   * again — which another writer may have changed in between.
   */
  readonly #recentBytes = new LruCache<string, Uint8Array>(64, 16 * 1024 * 1024);
  readonly #maxFileBytes: number;

  constructor(fs: Filesystem, options: DocumentLoaderOptions = {}) {
    this.fs = fs;
    this.#byHash = new LruCache(options.maxEntries ?? 64, options.maxBytes ?? 64 * 1024 * 1024);
    this.#maxFileBytes = options.maxFileBytes ?? 16 * 1024 * 1024;
  }

  /** Cache statistics. */
  get stats(): { entries: number; bytes: number; hits: number; misses: number } {
    return { entries: this.#byHash.size, bytes: this.#byHash.weight, hits: this.#byHash.hits, misses: this.#byHash.misses };
  }

  /**
   * Loads `path`. The bytes are always read (they are the truth; hashing is
   * cheap), the decoding and everything derived comes from the cache when the
   * hash is known.
   */
  async load(path: string, op = 'readFile'): Promise<Document> {
    // One look at the file (one open on the host): its stat is of the bytes read, never of a file that replaced it.
    const { stat, bytes } = await this.fs.readWithStat(path, { maxBytes: this.#maxFileBytes }).catch((err: unknown) => {
      throw isFsError(err) ? err.withOperation(op) : err;
    });
    if (bytes === undefined) throw this.#tooLarge(path, stat.size, op);
    const doc = this.fromBytes(path, bytes, stat.mtime.getTime(), op);
    this.#recentBytes.set(doc.sha256, bytes, bytes.byteLength);
    return doc;
  }

  /** The bytes of a recent {@link load} whose hash is `sha256`, if still kept. */
  recentBytes(sha256: string): Uint8Array | undefined {
    return this.#recentBytes.get(sha256);
  }

  /**
   * The document of `bytes` as if read from `path` (a buffer's content):
   * decoded and cached exactly as {@link load} does, so a buffer equal to the
   * disk shares the disk's document and what was derived from it.
   */
  fromBytes(path: string, bytes: Uint8Array, mtimeMs: number, op = 'readFile'): Document {
    this.#limit(path, bytes.byteLength, op);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = `${sha256}\0${path}`;
    const cached = this.#byHash.get(key);
    if (cached) return cached.mtimeMs === mtimeMs ? cached : { ...cached, mtimeMs };
    // The backend decodes, as its own reads do: a model sees what fs.read serves.
    const decoded = this.fs.decodeText(bytes, { path });
    if (decoded.binary) {
      throw fsError('EBINARY', op, path, {
        hint: `its content is not served as text (text files only); ${callText('listFiles', [path])} gives its size and type`,
      });
    }
    const text = decoded.text;
    const doc: Document = {
      path,
      sha256,
      size: bytes.byteLength,
      mtimeMs,
      encoding: decoded.encoding,
      language: languageOf(path),
      text,
      lines: splitLines(text),
      derived: new Map(),
    };
    this.#byHash.set(key, doc, text.length * 2);
    return doc;
  }

  #limit(path: string, size: number, op: string): void {
    if (size > this.#maxFileBytes) throw this.#tooLarge(path, size, op);
  }

  #tooLarge(path: string, size: number, op: string): FsError {
    return fsError('ETOOLARGE', op, path, {
      reason: `the file is ${size} bytes, over the ${this.#maxFileBytes}-byte document limit`,
      hint: `ranges of it are served by streaming: ${callText('readLines', [path, 1, 100])}, or search it for a pattern with ${callShape('grep', { path })}`,
    });
  }

  clear(): void {
    this.#byHash.clear();
  }
}

/** Memoizes `compute` on the document. */
export function derive<T>(doc: Document, key: string, compute: () => T): T {
  if (doc.derived.has(key)) return doc.derived.get(key) as T;
  const value = compute();
  doc.derived.set(key, value);
  return value;
}
