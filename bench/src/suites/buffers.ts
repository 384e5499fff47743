/**
 * Buffers (issue 15): which merge keeps a buffer and the disk in step when
 * both changed. Three candidates on the same inputs: the line merge alone
 * (`merge3`, git's rules), the buffers' merge (`mergeSides`: lines, then
 * words where lines collide), and a character CRDT (loro-crdt, two forked
 * documents each taking one side's text with `update`, then exchanging
 * updates, as seed 003 designs it). Two input sets:
 *
 * - keystroke-style: a person and an agent each type into a different word
 *   of the same line (the case a line merge cannot do);
 * - the same word rewritten differently by both: no true merge, so a
 *   silent merge is wrong and a collision is right;
 * - real concurrent edits: a release diff of real npm packages split in two,
 *   odd hunks to one side and even hunks to the other, whose true merge is
 *   the next release.
 *
 * Correctness (merged exactly to the truth, reported as a collision, or
 * merged wrong without a word) is counted untimed and printed in the notes;
 * the timed rows compare the cost per merge.
 *
 * @module
 */

import { merge3, mergeSides } from '@ctxfs/context';
import { applyPatch, structuredPatch } from 'diff';
import { LoroDoc } from 'loro-crdt';
import { PATCH_EVAL_RELEASES, releaseEdits } from '../../../packages/context/test/support/release-diffs.ts';
import { defineSuite } from '../harness.ts';

interface Triple {
  readonly base: string;
  readonly ours: string;
  readonly theirs: string;
  readonly truth: string;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A person and an agent typing into two different words of one line each round. */
function keystrokeTriples(count: number): Triple[] {
  const rand = rng(15);
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) lines.push(`  const value${i} = compute(alpha${i}, beta${i}, gamma${i}); // note ${i}`);
  const base = `${lines.join('\n')}\n`;
  const out: Triple[] = [];
  for (let k = 0; k < count; k++) {
    const line = Math.floor(rand() * lines.length);
    const words = [...(lines[line] as string).matchAll(/[A-Za-z]+\d*/g)];
    const a = Math.floor(rand() * words.length);
    let b = Math.floor(rand() * words.length);
    if (b === a) b = (a + 1) % words.length;
    const lineStart = base.indexOf(lines[line] as string);
    const at = (w: number) => lineStart + ((words[w]?.index ?? 0) + (words[w]?.[0].length ?? 0));
    const typeA = 'Typed'.slice(0, 1 + Math.floor(rand() * 5));
    const typeB = 'Agent'.slice(0, 1 + Math.floor(rand() * 5));
    const pa = at(a);
    const pb = at(b);
    const ours = base.slice(0, pb) + typeB + base.slice(pb);
    const theirs = base.slice(0, pa) + typeA + base.slice(pa);
    const [first, second] = pa < pb ? [[pa, typeA] as const, [pb, typeB] as const] : [[pb, typeB] as const, [pa, typeA] as const];
    const truth = base.slice(0, first[0]) + first[1] + base.slice(first[0], second[0]) + second[1] + base.slice(second[0]);
    out.push({ base, ours, theirs, truth });
  }
  return out;
}

/** Both sides rewriting the same word differently: no true merge exists, so the right answer is a collision. */
function overlappingTriples(count: number): Triple[] {
  const rand = rng(3);
  const out: Triple[] = [];
  for (let k = 0; k < count; k++) {
    const n = Math.floor(rand() * 50);
    const base = `first line\n  return total${n} + offset;\nlast line\n`;
    out.push({ base, ours: base.replace(`total${n}`, `sum${n}`), theirs: base.replace(`total${n}`, `amount${n}`), truth: '\u0000 no true merge' });
  }
  return out;
}

/** Real release diffs, split hunk by hunk between the two sides. */
function releaseTriples(): { triples: Triple[]; skipped: string[] } {
  const skipped: string[] = [];
  const triples: Triple[] = [];
  for (const e of releaseEdits(PATCH_EVAL_RELEASES, 6, (m) => skipped.push(m))) {
    const patch = structuredPatch('a', 'b', e.before, e.after, '', '', { context: 0 });
    if (patch.hunks.length < 2) continue;
    const side = (odd: boolean) => applyPatch(e.before, { ...patch, hunks: patch.hunks.filter((_, i) => i % 2 === (odd ? 1 : 0)) });
    const ours = side(false);
    const theirs = side(true);
    if (ours === false || theirs === false) continue;
    triples.push({ base: e.before, ours, theirs, truth: e.after });
  }
  return { triples, skipped };
}

function loroMerge(base: string, ours: string, theirs: string): string {
  const doc = new LoroDoc();
  doc.setPeerId(1n);
  doc.getText('content').insert(0, base);
  doc.commit();
  const disk = doc.fork();
  disk.setPeerId(2n);
  doc.getText('content').update(ours);
  doc.commit();
  disk.getText('content').update(theirs);
  disk.commit();
  doc.import(disk.export({ mode: 'update' }));
  return doc.getText('content').toString();
}

type Verdict = 'exact' | 'collision' | 'wrong';

function score(triples: readonly Triple[], merge: (t: Triple) => { text: string | undefined; conflict: boolean }): Record<Verdict, number> {
  const out: Record<Verdict, number> = { exact: 0, collision: 0, wrong: 0 };
  for (const t of triples) {
    const r = merge(t);
    out[r.conflict ? 'collision' : r.text === t.truth ? 'exact' : 'wrong']++;
  }
  return out;
}

const line = (t: Triple) => {
  const r = merge3(t.base, t.ours, t.theirs);
  return { text: r.text, conflict: !r.clean };
};
const sides = (t: Triple) => {
  const r = mergeSides(t.base, t.ours, t.theirs, 'ask');
  return { text: r.text, conflict: r.collisions.length > 0 };
};
const loro = (t: Triple) => ({ text: loroMerge(t.base, t.ours, t.theirs), conflict: false });

function figures(name: string, triples: readonly Triple[]): string {
  const fmt = (r: Record<Verdict, number>) => `${r.exact} exact, ${r.collision} collision, ${r.wrong} wrong`;
  return `${name} (${triples.length}): merge3 ${fmt(score(triples, line))}; mergeSides ${fmt(score(triples, sides))}; loro ${fmt(score(triples, loro))}`;
}

export default defineSuite({
  name: 'buffers',
  description: 'Merging a buffer with the disk: merge3 vs mergeSides (lines, then words) vs loro-crdt forked documents.',
  setup: () => {
    const keys = keystrokeTriples(200);
    const real = releaseTriples();
    const same = overlappingTriples(200);
    return { keys, real, same };
  },
  cases: ({ keys, real, same }) => {
    const one = keys[0] as Triple;
    const big = [...real.triples].sort((a, b) => b.base.length - a.base.length)[Math.floor(real.triples.length / 2)] ?? one;
    return [
      {
        name: 'keystroke merge',
        subjectName: 'mergeSides',
        subject: () => sides(one),
        baseline: () => line(one),
        baselineName: 'merge3',
        moreBaselines: [{ name: 'loro fork+update+import', fn: () => loro(one) }],
        note: `${figures('keystroke-style', keys)} | ${figures('same word rewritten by both (right answer: collision)', same)}`,
      },
      {
        name: `real edit merge (${big.base.length} chars)`,
        subjectName: 'mergeSides',
        subject: () => sides(big),
        baseline: () => line(big),
        baselineName: 'merge3',
        moreBaselines: [{ name: 'loro fork+update+import', fn: () => loro(big) }],
        note: `${figures('real release edits split in two', real.triples)}${real.skipped.length > 0 ? `; skipped: ${real.skipped.join('; ')}` : ''}`,
      },
    ];
  },
});
