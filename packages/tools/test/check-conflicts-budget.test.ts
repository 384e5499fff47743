/**
 * check_conflicts serves what it found within the call's budget: the list
 * of changed lines as well as the diff. A file changed on disk in many
 * scattered places (sql.js's 146,000-line asm build with every `var` made
 * `let`, in the MCP campaign) gave a 21,000-character answer in the small
 * profile (1,500 tokens a call), every changed range named in the text and
 * again in the data (63,000 characters).
 *
 * @module
 */

import { o200kTokenizer } from '@ctxfs/context';
import { describe, expect, it } from 'vitest';
import { FILES, freshWorkspace } from './workspace.ts';

// zod's doc.ts, a real source, 60 times: its `const`s are spread all through it.
const BIG = (FILES['src/doc.ts'] ?? '').repeat(60);

describe('check_conflicts on a file changed in many places', () => {
  const workspace = freshWorkspace();

  it('names the ranges that fit the budget and says how many more there are', async () => {
    const w = workspace();
    const written = await w.toolset.run('write_file', { path: 'big/doc.ts', content: BIG });
    const base = (written.data as { version: string }).version;
    await w.fs.writeBytes('big/doc.ts', new TextEncoder().encode(BIG.replaceAll('const ', 'let ')));
    const r = await w.toolset.run('check_conflicts', { path: 'big/doc.ts', base_version: base });
    expect(r.isError, r.text).toBe(false);
    const budget = w.session.profile.perCallTokens;
    expect(o200kTokenizer.count(r.text)).toBeLessThanOrEqual(budget);
    expect(o200kTokenizer.count(JSON.stringify(r.data))).toBeLessThanOrEqual(budget * 1.5);
    const data = r.data as { lines: Array<{ start: number }>; more_lines?: number };
    const changed = BIG.split('\n').filter((l) => l.includes('const ')).length;
    expect(data.more_lines ?? 0).toBeGreaterThan(0);
    expect(data.lines.length + (data.more_lines ?? 0)).toBeGreaterThan(1);
    expect(r.text).toContain(`and ${data.more_lines} more`);
    expect(changed).toBeGreaterThan(data.lines.length);
  });
});
