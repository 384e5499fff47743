/**
 * A small LRU map bounded by entry count and by an optional weight (bytes),
 * for hot file content and derived data.
 *
 * @module
 */

/** Least-recently-used cache. */
export class LruCache<K, V> {
  readonly #map = new Map<K, { value: V; weight: number }>();
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  #weight = 0;
  hits = 0;
  misses = 0;

  constructor(maxEntries: number, maxWeight = Number.POSITIVE_INFINITY) {
    this.#maxEntries = maxEntries;
    this.#maxWeight = maxWeight;
  }

  get(key: K): V | undefined {
    const hit = this.#map.get(key);
    if (!hit) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.#map.delete(key);
    this.#map.set(key, hit);
    return hit.value;
  }

  set(key: K, value: V, weight = 0): void {
    const old = this.#map.get(key);
    if (old) {
      this.#weight -= old.weight;
      this.#map.delete(key);
    }
    // An item heavier than the whole cache is not kept at all.
    if (weight > this.#maxWeight) return;
    this.#map.set(key, { value, weight });
    this.#weight += weight;
    while (this.#map.size > this.#maxEntries || this.#weight > this.#maxWeight) {
      const oldest = this.#map.keys().next();
      if (oldest.done) break;
      const entry = this.#map.get(oldest.value);
      this.#weight -= entry?.weight ?? 0;
      this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    const old = this.#map.get(key);
    if (!old) return;
    this.#weight -= old.weight;
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }

  get weight(): number {
    return this.#weight;
  }

  clear(): void {
    this.#map.clear();
    this.#weight = 0;
  }
}
