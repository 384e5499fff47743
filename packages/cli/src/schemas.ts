/**
 * What `--json` writes, command by command. A command that is a tool writes
 * the tool's `data` (its output schema in `@ctxfs/tools`); the others have
 * their shapes here. A failure is `{ error: { code, message, hint?, path? } }`
 * — except an edit the tool refused, which is the tool's own data with
 * `success: false`. The tests check every command's output against these.
 *
 * Commands import the types only (zod is not loaded to answer a command).
 *
 * @module
 */

import { editData } from '@ctxfs/tools';
import { z } from 'zod';

const int = z.number().int();

/** Any failure the CLI reports itself, or a tool's error result. */
export const errorJson = z.object({
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional(), path: z.string().optional() }),
});

/** A snapshot, as `snapshot create` returns it and `snapshot list` lists it. */
export const snapshotJson = z.object({ id: z.string(), created_at: z.string(), tag: z.string().optional(), ref: z.string().optional() });
export type SnapshotJson = z.infer<typeof snapshotJson>;
export const snapshotListJson = z.object({ snapshots: z.array(snapshotJson) });
/** `snapshot restore` and `snapshot drop`. */
export const snapshotActionJson = z.object({ id: z.string(), action: z.enum(['restored', 'dropped']) });

/** `scan`. */
export const scanJson = z.object({
  files: int,
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
  unchanged: int,
  hashed: int,
  bytes_hashed: int,
  skipped: z.array(z.object({ path: z.string(), code: z.string() })),
  duration_ms: z.number(),
  index: z.object({ files: int, relations: int, parsed: int }).optional(),
});
export type ScanJson = z.infer<typeof scanJson>;

/** `prune`. */
export const pruneJson = z.object({
  history: z.object({ versions_removed: int, blobs_removed: int, bytes_freed: int }),
  reads: z.object({ repeats_removed: int, idle_sessions: int, idle_reads_removed: int }),
});
export type PruneJson = z.infer<typeof pruneJson>;

const opClass = z.enum(['read', 'search', 'write', 'delete', 'rename', 'history', 'command']);

/** `policy show`: the policy every call of this workspace is decided by. */
export const policyJson = z.object({
  mode: z.enum(['manual', 'auto', 'deny']),
  auto_approve_reads: z.boolean(),
  auto_approve_write_patterns: z.array(z.string()),
  always_ask: z.array(opClass),
  read_only: z.array(z.string()),
  sensitive: z.array(z.string()),
  rules: z.array(
    z.object({
      effect: z.enum(['allow', 'ask', 'deny']),
      paths: z.array(z.string()),
      ops: z.array(opClass).optional(),
      agents: z.array(z.string()).optional(),
      reason: z.string().optional(),
    }),
  ),
  budgets: z.object({ operations: int.optional(), bytes: int.optional(), tokens: int.optional(), operations_per_minute: int.optional() }),
  approval_timeout_seconds: z.number(),
  sources: z.array(z.string()).describe('The layers, lowest first: defaults, then each config file read.'),
});
export type PolicyJson = z.infer<typeof policyJson>;

/** `policy check <op> <path>`. */
export const decisionJson = z.object({
  op: opClass,
  path: z.string(),
  agent: z.string(),
  sensitive: z.boolean().describe('The registry flags the path as credentials.'),
  effect: z.enum(['allow', 'ask', 'deny']),
  reason: z.string(),
  by: z.enum(['policy', 'auto']),
});
export type DecisionJson = z.infer<typeof decisionJson>;

/** One audit record, as the log holds it (AUDIT.md, "Record format"), with where it is and whether it verified. */
const auditRecordJson = z.looseObject({
  seq: int,
  ts: z.string(),
  type: z.literal('entry'),
  requestId: z.string(),
  sessionId: z.string(),
  agent: z.string(),
  op: z.string(),
  opClass: z.string(),
  paths: z.array(z.string()),
  result: z.enum(['ok', 'refused', 'denied', 'error']),
  code: z.string().optional(),
  mac: z.string(),
  location: z.object({ file: z.string(), line: int }),
  verified: z.boolean(),
});

/** `audit` (`audit query`): records newest first. */
export const auditQueryJson = z.object({ trail: z.string(), records: z.array(auditRecordJson) });

/** `audit verify`: both chains' reports (exit 1 when `ok` is false). */
export const auditVerifyJson = z.object({
  ok: z.boolean().describe('The state store chain verifies, and the trail when there is one.'),
  store: z
    .object({
      location: z.string(),
      ok: z.boolean(),
      records: int,
      head: z.object({ id: int, hash: z.string() }).optional(),
      firstBad: z.object({ id: int, damage: z.enum(['altered', 'unlinked', 'unchained']), detail: z.string() }).optional(),
    })
    .describe("The state store's audit table: one hash chain per workspace, every host's records in it."),
  trail: z
    .object({
      dir: z.string(),
      ok: z.boolean(),
      records: int,
      entries: int,
      files: int,
      repairs: int,
      lastSeq: int,
      lastMac: z.string(),
      chain: z.string().optional(),
      threads: int,
      firstBad: z.object({ file: z.string(), line: int, seq: int, damage: z.string(), detail: z.string() }).optional(),
    })
    .optional()
    .describe("This host's HMAC-chained trail, when the workspace keeps one."),
  trailMissing: z.string().optional().describe('Why there is no trail, when there is none.'),
});

/** `audit rollback`: each file's undo, as the undo tool's data. */
/** `audit reindex`: the index rebuilt from the log, and whether the log verifies (exit 1 when it does not). */
export const auditReindexJson = z.object({
  trail: z.string(),
  indexed: int.describe('Records indexed, read from the log as it is now.'),
  ok: z.boolean().describe('The log verifies; when false, queries mark the records that do not.'),
  firstBad: z.object({ file: z.string(), line: int, seq: int, damage: z.string(), detail: z.string() }).optional(),
});

export const auditRollbackJson = z.object({ changes: int, reverted: int, refused: int, results: z.array(editData) });

/** `doctor`. */
export const doctorJson = z.object({
  ok: z.boolean().describe('Every required check passed.'),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), required: z.boolean(), detail: z.string() })),
});
export type DoctorJson = z.infer<typeof doctorJson>;

/** `serve --http --json`: one line once the server listens. */
export const serveJson = z.object({ transport: z.literal('http'), url: z.string(), backend: z.string() });

/**
 * The shape of each command's `--json`: a tool's name (its output schema) or a schema here.
 *
 * @example
 * ```ts
 * JSON_SHAPES['cat --lines'];               // 'read_lines': outputJsonSchema(readLines) from @ctxfs/tools
 * z.toJSONSchema(JSON_SHAPES.doctor as z.ZodType); // the doctor's own shape
 * ```
 */
export const JSON_SHAPES: Readonly<Record<string, string | z.ZodType>> = {
  overview: 'project_overview',
  ls: 'list_files',
  cat: 'read_file',
  'cat --lines': 'read_lines',
  grep: 'grep',
  outline: 'get_outline',
  'symbol <name> <file>': 'get_symbol',
  'symbol <name>': 'find_symbol',
  related: 'get_related_files',
  patch: 'apply_patch',
  replace: 'replace',
  history: 'get_file_history',
  diff: 'get_diff',
  undo: 'undo',
  rollback: 'rollback',
  run: 'run_command',
  audit: auditQueryJson,
  'audit verify': auditVerifyJson,
  'audit rollback': auditRollbackJson,
  'audit reindex': auditReindexJson,
  'snapshot create': snapshotJson,
  'snapshot list': snapshotListJson,
  'snapshot restore': snapshotActionJson,
  'snapshot drop': snapshotActionJson,
  scan: scanJson,
  prune: pruneJson,
  'policy show': policyJson,
  'policy check': decisionJson,
  doctor: doctorJson,
  'serve --http': serveJson,
};
