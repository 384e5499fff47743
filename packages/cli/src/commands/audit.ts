/**
 * `ctxfs audit`: the tamper-evident log every ctxfs call of this workspace
 * leaves (AUDIT.md) — query it, verify its chain, and revert what one
 * session or agent changed.
 *
 * @module
 */

import { type AuditRecord, plural } from '@ctxfs/context';
import { commandPrefix } from '../call-text.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import type { GlobalOptions } from '../options.ts';
import { out, outJson, paint, paintDiff } from '../output.ts';
import type { Action } from '../program.ts';
import { type CliWorkspace, withContext } from '../workspace.ts';

/**
 * The options an audit command opens the workspace with: `--session` and
 * `--agent` chose whose records, so the command itself acts as `cli` in a
 * session of its own (a rollback recorded in the session it reverts would
 * be reverted by the next one).
 */
function asAuditor(g: GlobalOptions): GlobalOptions {
  return { ...g, agent: undefined, session: undefined };
}

/**
 * Runs an audit command that reads the trail and the state store, both kept
 * outside a container: of the container it needs only the policy, so a
 * stopped one can be audited with `--no-policy-files`.
 */
function onTrail<T>(g: GlobalOptions, body: (ws: CliWorkspace) => Promise<T>): Promise<T> {
  return withContext(asAuditor(g), body, 'policy');
}

/** `30m`, `2h`, `7d` before now, or an ISO time. */
export function parseSince(value: string, now = Date.now()): Date {
  const age = /^(\d+)([smhd])$/.exec(value);
  if (age !== null) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now - Number(age[1]) * unit);
  }
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new CliError('EINVAL', `--since ${value}: expected an ISO time or an age (30m, 2h, 7d)`);
  return at;
}

async function trailOf(g: GlobalOptions, ws: CliWorkspace): Promise<NonNullable<CliWorkspace['trail']>> {
  if (ws.trail !== undefined) return ws.trail;
  // --store is the former name of --state: the hint names the flag --help lists, instead of the state given (a PostgreSQL URL keeps no trail).
  throw new CliError(
    'EUNSUPPORTED',
    `no audit trail: ${ws.trailMissing ?? 'it could not be opened'}`,
    `the trail is kept beside a host workspace, or beside a state file: give every command --state <file> outside the workspace, then ${await commandPrefix({ ...asAuditor(g), state: undefined, store: undefined })} --state <file> audit`,
  );
}

/** One record as a line; its session whole, as `--session` takes it (a shortened id matches no record). */
function recordLine(r: AuditRecord): string {
  const result = r.result === 'ok' ? paint('green', r.result) : paint(r.result === 'error' ? 'red' : 'yellow', `${r.result}${r.code ? ` ${r.code}` : ''}`);
  const approval = r.approval?.required ? ` [approved by ${r.approval.by}]` : '';
  const mark = r.verified ? '' : paint('red', ' (does not verify)');
  // A dry run is recorded as the call it tried: said, so it is not read as the change.
  const dry = r.params.dryRun === true ? ' (dry run)' : '';
  return `#${r.seq} ${r.ts} ${r.agent} ${paint('bold', r.op)}${dry} ${r.paths.join(', ')} ${result}${approval} session ${r.sessionId}${mark}`;
}

/** `ctxfs audit [query]`. */
export const query: Action = async (g, _args, o) => {
  const { resolvePath } = await import('@ctxfs/core');
  // Records name paths as every call normalizes them: ./a.txt is a.txt.
  const path = typeof o.path === 'string' ? resolvePath(o.path, 'audit').path : undefined;
  return onTrail(g, async (ws) => {
    const trail = await trailOf(g, ws);
    const records = trail.query({
      path,
      agent: g.agent,
      sessionId: g.session,
      op: o.op as string | undefined,
      result: o.result as string | undefined,
      since: typeof o.since === 'string' ? parseSince(o.since) : undefined,
      limit: (o.limit as number | undefined) ?? 50,
    });
    if (g.json) await outJson({ trail: trail.dir, records });
    else await out(records.length === 0 ? 'no records' : records.map(recordLine).join('\n'));
    return EXIT.ok;
  });
};

/**
 * `ctxfs audit verify`: checks the state store's audit chain (every host's
 * records) and this host's trail when there is one; exit 0 when both verify,
 * 1 when either does not.
 */
export const verify: Action = (g) =>
  onTrail(g, async (ws) => {
    const store = { location: ws.ctx.store.location, ...(await ws.ctx.store.verifyAudit()) };
    const trail = ws.trail && { dir: ws.trail.dir, ...ws.trail.verify() };
    const ok = store.ok && (trail?.ok ?? true);
    if (g.json) await outJson({ ok, store, ...(trail ? { trail } : { trailMissing: ws.trailMissing }) });
    else {
      const lines: string[] = [];
      const head = store.head ? ` (head #${store.head.id} ${store.head.hash.slice(0, 12)})` : '';
      if (store.ok)
        lines.push(
          `${paint('green', 'ok')}: store chain: ${plural(store.records, 'record')} ${store.records === 1 ? 'verifies' : 'verify'}${head}; ${store.location}`,
        );
      else {
        const bad = store.firstBad;
        lines.push(
          `${paint('red', 'damaged')}: store chain: ${plural(store.records, 'record')} ${store.records === 1 ? 'verifies' : 'verify'}${head}, then row #${bad?.id}: ${bad?.damage}, ${bad?.detail}; ${store.location}`,
        );
      }
      if (trail === undefined) lines.push(`trail: none (${ws.trailMissing ?? 'it could not be opened'})`);
      else if (trail.ok)
        lines.push(
          `${paint('green', 'ok')}: trail: ${plural(trail.records, 'line')} (${plural(trail.entries, 'record')}) in ${plural(trail.files, 'file')} ${trail.records === 1 ? 'verifies' : 'verify'}; ${trail.dir}`,
        );
      else {
        const bad = trail.firstBad;
        lines.push(
          `${paint('red', 'damaged')}: trail: ${plural(trail.records, 'line')} ${trail.records === 1 ? 'verifies' : 'verify'}, then ${bad ? `${bad.file} line ${bad.line} (seq ${bad.seq}): ${bad.damage}, ${bad.detail}` : 'a line does not'}; ${trail.dir}`,
        );
      }
      await out(lines.join('\n'));
    }
    return ok ? EXIT.ok : EXIT.refused;
  });

/**
 * `ctxfs audit reindex`: rebuilds the trail's index from the log as it is
 * now (the index is a cache of it), so that queries work again after the log
 * was changed; the change stays in the log as evidence, the records that do
 * not verify are marked, and the command says where the chain breaks.
 * Exit 0 when the log verifies, 1 when it does not.
 */
export const reindex: Action = (g) =>
  onTrail(g, async (ws) => {
    const trail = await trailOf(g, ws);
    const indexed = trail.rebuildIndex();
    const { ok, firstBad } = trail.verify();
    const bad = firstBad && { file: firstBad.file, line: firstBad.line, seq: firstBad.seq, damage: firstBad.damage, detail: firstBad.detail };
    if (g.json) await outJson({ trail: trail.dir, indexed, ok, ...(bad ? { firstBad: bad } : {}) });
    else if (ok) await out(`${paint('green', 'ok')}: indexed ${plural(indexed, 'record')}; the log verifies; ${trail.dir}`);
    else {
      const where = bad ? `${bad.file} line ${bad.line} (seq ${bad.seq}): ${bad.damage}, ${bad.detail}` : 'a line';
      await out(
        `${paint('yellow', 'indexed')} ${plural(indexed, 'record')}; the log does not verify from ${where}. It keeps the change as evidence; \`${await commandPrefix(g)} audit\` marks the records that do not verify; ${trail.dir}`,
      );
    }
    return ok ? EXIT.ok : EXIT.refused;
  });

/**
 * Refuses a session or an agent this workspace never saw, which "0 changes"
 * would hide: a typo, or another workspace's id, would look like one that
 * changed nothing. Every session leaves its row in the store when it opens,
 * and every call of an agent its record in the store's audit chain.
 */
async function mustBeKnown(g: GlobalOptions, store: CliWorkspace['ctx']['store'], sessionId: string | undefined, agent: string | undefined): Promise<void> {
  const list = `\`${await commandPrefix(asAuditor(g))} audit\``;
  if (sessionId !== undefined && (await store.get('SELECT 1 AS known FROM sessions WHERE id = ?', [sessionId])) === undefined) {
    throw new CliError(
      'ENOSESSION',
      `audit rollback: no session '${sessionId}' in this workspace's state`,
      `each record of ${list} names its session in full, as --session takes it`,
    );
  }
  if (agent !== undefined && (await store.get('SELECT 1 AS known FROM audit WHERE agent = ? LIMIT 1', [agent])) === undefined) {
    throw new CliError(
      'ENOAGENT',
      `audit rollback: agent '${agent}' never called ctxfs in this workspace`,
      `each record of ${list} names its agent after the time`,
    );
  }
}

/** `ctxfs audit rollback --session <id> | --agent <name>`: exit 0 when every change was reverted, else 1; 3 when no such session or agent acted here. */
export const rollback: Action = (g, _args, o) => {
  const sessionId = g.session;
  const agent = g.agent;
  if (sessionId === undefined && agent === undefined) throw new CliError('EINVAL', 'audit rollback: name --session <id> or --agent <name>');
  return withContext(asAuditor(g), async ({ ctx }) => {
    await mustBeKnown(g, ctx.store, sessionId, agent);
    const { editResult } = await import('@ctxfs/tools');
    const changes = await ctx.changesOf({ sessionId, agent });
    const results = (await ctx.rollbackChanges({ sessionId, agent }, { message: o.message as string | undefined })).map((r) => editResult(r));
    const refused = results.filter((r) => r.isError);
    if (g.json)
      await outJson({ changes: changes.length, reverted: results.length - refused.length, refused: refused.length, results: results.map((r) => r.data) });
    else {
      const who = sessionId === undefined ? `agent ${agent}` : `session ${sessionId}`;
      const head = `${who}: ${plural(changes.length, 'change')}, ${plural(results.length - refused.length, 'file change')} reverted, ${refused.length} refused`;
      await out([head, ...results.map((r) => paintDiff(r.text))].join('\n'));
    }
    return refused.length === 0 ? EXIT.ok : EXIT.refused;
  });
};
