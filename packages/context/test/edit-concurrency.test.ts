/**
 * Several agents, each with its own session, read and edit the same files in
 * random interleavings. Every edit must end applied, merged or refused with
 * a conflict — and the final files must hold exactly the applied ones.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ContextSession, createContext, type EditResult, type VersionStore } from '../src/index.ts';
import { BACKENDS } from './backends.ts';
import { ON_POSTGRES, testState } from './support/test-state.ts';

// CTXFS_SIM_RUNS / CTXFS_SIM_SEED explore further interleavings locally.
const EXTRA = Number(process.env.CTXFS_SIM_RUNS ?? 0);
const SEED = Number(process.env.CTXFS_SIM_SEED ?? 0);
const RUNS: Record<string, number> = { memory: EXTRA || (ON_POSTGRES ? 100 : 1000), host: EXTRA ? Math.ceil(EXTRA / 7) : ON_POSTGRES ? 15 : 150 };
const KEYS = 10;
const FILES = ['f0.txt', 'f1.txt'];

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const initial = (file: string) => `${Array.from({ length: KEYS }, (_, i) => `${file}:k${i}: v0`).join('\n')}\n`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

interface Attempt {
  readonly file: string;
  readonly key: number | undefined;
  readonly tag: string;
  readonly kind: string;
  result?: EditResult;
}

async function yieldRandom(rand: () => number): Promise<void> {
  const n = Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

async function agentLoop(name: string, session: ContextSession, versions: VersionStore, rand: () => number, ops: number, attempts: Attempt[]): Promise<void> {
  // What the agent believes each file holds after its own successful edits;
  // it sometimes edits from that belief without reading again, as models do.
  const belief = new Map<string, string>();
  for (let n = 0; n < ops; n++) {
    const file = FILES[Math.floor(rand() * FILES.length)] as string;
    let seen = belief.get(file);
    if (seen === undefined || rand() < 0.6) {
      const served = await session.readFile(file);
      const bytes = await versions.getBlob(served.version);
      if (!bytes) throw new Error('read content not remembered');
      seen = new TextDecoder().decode(bytes);
    }
    const lines = seen.split('\n').slice(0, -1);
    await yieldRandom(rand);
    const key = Math.floor(rand() * KEYS);
    const idx = lines.findIndex((l) => l.startsWith(`${file}:k${key}: `));
    const tag = `${name}-${n}-${Math.floor(rand() * 1e9).toString(36)}`;
    const oldLine = lines[idx] as string;
    const newLine = `${file}:k${key}: ${tag}`;
    const kind = ['lines', 'replace', 'write', 'patch', 'insert'][Math.floor(rand() * 5)] as string;
    const attempt: Attempt = { file, key: kind === 'insert' ? undefined : key, tag, kind };
    attempts.push(attempt);
    let result: EditResult;
    switch (kind) {
      case 'lines':
        result = await session.editLines(file, { kind: 'replace', start: idx + 1, end: idx + 1, text: newLine });
        break;
      case 'replace':
        result = await session.replace(file, `${oldLine}\n`, `${newLine}\n`);
        break;
      case 'write': {
        const next = [...lines];
        next[idx] = newLine;
        result = await session.writeFile(file, `${next.join('\n')}\n`);
        break;
      }
      case 'patch': {
        const before = lines[idx - 1];
        const after = lines[idx + 1];
        const body = [before !== undefined ? ` ${before}` : undefined, `-${oldLine}`, `+${newLine}`, after !== undefined ? ` ${after}` : undefined]
          .filter((l) => l !== undefined)
          .join('\n');
        // Deliberately wrong line numbers: the hunk is found by its content.
        result = await session.applyPatch(`--- a/${file}\n+++ b/${file}\n@@ -${idx + 7},3 +${idx + 7},3 @@\n${body}\n`);
        break;
      }
      default:
        result = await session.editLines(file, { kind: 'insert-after', line: idx + 1, text: `${file}:new ${tag}` });
    }
    attempt.result = result;
    if (result.success) {
      const next = [...lines];
      if (kind === 'insert') next.splice(idx + 1, 0, `${file}:new ${tag}`);
      else next[idx] = newLine;
      belief.set(file, `${next.join('\n')}\n`);
    } else belief.delete(file);
    await yieldRandom(rand);
  }
}

for (const backend of BACKENDS) {
  describe(`concurrent agents over ${backend.name}`, () => {
    it(`never loses an edit silently (${RUNS[backend.name]} random interleavings)`, async () => {
      const runs = RUNS[backend.name] ?? 100;
      const totals = { applied: 0, merged: 0, refused: 0, attempts: 0 };
      for (let run = 0; run < runs; run++) {
        const rand = rng(0x9e3779b9 ^ ((run + SEED) * 7919) ^ backend.name.length);
        const ws = await backend.create(Object.fromEntries(FILES.map((f) => [f, initial(f)])));
        const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
        try {
          const agents = ['llm:a', 'llm:b', 'llm:c'].map((a, i) => (i === 0 ? ctx : ctx.session({ agent: a })));
          const attempts: Attempt[] = [];
          await Promise.all(agents.map((s, i) => agentLoop(`ag${i}`, s, ctx.versions, rand, 3 + Math.floor(rand() * 3), attempts)));
          for (const file of FILES) {
            const final = new TextDecoder().decode(await ws.fs.readBytes(file));
            const lines = final.split('\n').slice(0, -1);
            const mine = attempts.filter((a) => a.file === file);
            for (const a of mine) {
              const r = a.result as EditResult;
              expect(r.success || r.code === 'ECONFLICT', `${a.kind} ${r.message}`).toBe(true);
              if (!r.success) expect(r.conflict ?? r.next, r.message).toBeDefined();
            }
            const applied = mine.filter((a) => a.result?.success).sort((x, y) => (x.result?.seq ?? 0) - (y.result?.seq ?? 0));
            // Every key line once, holding the last applied value.
            for (let k = 0; k < KEYS; k++) {
              const holders = lines.filter((l) => l.startsWith(`${file}:k${k}: `));
              expect(holders, `${file} k${k} in\n${final}`).toHaveLength(1);
              const last = applied.filter((a) => a.key === k).at(-1);
              expect(holders[0], `run ${run} ${file} k${k}`).toBe(`${file}:k${k}: ${last?.tag ?? 'v0'}`);
            }
            // Every applied insert present once; refused ones absent.
            for (const a of mine.filter((x) => x.key === undefined)) {
              const count = lines.filter((l) => l === `${file}:new ${a.tag}`).length;
              expect(count, `insert ${a.tag} ${a.result?.message}`).toBe(a.result?.success ? 1 : 0);
            }
            expect(lines.length).toBe(KEYS + mine.filter((a) => a.key === undefined && a.result?.success).length);
            // History and disk agree, and nothing is left in the journal.
            if (mine.length > 0) expect((await ctx.versions.latest(file))?.sha256).toBe(sha(final));
          }
          expect(await ctx.journal.pending()).toEqual([]);
          for (const a of attempts) {
            totals.attempts++;
            if (a.result?.merged) totals.merged++;
            else if (a.result?.success) totals.applied++;
            else totals.refused++;
          }
        } finally {
          await ctx.close();
          await ws.cleanup();
        }
      }
      // The simulation must exercise all three outcomes.
      expect(totals.applied).toBeGreaterThan(0);
      expect(totals.merged).toBeGreaterThan(0);
      expect(totals.refused).toBeGreaterThan(0);
      console.log(`[${backend.name}] ${runs} runs, ${totals.attempts} edits: applied ${totals.applied}, merged ${totals.merged}, refused ${totals.refused}`);
    }, 240_000);
  });
}
