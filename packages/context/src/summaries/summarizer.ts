/**
 * The summarizer interface and the summary cache. The default summarizer is
 * structural and local; an orchestrator can plug in an LLM behind the same
 * interface. Summaries are cached in the state store by (content hash,
 * summarizer id) — a changed file is a new hash, so a stale summary is never
 * served — with an in-memory LRU in front.
 *
 * @module
 */

import { LruCache } from '../content/lru.ts';
import type { StateStore } from '../state/state-store.ts';
import type { CodeSymbol } from '../symbols/types.ts';

/** Everything a summarizer may use. */
export interface SummaryInput {
  readonly path: string;
  readonly sha256: string;
  readonly language: string | undefined;
  readonly text: string;
  readonly lines: number;
  readonly tokens: number;
  readonly bytes: number;
  readonly symbols: readonly CodeSymbol[];
  /** Import specifiers, in order. */
  readonly imports: readonly string[];
  /** A README passage about this file, when one mentions it. */
  readonly readmeMention?: string | undefined;
  /** Token budget of the summary. */
  readonly maxTokens: number;
}

/**
 * Produces a short description of a file. Must be deterministic for a given
 * `id` and input, because results are cached by content hash.
 *
 * @example
 * ```ts
 * const llmSummarizer: Summarizer = {
 *   id: 'llm:gemini-flash:v1',
 *   summarize: async (input) => callModel(`Summarize ${input.path}:\n${input.text.slice(0, 10_000)}`),
 * };
 * ```
 */
export interface Summarizer {
  /** Identifies the summarizer and its version in the cache. */
  readonly id: string;
  summarize(input: SummaryInput): Promise<string>;
}

/** Two-level summary cache: LRU in memory, SQLite behind it. */
export class SummaryCache {
  readonly #store: StateStore;
  readonly #lru: LruCache<string, string>;

  constructor(store: StateStore, entries = 512) {
    this.#store = store;
    this.#lru = new LruCache(entries);
  }

  async get(sha256: string, summarizerId: string): Promise<string | undefined> {
    const key = `${summarizerId}\0${sha256}`;
    const hot = this.#lru.get(key);
    if (hot !== undefined) return hot;
    const row = (await this.#store.get('SELECT summary FROM summaries WHERE sha256 = ? AND summarizer = ?', [sha256, summarizerId])) as
      | { summary: string }
      | undefined;
    if (row) this.#lru.set(key, row.summary);
    return row?.summary;
  }

  async set(sha256: string, summarizerId: string, summary: string): Promise<void> {
    this.#lru.set(`${summarizerId}\0${sha256}`, summary);
    await this.#store.run(
      'INSERT INTO summaries (sha256, summarizer, summary, created_ms) VALUES (?, ?, ?, ?) ON CONFLICT (sha256, summarizer) DO UPDATE SET summary = excluded.summary',
      [sha256, summarizerId, summary, Date.now()],
    );
  }

  /** Drops every stored summary (cache reset). */
  async clear(): Promise<void> {
    this.#lru.clear();
    await this.#store.run('DELETE FROM summaries');
  }
}
