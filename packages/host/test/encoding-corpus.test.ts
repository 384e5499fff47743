/**
 * Encoding detection on a pinned slice of the real-text corpus of
 * `pnpm eval:encoding` (CKEditor 5's table and image catalogues, moment's
 * locales; downloaded from the npm registry into the cache on first run):
 * every case written to disk and read back through the host backend, by
 * streaming (`read`) and from bytes in hand (`decodeText`), which must
 * agree; then written back. The floors are the figures this detector
 * reaches on the slice (99.2% of 2,388 cases; see bench/README.md for the
 * whole corpus): a regression fails here.
 */

import nodeFs from 'node:fs';
import path from 'node:path';
import { type DecodedText, splitLines } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';
import { buildEncodingCorpus, CI_SOURCES, type EncodingCase } from './support/encoding-corpus.ts';
import { chardetAlone, type Decoded, evaluate, jschardetAlone, percent, roundTrips } from './support/encoding-eval.ts';

const ws = tempWorkspace('ctxfs-enc-corpus-');
let hfs: HostFilesystem;
let cases: EncodingCase[] = [];
const files = new Map<string, string>();

beforeAll(async () => {
  cases = buildEncodingCorpus({ sources: CI_SOURCES, fragmentsPerDocument: 2 });
  cases.forEach((c, i) => {
    const file = `c${i}.txt`;
    nodeFs.writeFileSync(path.join(ws.root, file), c.bytes);
    files.set(c.id, file);
  });
  hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, durability: 'none' });
}, 300_000);

afterAll(async () => {
  await hfs?.close();
  ws.remove();
});

describe('encoding detection on real translated text (host backend)', () => {
  it('serves the real text for the whole slice and every class, far ahead of jschardet and chardet alone', async () => {
    const streamed = new Map<string, string[]>();
    for (const c of cases) streamed.set(c.id, (await hfs.read(files.get(c.id) as string, { limit: 1_000_000 })).lines);
    const decoded = new Map<Uint8Array, DecodedText>();
    const backend = (bytes: Uint8Array): Decoded | undefined => {
      const d = hfs.decodeText(bytes);
      decoded.set(bytes, d);
      return d.binary ? undefined : d;
    };
    const result = evaluate(cases, { ctxfs: backend, jschardet: jschardetAlone, chardet: chardetAlone });
    const all = result.total.ctxfs as { cases: number; detected: number; roundTrips: number };
    console.log(
      `encoding slice: ${cases.length} cases; ctxfs ${percent(all.detected, all.cases)}, jschardet alone ${percent(result.total.jschardet?.detected ?? 0, all.cases)}, chardet alone ${percent(result.total.chardet?.detected ?? 0, all.cases)}; by class: ${Object.entries(
        result.byClass,
      )
        .map(([k, v]) => `${k} ${percent(v.ctxfs?.detected ?? 0, v.ctxfs?.cases ?? 0)}`)
        .join(', ')}`,
    );
    // Streaming and bytes in hand read every file as the same text.
    const disagree = cases.filter((c) => JSON.stringify(splitLines(decoded.get(c.bytes)?.text ?? '')) !== JSON.stringify(streamed.get(c.id)));
    expect(disagree.map((c) => `${c.id}: ${decoded.get(c.bytes)?.encoding}`)).toEqual([]);
    expect(all.detected / all.cases).toBeGreaterThanOrEqual(0.991);
    const floors: Record<string, number> = { file: 1, late: 1, fragment: 0.96, 'utf8-damaged': 0.998, unicode: 1 };
    for (const [cls, floor] of Object.entries(floors)) {
      const s = result.byClass[cls]?.ctxfs;
      expect(s && s.detected / s.cases, cls).toBeGreaterThanOrEqual(floor);
    }
    expect(all.detected).toBeGreaterThan((result.total.jschardet?.detected ?? 0) + cases.length * 0.2);
    expect(all.detected).toBeGreaterThan((result.total.chardet?.detected ?? 0) + cases.length * 0.2);
  }, 300_000);

  it('writes every file back byte for byte when its text comes back unchanged', async () => {
    const broken: string[] = [];
    for (const c of cases) {
      const file = files.get(c.id) as string;
      const page = await hfs.read(file, { limit: 1_000_000 });
      const d = hfs.decodeText(c.bytes);
      if (!roundTrips(c.bytes, d)) broken.push(`${c.id} (decodeText)`);
      // fs.read drops line terminators; the text of the file is its lines and their endings.
      await hfs.write(file, d.text);
      if (!Buffer.from(await hfs.readBytes(file)).equals(Buffer.from(c.bytes))) broken.push(`${c.id} (write)`);
      expect(page.lines.length).toBeGreaterThan(0);
    }
    expect(broken).toEqual([]);
  }, 300_000);
});
