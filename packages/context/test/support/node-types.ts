/**
 * Real text nobody here wrote: every `.d.ts` of the installed `@types/node`,
 * in name order, joined by newlines (about 2.5 MB of TypeScript
 * declarations). Tests that need a large body of real text repeat or cut it.
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

/** Reads the declarations (once a caller asks; the files are read every call). */
export function nodeTypesText(): string {
  const dir = realpathSync(join(import.meta.dirname, '../../../../node_modules/@types/node'));
  return readdirSync(dir)
    .filter((f) => f.endsWith('.d.ts'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}
