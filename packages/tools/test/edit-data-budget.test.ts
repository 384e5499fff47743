/**
 * An edit's structured result is served as its text is: the diff in it is
 * cut to the call's budget, the same diff the text shows. It held the whole
 * diff: a 4 MB write_file in the small profile (1,500 tokens a call) sent
 * 9 KB of text and 4 MB of structured content, and over MCP a 13 MB write's
 * answer was larger than the SDK client takes in one message, so the client
 * closed the connection (found by the MCP campaign on express).
 *
 * @module
 */

import { o200kTokenizer } from '@ctxfs/context';
import { describe, expect, it } from 'vitest';
import { FILES, freshWorkspace } from './workspace.ts';

// zod's doc.ts, a real source, 400 times: about 0.5 MB.
const BIG = (FILES['src/doc.ts'] ?? '').repeat(400);

describe('the diff in an edit result', () => {
  const workspace = freshWorkspace();

  it('is the diff the text shows, within the call budget, for every edit tool that makes a large one', async () => {
    const w = workspace();
    const budget = w.session.profile.perCallTokens;
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { path: 'big/doc.ts', content: BIG }],
      ['edit_lines', { path: 'big/doc.ts', action: 'delete', start_line: 1, end_line: 20_000 }],
      ['undo', { path: 'big/doc.ts' }],
      ['delete_file', { path: 'big/doc.ts' }],
    ];
    for (const [name, args] of calls) {
      const r = await w.toolset.run(name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(false);
      const data = r.data as { diff: string };
      expect(o200kTokenizer.count(data.diff), name).toBeLessThanOrEqual(budget);
      expect(data.diff, name).toContain('[… cut at ');
      expect(r.text, name).toContain(data.diff);
    }
  });

  it('is whole when it fits', async () => {
    const w = workspace();
    const r = await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'export class Doc {', new_text: 'export class Doc2 {' });
    const data = r.data as { diff: string };
    expect(data.diff).toContain('-export class Doc {\n+export class Doc2 {');
    expect(data.diff).not.toContain('[… cut at ');
    expect(r.text).toContain(data.diff.trimEnd());
  });
});
