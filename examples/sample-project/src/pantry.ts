/**
 * The pantry: shelves of items, the stock movements that change them, and
 * the rules for what is running low or going off. Everything is kept in
 * memory; `toJSON` and `fromJSON` move it to and from a file.
 */

/** How long an opened item keeps, in days, when its label says nothing. */
export const OPENED_SHELF_LIFE_DAYS = 5;

/** The days before expiry at which an item is reported as going off. */
export const WARN_DAYS = 3;

export type Unit = 'g' | 'kg' | 'ml' | 'l' | 'pcs';

export interface Item {
  readonly id: string;
  name: string;
  quantity: number;
  minimum: number;
  unit: Unit;
  aisle?: string;
  /** ISO date (yyyy-mm-dd) printed on the label. */
  expires?: string;
  /** ISO date the item was opened, if it was. */
  opened?: string;
}

export interface Movement {
  readonly itemId: string;
  readonly delta: number;
  readonly reason: 'bought' | 'used' | 'thrown' | 'counted';
  readonly at: string;
}

export class PantryError extends Error {
  readonly itemId: string | undefined;

  constructor(message: string, itemId?: string) {
    super(message);
    this.name = 'PantryError';
    this.itemId = itemId;
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(date) + days * DAY_MS).toISOString().slice(0, 10);
}

export class Pantry {
  readonly #items = new Map<string, Item>();
  readonly #movements: Movement[] = [];
  #nextId = 1;

  /** Adds a new kind of item to the shelves, with nothing in stock yet. */
  addItem(name: string, unit: Unit, minimum: number, aisle?: string): Item {
    if (minimum < 0) throw new PantryError(`minimum of ${name} must not be negative`);
    for (const item of this.#items.values()) {
      if (item.name.toLowerCase() === name.toLowerCase()) throw new PantryError(`${name} is already on the shelves`, item.id);
    }
    const item: Item = { id: `item-${this.#nextId++}`, name, quantity: 0, minimum, unit, ...(aisle ? { aisle } : {}) };
    this.#items.set(item.id, item);
    return item;
  }

  /** The item with this id; throws when there is none. */
  get(id: string): Item {
    const item = this.#items.get(id);
    if (item === undefined) throw new PantryError(`no item ${id}`, id);
    return item;
  }

  /** Finds an item by name, ignoring case. */
  find(name: string): Item | undefined {
    const wanted = name.toLowerCase();
    for (const item of this.#items.values()) if (item.name.toLowerCase() === wanted) return item;
    return undefined;
  }

  /** Records a purchase: more stock, and the new label's expiry date. */
  buy(id: string, amount: number, expires: string | undefined, at: string): void {
    if (amount <= 0) throw new PantryError(`a purchase must add something (got ${amount})`, id);
    const item = this.get(id);
    item.quantity += amount;
    if (expires !== undefined && (item.expires === undefined || expires < item.expires)) item.expires = expires;
    delete item.opened;
    this.#record({ itemId: id, delta: amount, reason: 'bought', at });
  }

  /** Records use: less stock. Using more than there is is an error, not a negative stock. */
  use(id: string, amount: number, at: string): void {
    const item = this.get(id);
    if (amount <= 0) throw new PantryError(`use must take something (got ${amount})`, id);
    if (amount > item.quantity) throw new PantryError(`only ${item.quantity} ${item.unit} of ${item.name} left`, id);
    item.quantity -= amount;
    item.opened ??= at.slice(0, 10);
    this.#record({ itemId: id, delta: -amount, reason: 'used', at });
  }

  /** Throws away what is left of an item (it went off, or it spilled). */
  throwAway(id: string, at: string): number {
    const item = this.get(id);
    const amount = item.quantity;
    item.quantity = 0;
    delete item.opened;
    delete item.expires;
    if (amount > 0) this.#record({ itemId: id, delta: -amount, reason: 'thrown', at });
    return amount;
  }

  /** Sets the stock to what was counted on the shelf, recording the difference. */
  count(id: string, counted: number, at: string): void {
    if (counted < 0) throw new PantryError(`a count cannot be negative (got ${counted})`, id);
    const item = this.get(id);
    const delta = counted - item.quantity;
    item.quantity = counted;
    if (delta !== 0) this.#record({ itemId: id, delta, reason: 'counted', at });
  }

  /** The date an item really goes off: its label, or sooner once opened. */
  expiryOf(item: Item): string | undefined {
    const opened = item.opened === undefined ? undefined : addDays(item.opened, OPENED_SHELF_LIFE_DAYS);
    if (item.expires === undefined) return opened;
    if (opened === undefined) return item.expires;
    // ISO dates sort as text, so the earlier date is the first.
    return [opened, item.expires].sort()[0];
  }

  /** Items below their minimum, the emptiest (relative to the minimum) first. */
  lowStock(): Item[] {
    const low = [...this.#items.values()].filter((i) => i.quantity < i.minimum);
    return low.sort((a, b) => a.quantity / a.minimum - b.quantity / b.minimum);
  }

  /** Items that go off within WARN_DAYS of today, soonest first. */
  goingOff(today: string): Item[] {
    const soon: Array<{ item: Item; days: number }> = [];
    for (const item of this.#items.values()) {
      const expiry = this.expiryOf(item);
      if (expiry === undefined || item.quantity === 0) continue;
      const days = daysBetween(today, expiry);
      if (days <= WARN_DAYS) soon.push({ item, days });
    }
    return soon.sort((a, b) => a.days - b.days).map((s) => s.item);
  }

  /** Items already past their date, to throw away. */
  expired(today: string): Item[] {
    return [...this.#items.values()].filter((item) => {
      const expiry = this.expiryOf(item);
      return expiry !== undefined && item.quantity > 0 && expiry < today;
    });
  }

  /** The movements of one item, or of all, oldest first. */
  movements(itemId?: string): readonly Movement[] {
    return itemId === undefined ? [...this.#movements] : this.#movements.filter((m) => m.itemId === itemId);
  }

  /** How much of an item was used per week over the last `weeks` weeks. */
  weeklyUse(itemId: string, today: string, weeks = 4): number {
    const since = addDays(today, -7 * weeks);
    let used = 0;
    for (const m of this.#movements) {
      if (m.itemId === itemId && m.reason === 'used' && m.at.slice(0, 10) >= since) used -= m.delta;
    }
    return used / weeks;
  }

  /** How much was thrown away, per item name, since a date: the waste report. */
  waste(since: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const m of this.#movements) {
      if (m.reason !== 'thrown' || m.at.slice(0, 10) < since) continue;
      const name = this.get(m.itemId).name;
      out.set(name, (out.get(name) ?? 0) - m.delta);
    }
    return out;
  }

  /** Suggests new minimums from recent use: two weeks of use, rounded up. */
  suggestMinimums(today: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const item of this.#items.values()) {
      const perWeek = this.weeklyUse(item.id, today);
      if (perWeek === 0) continue;
      const suggested = Math.ceil(perWeek * 2);
      if (suggested !== item.minimum) out.set(item.id, suggested);
    }
    return out;
  }

  /** Everything, as plain data for a file. */
  toJSON(): { items: Item[]; movements: Movement[]; nextId: number } {
    return { items: [...this.#items.values()], movements: [...this.#movements], nextId: this.#nextId };
  }

  /** A pantry from what `toJSON` wrote; unknown units are refused. */
  static fromJSON(data: { items: Item[]; movements: Movement[]; nextId: number }): Pantry {
    const pantry = new Pantry();
    for (const item of data.items) {
      if (!['g', 'kg', 'ml', 'l', 'pcs'].includes(item.unit)) throw new PantryError(`unknown unit ${item.unit}`, item.id);
      pantry.#items.set(item.id, { ...item });
    }
    pantry.#movements.push(...data.movements);
    pantry.#nextId = data.nextId;
    return pantry;
  }

  #record(movement: Movement): void {
    this.#movements.push(movement);
  }
}
