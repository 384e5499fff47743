/**
 * A byte-pair vocabulary held as one byte blob and an open-addressed hash
 * index over it, read from the `.tiktoken` rank file (one base64 token and its
 * rank a line) that gpt-tokenizer ships.
 *
 * Why not gpt-tokenizer's own loader: its ranks are a 2.4 MB array literal
 * of strings, and the encoder builds a Map of 200,000 strings from it; the
 * two cost 300–400 ms and about 70 MB before the first count. Every CLI
 * command that serves a model's view of a file and every MCP server's first
 * read paid that. Decoding the rank file into typed arrays takes a few tens
 * of milliseconds and a few megabytes.
 *
 * @module
 */

const EMPTY = 0;

/** A vocabulary of byte sequences, each with its rank (the token id). */
export class BpeVocabulary {
  /** Every token's bytes, back to back in rank order. */
  readonly #blob: Uint8Array;
  /** `#offsets[r]` to `#offsets[r + 1]` is rank `r`'s bytes in {@link #blob}. */
  readonly #offsets: Uint32Array;
  /** Open addressing on a token's hash; see {@link VocabularyArrays.index} for a slot's contents. */
  readonly #index: Int32Array;
  readonly #mask: number;
  /** How many low bits of a slot hold rank + 1 (see {@link VocabularyArrays.index}). */
  readonly #rankBits: number;

  private constructor(blob: Uint8Array, offsets: Uint32Array, index?: Int32Array) {
    this.#blob = blob;
    this.#offsets = offsets;
    this.#rankBits = rankBits(offsets.length - 1);
    this.#index = index ?? buildIndex(blob, offsets, this.#rankBits);
    this.#mask = this.#index.length - 1;
  }

  /**
   * The vocabulary as it is held: the three arrays {@link fromArrays} takes
   * back. Storing them spares a later process the rank file's decoding and
   * the index's hashing (about 50 ms of a command-line read's start).
   */
  toArrays(): VocabularyArrays {
    return { blob: this.#blob, offsets: this.#offsets, index: this.#index };
  }

  /**
   * A vocabulary from arrays {@link toArrays} gave. Only their shape is
   * checked (offsets spanning the blob, the index's slot count); checking
   * every slot would cost what storing them saves, so a caller reading them
   * from storage checks their integrity first (the cache's digest: a wrong
   * slot can hide a token, see vocabulary-cache.ts).
   *
   * @throws {Error} when the arrays cannot form a vocabulary.
   */
  static fromArrays({ blob, offsets, index }: VocabularyArrays): BpeVocabulary {
    const count = offsets.length - 1;
    if (count < 1 || offsets[0] !== 0 || offsets[count] !== blob.length) throw new Error('vocabulary arrays: the offsets do not span the blob');
    if (index.length < indexSlots(count) || (index.length & (index.length - 1)) !== 0) {
      throw new Error(`vocabulary arrays: the index's ${index.length} slots are not a power of two of at least ${indexSlots(count)}`);
    }
    return new BpeVocabulary(blob, offsets, index);
  }

  /**
   * Reads a `.tiktoken` rank file: lines of `<base64 bytes> <rank>`, ranks
   * 0, 1, 2, … in order (the form OpenAI publishes and gpt-tokenizer ships).
   *
   * @throws {Error} when a line is malformed or the ranks are not consecutive.
   */
  static fromTiktoken(file: Uint8Array): BpeVocabulary {
    const n = file.length;
    // Decoded bytes are at most three quarters of the base64 text; a line is at least 7 bytes (`AA== 0\n`).
    const blob = new Uint8Array(Math.ceil((n * 3) / 4));
    const offsets = new Uint32Array(Math.ceil(n / 7) + 2);
    let ranks = 0;
    let at = 0;
    let written = 0;
    const malformed = (why: string) => new Error(`tiktoken rank file: ${why} at byte ${at}`);
    while (at < n) {
      // A token's base64 is whole groups of four digits, padding included.
      do {
        if (at + 4 > n) throw malformed('a line without its rank');
        const a = BASE64[file[at] as number] as number;
        const b = BASE64[file[at + 1] as number] as number;
        const c = BASE64[file[at + 2] as number] as number;
        const d = BASE64[file[at + 3] as number] as number;
        if ((a | b | c | d) < 0 || a === PAD || b === PAD) throw malformed('not base64');
        blob[written++] = (a << 2) | (b >> 4);
        if (c !== PAD) {
          blob[written++] = (b << 4) | (c >> 2);
          if (d !== PAD) blob[written++] = (c << 6) | d;
        }
        at += 4;
      } while (file[at] !== 0x20);
      let rank = 0;
      let c = file[++at] as number;
      if (c < 0x30 || c > 0x39) throw malformed('no rank');
      while (c >= 0x30 && c <= 0x39) {
        rank = rank * 10 + (c - 0x30);
        c = file[++at] as number;
      }
      if (rank !== ranks) throw malformed(`rank ${rank} where ${ranks} was due`);
      offsets[++ranks] = written;
      while (at < n && (file[at] === 0x0a || file[at] === 0x0d)) at++;
    }
    return new BpeVocabulary(blob.subarray(0, written), offsets.subarray(0, ranks + 1));
  }

  /** How many ranks the vocabulary holds. */
  get size(): number {
    return this.#offsets.length - 1;
  }

  /** The rank of `bytes[from..to)`, or -1 when no token is those bytes. */
  rankOf(bytes: Uint8Array, from: number, to: number): number {
    const blob = this.#blob;
    const offsets = this.#offsets;
    const length = to - from;
    const shift = this.#rankBits;
    const h = hashBytes(bytes, from, to);
    // What a slot above the rank holds if it is this token's: its tag, then its distance from home.
    const tag = (h >>> (shift + DISTANCE_BITS)) << DISTANCE_BITS;
    let slot = h & this.#mask;
    for (let distance = 0; ; distance++) {
      const entry = this.#index[slot] as number;
      if (entry === EMPTY) return -1;
      const above = entry >>> shift;
      // Robin Hood order: a token nearer its home than this one is to its own means this one is absent.
      // Past MAX_DISTANCE every slot is, so a lookup ends even in a damaged index.
      if ((above & MAX_DISTANCE) < distance) return -1;
      if (above === (tag | distance)) {
        const rank = (entry & ((1 << shift) - 1)) - 1;
        const start = offsets[rank] as number;
        if ((offsets[rank + 1] as number) - start === length) {
          let i = 0;
          while (i < length && blob[start + i] === bytes[from + i]) i++;
          if (i === length) return rank;
        }
      }
      slot = (slot + 1) & this.#mask;
    }
  }

  /** Rank `rank`'s bytes (a view; do not write to it), or `undefined` past the vocabulary. */
  bytesOf(rank: number): Uint8Array | undefined {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return undefined;
    return this.#blob.subarray(this.#offsets[rank], this.#offsets[rank + 1]);
  }
}

/** A vocabulary's storage, as {@link BpeVocabulary.toArrays} gives it. */
export interface VocabularyArrays {
  /** Every token's bytes, back to back in rank order. */
  readonly blob: Uint8Array;
  /** Rank `r`'s bytes are `blob[offsets[r]..offsets[r + 1])`. */
  readonly offsets: Uint32Array;
  /**
   * Robin Hood hashing (linear probing, a token kept nearer its home slot
   * than any it passed) on the FNV-1a hash of a token's bytes, a power of
   * two of slots. A slot is 0 when empty; else, from its low bits: rank + 1
   * (as many bits as the rank count takes), the slot's distance from the
   * token's home ({@link DISTANCE_BITS}), and the hash's top bits as a tag.
   */
  readonly index: Int32Array;
}

/** Bits of a slot that hold its token's distance from home; an index that needs more is built with twice the slots. */
const DISTANCE_BITS = 5;
const MAX_DISTANCE = (1 << DISTANCE_BITS) - 1;

/**
 * The index's least slot count: the least power of two above 1.25 times
 * the ranks (o200k: 262,144 slots, 76% full, 19 the farthest distance).
 * Twice the ranks, the index of format 1, doubled the 1 MB every process
 * reads from the cache (vocabulary-cache.ts). Robin Hood order keeps a
 * miss, most of a merge's lookups, at about three slots where plain linear
 * probing at this fill read about ten; the tag and the distance rule out
 * other tokens without reading their bytes.
 */
function indexSlots(count: number): number {
  let slots = 1;
  while (slots < count + (count >>> 2)) slots *= 2;
  return slots;
}

/** The bits that hold `count`, the largest rank + 1 a slot holds. */
function rankBits(count: number): number {
  const bits = 32 - Math.clz32(count);
  // A slot keeps at least one bit of tag, and JavaScript's shifts count modulo 32.
  if (bits + DISTANCE_BITS > 31) throw new Error(`vocabulary of ${count} ranks: more than a 32-bit index slot holds`);
  return bits;
}

function buildIndex(blob: Uint8Array, offsets: Uint32Array, bits: number): Int32Array {
  const count = offsets.length - 1;
  for (let slots = indexSlots(count); ; slots *= 2) {
    const index = fillIndex(blob, offsets, bits, slots);
    if (index !== undefined) return index;
  }
}

/** The index in `slots` slots, or `undefined` when a token would sit past {@link MAX_DISTANCE}. */
function fillIndex(blob: Uint8Array, offsets: Uint32Array, bits: number, slots: number): Int32Array | undefined {
  const count = offsets.length - 1;
  const index = new Int32Array(slots);
  const mask = slots - 1;
  for (let rank = 0; rank < count; rank++) {
    const h = hashBytes(blob, offsets[rank] as number, offsets[rank + 1] as number);
    // The token being placed, as its slot will hold it at distance 0.
    let moving = ((h >>> (bits + DISTANCE_BITS)) << (DISTANCE_BITS + bits)) | (rank + 1);
    let distance = 0;
    let slot = h & mask;
    for (;;) {
      if (distance > MAX_DISTANCE) return undefined;
      const entry = index[slot] as number;
      const placed = moving | (distance << bits);
      if (entry === EMPTY) {
        index[slot] = placed;
        break;
      }
      const theirs = (entry >>> bits) & MAX_DISTANCE;
      if (theirs < distance) {
        // The richer token gives up its slot and moves on in the placed one's stead.
        index[slot] = placed;
        moving = entry & ~(MAX_DISTANCE << bits);
        distance = theirs;
      }
      slot = (slot + 1) & mask;
      distance++;
    }
  }
  return index;
}

function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

const PAD = 64;

// Base64 digit values; PAD marks padding ('='), -1 anything else.
const BASE64 = (() => {
  const table = new Int8Array(256).fill(-1);
  const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) table[digits.charCodeAt(i)] = i;
  table[0x3d] = PAD;
  return table;
})();
