/**
 * Argument forms the commands share: line ranges (`10:40`, `10:`, `10`) and
 * version references (a number, a hash, `current`, `previous`, `disk`).
 *
 * @module
 */

import { CliError } from './exit-codes.ts';

/** A 1-based inclusive line range; `end` undefined for "to the end" (or what fits). */
export interface LineRange {
  readonly start: number;
  readonly end: number | undefined;
}

/**
 * Reads `--lines`: `start:end`, `start:` or a single line `n`. A range
 * written as people write one elsewhere (`10-40`, sed's `10,40`) means the
 * same and is taken too: nothing else could be meant by it.
 *
 * @example
 * ```ts
 * parseLines('10:40'); // { start: 10, end: 40 }
 * parseLines('10-40'); // { start: 10, end: 40 }
 * parseLines('10:');   // { start: 10, end: undefined }
 * ```
 */
export function parseLines(value: string, option = '--lines'): LineRange {
  const m = /^(\d+)(?:([:,-])(\d*))?$/.exec(value.trim());
  const bad = (why: string): never => {
    throw new CliError('EINVAL', `${option} ${value}: ${why}`, `write ${option} 10:40, ${option} 10: or ${option} 10`);
  };
  if (m === null) return bad('expected start:end');
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : m[3] === '' ? undefined : Number(m[3]);
  if (start < 1) return bad('lines count from 1');
  if (end !== undefined && end < start) return bad('the end is before the start');
  return { start, end };
}

/** A version as the history tools take it: a number stays a number, anything else (a hash, `current`, …) a string. */
export function versionRef(value: string): number | string {
  return /^\d+$/.test(value) ? Number(value) : value;
}
