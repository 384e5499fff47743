/**
 * Encoding detection on real translated text: what each backend serves for
 * a file beside jschardet alone and chardet alone, on the same bytes.
 *
 * The corpus (packages/host/test/support/encoding-corpus.ts) is built from
 * the gettext catalogues of CKEditor 5 and the locale sources of moment.js,
 * downloaded from the npm registry by pinned version (cached under
 * ~/.cache/ctxfs-bench/releases), each re-encoded into every legacy encoding
 * its script allows, with the hard classes: short fragments, text after
 * more than the detection sample of ASCII, damaged UTF-8, UTF-16 without
 * BOM, ISO-2022-JP.
 *
 * Run: `pnpm eval:encoding` (writes bench/results/latest-encoding-detection.json).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeLikeReader, detectTextFormat, type LegacyDetector } from '@ctxfs/core';
import { jschardetDetector } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { buildEncodingCorpus } from '../../../packages/host/test/support/encoding-corpus.ts';
import {
  type CaseDecoder,
  chardetAlone,
  type Evaluation,
  evaluate,
  jschardetAlone,
  percent,
  type Score,
} from '../../../packages/host/test/support/encoding-eval.ts';

// Every backend decodes through FilesystemBase.decodeText with core's detector
// (the host's default too), so one backend's answer is every backend's.
const memory = new MemoryFilesystem();
const backend: CaseDecoder = (bytes) => {
  const d = memory.decodeText(bytes);
  return d.binary ? undefined : d;
};

/** Core's detection with another legacy detector plugged in (the host's `legacyDetector` option). */
function withDetector(legacyDetector: LegacyDetector): CaseDecoder {
  return (bytes) => {
    const f = detectTextFormat(bytes, { legacyDetector });
    if (f.binary) return undefined;
    return { encoding: f.encoding, bomLength: f.bomLength, text: decodeLikeReader(bytes.subarray(f.bomLength), f.encoding) };
  };
}

const ALL: Record<string, CaseDecoder> = {
  ctxfs: backend,
  'ctxfs + jschardet': withDetector(jschardetDetector),
  'jschardet alone': jschardetAlone,
  'chardet alone': chardetAlone,
};
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const DECODERS = only ? Object.fromEntries(Object.entries(ALL).filter(([k]) => only.includes(k))) : ALL;

function row(label: string, scores: Record<string, Score>, names: readonly string[]): string {
  return `| ${label} | ${names.map((n) => (scores[n] ? percent(scores[n].detected, scores[n].cases) : '-')).join(' | ')} |`;
}

function table(title: string, rows: Record<string, Record<string, Score>>, names: readonly string[]): string[] {
  return [
    `\n${title}\n`,
    `| | ${names.join(' | ')} |`,
    `| --- | ${names.map(() => '---').join(' | ')} |`,
    ...Object.keys(rows)
      .sort()
      .map((k) => row(k, rows[k] ?? {}, names)),
  ];
}

const started = Date.now();
const cases = buildEncodingCorpus();
const result: Evaluation = evaluate(cases, DECODERS);
const names = Object.keys(DECODERS);
const lines = [
  `${cases.length} cases, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  ...table('Detected (served text equals the real text), whole corpus', { all: result.total }, names),
  `\nByte-exact round trip: ${names.map((n) => `${n} ${percent(result.total[n]?.roundTrips ?? 0, result.total[n]?.cases ?? 0)}`).join('; ')}`,
  ...table('Per class', result.byClass, names),
  ...table('Per source', result.bySource, names),
  ...table('Per encoding', result.byEncoding, names),
];
console.log(lines.join('\n'));
const missed = result.misses[names[0] as string] ?? [];
if (missed.length > 0)
  console.log(
    `\n${names[0]} misses (first 40):\n${missed
      .slice(0, 40)
      .map((m) => `  ${m.id} -> ${m.got}`)
      .join('\n')}`,
  );
const out = join(import.meta.dirname, '..', '..', 'results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'latest-encoding-detection.json'), `${JSON.stringify({ cases: cases.length, ...result }, null, 1)}\n`);
