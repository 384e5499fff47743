/**
 * The work a run does on strings, counted rather than timed: the length of
 * every string a string method scans or produces, and of every array join.
 * An implementation that re-copies or re-scans the unfinished line on each
 * chunk touches O(n²) units on a single giant line, whatever it is named.
 */
export async function unitsTouched(run: () => unknown): Promise<number> {
  let units = 0;
  const restore: Array<() => void> = [];
  const count = <K extends string>(proto: Record<K, unknown>, name: K, measure: (self: unknown, out: unknown) => number) => {
    const original = proto[name] as (...args: unknown[]) => unknown;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const out = original.apply(this, args);
      units += measure(this, out);
      return out;
    } as never;
    restore.push(() => {
      proto[name] = original as never;
    });
  };
  const strings = String.prototype as unknown as Record<string, unknown>;
  const len = (s: unknown) => (typeof s === 'string' ? s.length : 0);
  for (const name of ['includes', 'indexOf', 'lastIndexOf', 'split', 'concat', 'startsWith', 'endsWith']) count(strings, name, (self) => len(String(self)));
  // A slice costs what it copies, not the string it is taken from (V8 copies short slices, shares long ones).
  for (const name of ['slice', 'substring']) count(strings, name, (_self, out) => len(out));
  count(Array.prototype as unknown as Record<string, unknown>, 'join', (_self, out) => len(out));
  try {
    await run();
  } finally {
    for (const undo of restore) undo();
  }
  return units;
}
