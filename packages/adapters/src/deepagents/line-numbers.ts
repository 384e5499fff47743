/**
 * Numbered lines as deepagents-style read tools show them to a model: the
 * number right-aligned in six columns, a tab, the line; a line longer than
 * 5,000 characters continues on rows numbered `N.1`, `N.2`…
 *
 * @module
 */

const WIDTH = 6;
const MAX_LINE = 5000;

/**
 * Formats `lines` numbered from `first`.
 *
 * @example
 * ```ts
 * numberLines(['a', 'b'], 10); // '    10\ta\n    11\tb'
 * ```
 */
export function numberLines(lines: readonly string[], first: number): string {
  const rows: string[] = [];
  lines.forEach((line, i) => {
    const n = first + i;
    if (line.length <= MAX_LINE) {
      rows.push(`${String(n).padStart(WIDTH)}\t${line}`);
      return;
    }
    for (let chunk = 0; chunk * MAX_LINE < line.length; chunk++) {
      const label = chunk === 0 ? String(n) : `${n}.${chunk}`;
      rows.push(`${label.padStart(WIDTH)}\t${line.slice(chunk * MAX_LINE, (chunk + 1) * MAX_LINE)}`);
    }
  });
  return rows.join('\n');
}
