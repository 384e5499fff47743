/**
 * One entry's line, as the trail's writers append it: checked, its
 * parameters elided, given a request id when the caller had none. Shared by
 * the trail and its append thread, so both write the same line.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { type AuditEntry, checkEntry, entryFields } from './audit-record.ts';
import type { ChainWriter, WrittenLine } from './chain-writer.ts';

/** An entry's line as written, with what the record returned for it is made of. */
export interface WrittenEntry {
  readonly line: WrittenLine;
  /** The MAC of the line before it. */
  readonly prev: string;
  /** Its fields after `seq`, `prev`, `ts` and `type`, as written. */
  readonly fields: Record<string, unknown>;
}

/** Appends `entry` to the chain `writer` writes (in a hold of its lock, when the hold ends). */
export function writeEntry(writer: ChainWriter, entry: AuditEntry): WrittenEntry {
  checkEntry(entry);
  const requestId = entry.requestId ?? randomUUID();
  let fields: Record<string, unknown> = {};
  let prev = '';
  const line = writer.append('entry', (_seq, p) => {
    prev = p;
    fields = entryFields(entry, requestId);
    return fields;
  });
  return { line, prev, fields };
}

/**
 * The fields of `entry`'s line as JSON (checked, elided, given a request id),
 * made once by the thread that hands the entry to the append thread: the
 * thread seals them as they are (`writer.append('entry', () => json)`), and
 * the hand-over copies one string, not the entry's objects.
 */
export function entryJson(entry: AuditEntry): string {
  checkEntry(entry);
  return JSON.stringify(entryFields(entry, entry.requestId ?? randomUUID()));
}
