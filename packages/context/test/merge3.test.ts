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
// git labels its markers with the paths it was given.
const mineMarked = (base: string, ours: string, theirs: string) =>
  merge3(base, ours, theirs, { markers: true, labels: { ours: join(work, 'ours'), theirs: join(work, 'theirs') } });

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

  it('picks the alignment git picks among equally short diffs (randomized case 366)', () => {
    // Two minimal diffs of base -> ours exist; only the one xdiff's search finds makes ours' insertion touch theirs' edit.
    const base = 'a\na\nb\nc\na\nb\na\n';
    const ours = 'a\nc\na\na\nb\na\n';
    const theirs = 'a\na\na\na\n';
    const git = gitMerge(base, ours, theirs);
    expect(git.clean).toBe(false);
    expect(mineMarked(base, ours, theirs)).toMatchObject({ clean: false, text: git.text });
  });

  it('cuts a very expensive diff short where git does', () => {
    // Over ~256 steps xdiff stops searching for the shortest diff and splits at the furthest-reaching point; the conflict hunks show it.
    let seed = 2;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const lines = Array.from({ length: 2000 }, () => `${rand(20)}\n`);
    const base = lines.join('');
    const ours = lines.filter(() => rand(3) > 0).join('');
    const theirs = lines.map((l) => (rand(8) === 0 ? 'x\n' : l)).join('');
    const git = gitMerge(base, ours, theirs);
    expect(git.clean).toBe(false);
    expect(mineMarked(base, ours, theirs).text).toBe(git.text);
  });

  it('joins conflicts separated by up to three lines, or by lines without letters or digits, as git does', () => {
    const cases: Array<[string, string, string, number]> = [
      ['a\nb\nc\nd\ne\n', 'A\nb\nc\nD\ne\n', 'X\nb\nc\nY\ne\n', 1],
      ['a\n}\n\n}\n\nb\n', 'A\n}\n\n}\n\nB\n', 'X\n}\n\n}\n\nY\n', 1],
      ['a\nk\nl\nm\nn\nb\n', 'A\nk\nl\nm\nn\nB\n', 'X\nk\nl\nm\nn\nY\n', 2],
    ];
    for (const [base, ours, theirs, count] of cases) {
      const mine = mineMarked(base, ours, theirs);
      expect(mine.conflicts).toHaveLength(count);
      expect(mine.text).toBe(gitMerge(base, ours, theirs).text);
    }
  });

  it('writes CRLF markers into CRLF files, as git does', () => {
    for (const [base, ours, theirs] of [
      ['a\r\nb\r\nc', 'x\r\nb\r\nc', 'y\r\nb\r\nc'],
      ['a\r\nb\r\nc', 'a\r\nb\r\nx', 'a\r\nb\r\ny'],
    ] as const) {
      const git = gitMerge(base, ours, theirs);
      expect(git.text).toContain('=======\r\n');
      expect(mineMarked(base, ours, theirs).text).toBe(git.text);
    }
  });

  describe('agrees with git merge-file on randomized edits of real files', () => {
    const corpus: string[] = [];
    const walk = (dir: string, depth: number) => {
      if (corpus.length >= 300 || depth > 7) return;
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p, depth + 1);
        else if (/\.(js|ts|md)$/.test(e.name)) {
          const st = statSync(p);
          if (st.isFile() && st.size > 1000 && st.size < 40_000) corpus.push(p);
        }
      }
    };
    walk(join(import.meta.dirname, '../../../node_modules/.pnpm'), 0);

    /**
     * Merges `cases` random pairs of edits of corpus files with both and
     * compares: clean vs conflict, the text when clean and, when `markers`,
     * the text with conflict markers too. Returns how many git found clean.
     */
    const compare = (seed: number, cases: number, heavy: boolean): number => {
      expect(corpus.length).toBeGreaterThan(50);
      const rand = (n: number) => {
        // Math.imul keeps the product exact; the high bits are the random ones.
        seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
        return Math.floor((seed / 0x80000000) * n);
      };
      // Lines that recur everywhere in code: where diffs have most freedom to align differently.
      const common = ['', '}', '  }', '    }', '});', ' */'];
      const mutate = (lines: string[]) => {
        const out = [...lines];
        for (let e = 0, n = 1 + rand(heavy ? 14 : 4); e < n; e++) {
          const at = rand(out.length + 1);
          const kind = rand(heavy ? 9 : 4);
          if (kind === 0) out.splice(at, 0, `// inserted ${rand(1000)}`);
          else if (kind === 1) out.splice(at, 1 + rand(heavy ? 8 : 3));
          else if (kind === 2 && at < out.length) out[at] = `${out[at]} // changed`;
          else if (kind === 4) out.splice(at, 0, common[rand(common.length)] as string);
          else if (kind === 5) out.splice(at, 0, ...out.splice(rand(out.length), 1 + rand(10)));
          else if (kind === 6) out.splice(at, 0, ...out.slice(at + rand(7) - 3, at + 3));
          else if (kind === 7 && at + 1 < out.length) out.splice(at, 2, out[at + 1] as string, out[at] as string);
          else if (out.length > 0) out.splice(at, 0, out[rand(out.length)] as string);
        }
        return out;
      };
      let clean = 0;
      for (let k = 0; k < cases; k++) {
        let base = readFileSync(corpus[rand(corpus.length)] as string, 'utf8');
        const eol = heavy && rand(8) === 0 ? '\r\n' : '\n';
        if (eol === '\r\n') base = base.replaceAll('\n', '\r\n');
        const lines = base.split(eol);
        const toggleEnd = (s: string) => (heavy && rand(12) === 0 ? (s.endsWith(eol) ? s.slice(0, -eol.length) : s + eol) : s);
        const ours = toggleEnd(mutate(lines).join(eol));
        const theirs = toggleEnd(mutate(lines).join(eol));
        const git = gitMerge(base, ours, theirs);
        const mine = heavy ? mineMarked(base, ours, theirs) : merge3(base, ours, theirs);
        expect(mine.clean, `case ${k}`).toBe(git.clean);
        if (git.clean) clean++;
        if (git.clean || heavy) expect(mine.text, `case ${k}`).toBe(git.text);
      }
      return clean;
    };

    it('small edits', () => {
      const cases = 400;
      const clean = compare(7, cases, false);
      // Both outcomes must be well represented for the comparison to mean anything.
      expect(clean).toBeGreaterThan(cases * 0.5);
      expect(clean).toBeLessThan(cases * 0.95);
    }, 30_000);

    it('many edits, recurring lines, moved blocks, CRLF and final newlines, conflict markers included', () => {
      const cases = 250;
      const clean = compare(11, cases, true);
      expect(clean).toBeGreaterThan(cases * 0.1);
      expect(clean).toBeLessThan(cases * 0.9);
    }, 30_000);
  });
});
