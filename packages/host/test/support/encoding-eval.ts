/**
 * Scoring of text decoders on the encoding corpus: a case is *detected*
 * when the decoder serves exactly the text a correct reader serves, and
 * *round-trips* when writing that text back the way ctxfs writes an edit
 * (core's `encodeTextExact` with the file's previous bytes, BOM kept)
 * gives back every byte. Shared by `pnpm eval:encoding` and the CI test.
 *
 * @module
 */

import { decodeLikeReader, detectBom, encodeTextExact, normalizeEncoding } from '@ctxfs/core';
import chardet from 'chardet';
import jschardet from 'jschardet';
import type { EncodingCase } from './encoding-corpus.ts';

/** What a decoder made of a file. */
export interface Decoded {
  readonly encoding: string;
  readonly bomLength: number;
  readonly text: string;
}

/** A decoder under test; `undefined` when it has no answer. */
export type CaseDecoder = (bytes: Uint8Array) => Decoded | undefined;

function decodeAs(bytes: Uint8Array, label: string | null | undefined): Decoded | undefined {
  if (!label) return undefined;
  const encoding = normalizeEncoding(label);
  const bom = detectBom(bytes);
  const bomLength = bom !== undefined && bom.encoding === encoding ? bom.length : 0;
  try {
    return { encoding, bomLength, text: decodeLikeReader(bytes.subarray(bomLength), encoding) };
  } catch {
    return undefined;
  }
}

/** jschardet's single answer, used as it is. */
export const jschardetAlone: CaseDecoder = (bytes) =>
  decodeAs(bytes, jschardet.detect(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')).encoding);

/** chardet's single answer, used as it is. */
export const chardetAlone: CaseDecoder = (bytes) => decodeAs(bytes, chardet.detect(bytes));

/** Hits out of cases. */
export interface Score {
  cases: number;
  detected: number;
  roundTrips: number;
}

/** Scores per decoder: whole corpus, per class, per encoding; and the ids of the misses. */
export interface Evaluation {
  readonly total: Record<string, Score>;
  readonly byClass: Record<string, Record<string, Score>>;
  readonly byEncoding: Record<string, Record<string, Score>>;
  /** Per source project: CKEditor 5's catalogues, moment's locales. */
  readonly bySource: Record<string, Record<string, Score>>;
  readonly misses: Record<string, { id: string; got: string }[]>;
}

function bump(table: Record<string, Record<string, Score>>, key: string, name: string, detected: boolean, roundTrip: boolean): void {
  table[key] ??= {};
  const row = table[key];
  row[name] ??= { cases: 0, detected: 0, roundTrips: 0 };
  const s = row[name];
  s.cases++;
  if (detected) s.detected++;
  if (roundTrip) s.roundTrips++;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Writes `d.text` back as an edit of the file would and compares with the original bytes. */
export function roundTrips(bytes: Uint8Array, d: Decoded): boolean {
  try {
    const body = encodeTextExact(d.text, d.encoding, bytes.subarray(d.bomLength));
    const out = new Uint8Array(d.bomLength + body.byteLength);
    out.set(bytes.subarray(0, d.bomLength), 0);
    out.set(body, d.bomLength);
    return sameBytes(out, bytes);
  } catch {
    return false;
  }
}

/**
 * Runs every decoder over every case.
 *
 * @example
 * ```ts
 * const e = evaluate(cases, { ctxfs: (b) => fs.decodeText(b), jschardet: jschardetAlone });
 * e.total.ctxfs.detected / e.total.ctxfs.cases;
 * ```
 */
export function evaluate(cases: readonly EncodingCase[], decoders: Readonly<Record<string, CaseDecoder>>): Evaluation {
  const total: Record<string, Record<string, Score>> = {};
  const byClass: Record<string, Record<string, Score>> = {};
  const byEncoding: Record<string, Record<string, Score>> = {};
  const bySource: Record<string, Record<string, Score>> = {};
  const misses: Record<string, { id: string; got: string }[]> = {};
  for (const c of cases) {
    for (const [name, decode] of Object.entries(decoders)) {
      let d: Decoded | undefined;
      try {
        d = decode(c.bytes);
      } catch {
        d = undefined;
      }
      const detected = d !== undefined && d.text === c.text;
      const exact = d !== undefined && roundTrips(c.bytes, d);
      bump(total, 'all', name, detected, exact);
      bump(byClass, c.cls, name, detected, exact);
      bump(byEncoding, c.encoding, name, detected, exact);
      bump(bySource, c.source.startsWith('@ckeditor/') ? 'CKEditor 5 catalogues' : c.source, name, detected, exact);
      if (!detected) {
        misses[name] ??= [];
        misses[name].push({ id: c.id, got: d?.encoding ?? 'none' });
      }
    }
  }
  return { total: total.all ?? {}, byClass, byEncoding, bySource, misses };
}

/** `98.7% (123/125)`. */
export function percent(hits: number, of: number): string {
  return `${of === 0 ? '-' : ((100 * hits) / of).toFixed(1)}% (${hits}/${of})`;
}
