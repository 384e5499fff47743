import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffLines } from '../src/merge/line-diff.ts';
import { merge3 } from '../src/merge/merge3.ts';
import { gitMergeFile } from './support/git-merge.ts';

const work = mkdtempSync(join(tmpdir(), 'ctxfs-merge-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const gitMerge = (base: string, ours: string, theirs: string) => gitMergeFile(work, base, ours, theirs);

describe('diffLines', () => {
  it('reports replaced, inserted and deleted lines', () => {
    expect(diffLines(['a', 'b', 'c'], ['a', 'x', 'c'])).toEqual([{ aStart: 1, aLength: 1, bStart: 1, bLength: 1 }]);
    expect(diffLines(['a', 'c'], ['a', 'b', 'c'])).toEqual([{ aStart: 1, aLength: 0, bStart: 1, bLength: 1 }]);
    expect(diffLines(['a', 'b', 'c'], ['a', 'c'])).toEqual([{ aStart: 1, aLength: 1, bStart: 1, bLength: 0 }]);
    expect(diffLines([], [])).toEqual([]);
    expect(diffLines(['a'], [])).toEqual([{ aStart: 0, aLength: 1, bStart: 0, bLength: 0 }]);
  });

  it('slides an ambiguous insertion down, as git does', () => {
    // Inserting one more "b" into a run of b's is reported after the run.
    expect(diffLines(['a', 'b', 'b', 'c'], ['a', 'b', 'b', 'b', 'c'])).toEqual([{ aStart: 3, aLength: 0, bStart: 3, bLength: 1 }]);
  });

  it('round-trips: applying the hunks to a gives b', () => {
    const a = 'the quick brown fox jumps over the lazy dog again and again'.split(' ');
    const b = 'a quick red fox jumps over the dog again and once more again'.split(' ');
    const out: string[] = [];
    let at = 0;
    for (const h of diffLines(a, b)) {
      out.push(...a.slice(at, h.aStart), ...b.slice(h.bStart, h.bStart + h.bLength));
      at = h.aStart + h.aLength;
    }
    out.push(...a.slice(at));
    expect(out).toEqual(b);
  });
});

describe('merge3', () => {
  it('merges non-overlapping edits', () => {
    expect(merge3('a\nb\nc\nd\n', 'A\nb\nc\nd\n', 'a\nb\nc\nD\n')).toEqual({ clean: true, text: 'A\nb\nc\nD\n', conflicts: [] });
  });

  it('takes an identical change made on both sides once', () => {
    const r = merge3('a\nb\nc\n', 'a\nB\nc\n', 'a\nB\nc\n');
    expect(r.clean).toBe(true);
    expect(r.text).toBe('a\nB\nc\n');
  });

  it('reports edits that touch without an unchanged line between them, like git', () => {
    const r = merge3('a\nb\nc\nd\n', 'a\nB\nc\nd\n', 'a\nb\nC\nd\n');
    expect(r.clean).toBe(false);
    expect(gitMerge('a\nb\nc\nd\n', 'a\nB\nc\nd\n', 'a\nb\nC\nd\n').clean).toBe(false);
    expect(r.conflicts[0]?.oursLines).toEqual(['B\n', 'c\n']);
    expect(r.conflicts[0]?.theirsLines).toEqual(['b\n', 'C\n']);
  });

  it('does not merge overlapping edits where one side extends the other (node-diff3 does)', () => {
    const base = 'x\n';
    const ours = 'x\ny\n';
    const theirs = 'x\ny\nz\n';
    const r = merge3(base, ours, theirs);
    const git = gitMerge(base, ours, theirs);
    expect(r.clean).toBe(git.clean);
    expect(r.clean).toBe(false);
  });

  it('treats a changed final newline as a change', () => {
    const r = merge3('a\nb', 'a\nb\n', 'a\nb');
    expect(r).toMatchObject({ clean: true, text: 'a\nb\n' });
  });

  it('writes conflict markers only when asked', () => {
    const plain = merge3('a\n', 'b\n', 'c\n');
    expect(plain.text).toBeUndefined();
    const marked = merge3('a\n', 'b\n', 'c\n', { markers: true, labels: { ours: 'mine', theirs: 'agent-2' } });
    expect(marked.text).toBe('<<<<<<< mine\nb\n=======\nc\n>>>>>>> agent-2\n');
  });

  it('agrees with git merge-file on randomized edits of real files', () => {
    const corpus: string[] = [];
    const walk = (dir: string, depth: number) => {
      if (corpus.length >= 300 || depth > 7) return;
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p, depth + 1);
        else if (/\.(js|ts|md)$/.test(e.name)) {
          const size = statSync(p).size;
          if (size > 1000 && size < 40_000) corpus.push(p);
        }
      }
    };
    walk(join(import.meta.dirname, '../../../node_modules/.pnpm'), 0);
    expect(corpus.length).toBeGreaterThan(50);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const mutate = (lines: string[]) => {
      const out = [...lines];
      for (let e = 0, n = 1 + rand(4); e < n; e++) {
        const at = rand(out.length + 1);
        const kind = rand(4);
        if (kind === 0) out.splice(at, 0, `// inserted ${rand(1000)}`);
        else if (kind === 1) out.splice(at, 1 + rand(3));
        else if (kind === 2 && at < out.length) out[at] = `${out[at]} // changed`;
        else if (out.length > 0) out.splice(at, 0, out[rand(out.length)] as string);
      }
      return out;
    };
    let clean = 0;
    const cases = 400;
    for (let k = 0; k < cases; k++) {
      const base = readFileSync(corpus[rand(corpus.length)] as string, 'utf8');
      const lines = base.split('\n');
      const ours = mutate(lines).join('\n');
      const theirs = mutate(lines).join('\n');
      const git = gitMerge(base, ours, theirs);
      const mine = merge3(base, ours, theirs);
      expect(mine.clean, `case ${k}`).toBe(git.clean);
      if (git.clean) {
        clean++;
        expect(mine.text, `case ${k}`).toBe(git.text);
      }
    }
    // Both outcomes must be well represented for the comparison to mean anything.
    expect(clean).toBeGreaterThan(cases * 0.5);
    expect(clean).toBeLessThan(cases * 0.95);
  });
});
