/** Turns what the pantry is short of into a shopping list, grouped by aisle. */
import type { Item, Pantry } from './pantry.ts';

export const DEFAULT_AISLE = 'other';

export function shoppingList(pantry: Pantry): Map<string, Item[]> {
  const byAisle = new Map<string, Item[]>();
  for (const item of pantry.lowStock()) {
    const aisle = item.aisle ?? DEFAULT_AISLE;
    const list = byAisle.get(aisle) ?? [];
    list.push(item);
    byAisle.set(aisle, list);
  }
  return byAisle;
}

export function formatList(list: Map<string, Item[]>): string {
  const lines: string[] = [];
  for (const [aisle, items] of [...list].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`${aisle}:`);
    for (const item of items) lines.push(`  - ${item.name} (need ${item.minimum - item.quantity} ${item.unit})`);
  }
  return lines.join('\n');
}
