import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatUnifiedDiff, type MergeRequest, resolveStale } from '../src/index.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function randomText(rand: () => number, eol: string): string[] {
  const words = ['alpha', 'beta', 'gamma', '', '}', 'return x;', '  if (a) {', '世界', '🎉'];
  return Array.from({ length: 5 + Math.floor(rand() * 40) }, () => words[Math.floor(rand() * words.length)] as string).map((l) => l + eol);
}

function mutate(rand: () => number, lines: string[], eol: string): string[] {
  const out = [...lines];
  const n = 1 + Math.floor(rand() * 5);
  for (let k = 0; k < n; k++) {
    const at = Math.floor(rand() * (out.length + 1));
    const r = rand();
    if (r < 0.4) out.splice(at, 0, `new ${k} ${Math.floor(rand() * 100)}${eol}`);
    else if (r < 0.7) out.splice(at, 1);
    else out.splice(at, 1, `changed ${k}${eol}`);
  }
  return out;
}

describe('formatUnifiedDiff', () => {
  it('produces diffs that git apply turns the old text into the new one (200 random cases)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-diff-'));
    try {
      execFileSync('git', ['init', '-q', dir]);
      const rand = rng(42);
      for (let c = 0; c < 200; c++) {
        const eol = c % 5 === 0 ? '\r\n' : '\n';
        const a = randomText(rand, eol);
        const b = mutate(rand, a, eol);
        let oldText = a.join('');
        let newText = b.join('');
        // Sometimes no final newline on one side.
        if (c % 7 === 0) oldText = oldText.replace(/\r?\n$/, '');
        if (c % 11 === 0) newText = newText.replace(/\r?\n$/, '');
        const d = formatUnifiedDiff(oldText, newText, { oldLabel: 'a/f.txt', newLabel: 'b/f.txt', context: c % 3 });
        writeFileSync(join(dir, 'f.txt'), oldText);
        if (d.text === '') {
          expect(oldText).toBe(newText);
          continue;
        }
        writeFileSync(join(dir, 'p.diff'), d.text);
        execFileSync('git', ['apply', '--unidiff-zero', '--whitespace=nowarn', 'p.diff'], { cwd: dir });
        expect(readFileSync(join(dir, 'f.txt'), 'utf8'), `case ${c}\n${d.text}`).toBe(newText);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts lines and reports changed ranges', () => {
    const d = formatUnifiedDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\ne\n');
    expect(d).toMatchObject({ linesAdded: 2, linesRemoved: 1 });
    expect(d.ranges).toEqual([
      { oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 2 },
      { oldStart: 5, oldEnd: 4, newStart: 5, newEnd: 5 },
    ]);
    expect(formatUnifiedDiff('x', 'x\n').text).toBe('--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n');
  });
});

describe('resolveStale', () => {
  const input = {
    path: 'a.txt',
    agent: 'llm:a',
    baseVersion: 'b'.repeat(64),
    currentVersion: 'c'.repeat(64),
    changedBy: ['llm:b'],
    base: 'a\nb\nc\nd\ne\n',
    theirs: 'A\nb\nc\nd\ne\n',
    ours: 'a\nb\nc\nd\nE\n',
  };
  const clash = { ...input, ours: 'X\nb\nc\nd\ne\n' };

  it('auto_merge merges clean changes and refuses overlapping ones', async () => {
    expect(await resolveStale(input, {})).toEqual({ ok: true, text: 'A\nb\nc\nd\nE\n', how: 'merged' });
    const r = await resolveStale(clash, { strategy: 'auto_merge' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.why).toBe('conflict');
      expect(r.conflicts).toHaveLength(1);
      expect(r.markedText).toBe('<<<<<<< yours\nX\n=======\nA\n>>>>>>> current\nb\nc\nd\ne\n');
    }
  });

  it('refuse never merges', async () => {
    expect((await resolveStale(input, { strategy: 'refuse' })).ok).toBe(false);
  });

  it('user_approval: true, false, a side, or content', async () => {
    expect(await resolveStale(input, { strategy: 'user_approval', approve: () => true })).toMatchObject({ ok: true, text: 'A\nb\nc\nd\nE\n', how: 'approved' });
    expect(await resolveStale(input, { strategy: 'user_approval', approve: () => false })).toMatchObject({ ok: false, why: 'declined' });
    expect(await resolveStale(clash, { strategy: 'user_approval', approve: () => true })).toMatchObject({ ok: false, why: 'declined' });
    expect(await resolveStale(clash, { strategy: 'user_approval', approve: () => ({ use: 'ours' }) })).toMatchObject({
      ok: true,
      text: clash.ours,
      how: 'ours',
    });
    expect(await resolveStale(clash, { strategy: 'user_approval', approve: () => ({ use: 'theirs' }) })).toMatchObject({ ok: true, text: clash.theirs });
    expect(await resolveStale(clash, { strategy: 'user_approval', approve: async () => ({ content: 'Z\n' }) })).toMatchObject({ ok: true, text: 'Z\n' });
    expect(await resolveStale(clash, { strategy: 'user_approval' })).toMatchObject({ ok: false, why: 'no-callback' });
  });

  it('review gets both sides, the diffs and the regions, and may return the merge', async () => {
    let seen: MergeRequest | undefined;
    const r = await resolveStale(clash, {
      strategy: 'review',
      review: (req) => {
        seen = req;
        return 'XA\nb\nc\nd\ne\n';
      },
    });
    expect(r).toMatchObject({ ok: true, text: 'XA\nb\nc\nd\ne\n', how: 'reviewed' });
    expect(seen?.merged).toBeUndefined();
    expect(seen?.regions[0]).toMatchObject({ current: { start: 1, end: 1 }, yours: { start: 1, end: 1 }, currentLines: ['A'], yourLines: ['X'] });
    expect(seen?.theirsDiff).toContain('-a\n+A\n');
    expect(seen?.oursDiff).toContain('-a\n+X\n');
    expect(await resolveStale(input, { strategy: 'review', review: () => undefined })).toMatchObject({ ok: false, why: 'declined' });
  });
});
