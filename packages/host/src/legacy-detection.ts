/**
 * The host's legacy-encoding detector: jschardet's candidates ranked by
 * core's `rankCandidates` (plausibility of the decoded text). Measured on the
 * multilingual corpus of the tests (35 legacy files, and 109 short fragments
 * of them): whole files are detected by both chardet and jschardet; on
 * four-word fragments chardet alone gets 93/109, jschardet 104/109, and
 * jschardet with plausibility ranking 106/109, so that is the default.
 *
 * @module
 */

import { type EncodingCandidate, type LegacyDetector, rankCandidates } from '@ctxfs/core';
import jschardet from 'jschardet';

function candidates(sample: Uint8Array): EncodingCandidate[] {
  // jschardet takes a binary string: one char per byte.
  const text = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength).toString('latin1');
  return jschardet.detectAll(text).flatMap((m) => (m.encoding ? [{ encoding: m.encoding, confidence: m.confidence }] : []));
}

/**
 * Legacy detector backed by jschardet.
 *
 * @example
 * ```ts
 * const fs = await HostFilesystem.open({ root, legacyDetector: jschardetDetector }); // the default
 * ```
 */
export const jschardetDetector: LegacyDetector = (sample) => rankCandidates(sample, candidates(sample));
