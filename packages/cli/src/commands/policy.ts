/**
 * `ctxfs policy`: the policy the workspace's calls are decided by — the
 * built-in defaults, the user's config.toml and the project's
 * `.ctxfs/config.toml`, merged as the context layer merges them — and the
 * decision for one operation on one path, with its reason.
 *
 * @module
 */

import type { Decision, OpClass, Policy } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { CliError, EXIT } from '../exit-codes.ts';
import { agentOf, type GlobalOptions } from '../options.ts';
import { out, outJson, paint } from '../output.ts';
import type { Action } from '../program.ts';
import type { DecisionJson, PolicyJson } from '../schemas.ts';
import { withContext, withFilesystem } from '../workspace.ts';

/** The policy of `fs` as the context layer would resolve it (no policy is given in code by the CLI). */
export async function effectivePolicy(g: GlobalOptions, fs: Filesystem): Promise<Policy> {
  const { loadPolicyFiles, resolvePolicy } = await import('@ctxfs/context');
  return resolvePolicy(g.policyFiles ? await loadPolicyFiles(fs) : []);
}

function policyJson(p: Policy): PolicyJson {
  return {
    mode: p.mode,
    auto_approve_reads: p.autoApproveReads,
    auto_approve_write_patterns: [...p.autoApproveWritePatterns],
    always_ask: [...p.alwaysAsk],
    read_only: [...p.readOnly],
    sensitive: [...p.sensitive],
    rules: p.rules.map((r) => ({
      effect: r.effect,
      paths: [...r.paths],
      ops: r.ops === undefined ? undefined : [...r.ops],
      agents: r.agents === undefined ? undefined : [...r.agents],
      reason: r.reason,
    })),
    budgets: {
      operations: p.budgets.operations,
      bytes: p.budgets.bytes,
      tokens: p.budgets.tokens,
      operations_per_minute: p.budgets.operationsPerMinute,
    },
    approval_timeout_seconds: p.approvalTimeoutMs / 1000,
    sources: [...p.sources],
  };
}

const list = (xs: readonly string[]): string => (xs.length === 0 ? '(none)' : xs.join(', '));

function policyText(j: PolicyJson): string {
  const lines = [
    `mode                         ${paint('bold', j.mode)}`,
    `auto_approve_reads           ${j.auto_approve_reads}`,
    `auto_approve_write_patterns  ${list(j.auto_approve_write_patterns)}`,
    `always_ask                   ${list(j.always_ask)}`,
    `read_only                    ${list(j.read_only)}`,
    `sensitive                    ${list(j.sensitive)} (besides the registry's credential files)`,
    `approval_timeout_seconds     ${j.approval_timeout_seconds}`,
  ];
  const budgets = Object.entries(j.budgets).filter(([, v]) => v !== undefined);
  lines.push(`budgets                      ${budgets.length === 0 ? '(none)' : budgets.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  lines.push(`rules                        ${j.rules.length === 0 ? '(none)' : ''}`);
  for (const r of j.rules) {
    const scope = [r.ops ? `ops ${r.ops.join(',')}` : undefined, r.agents ? `agents ${r.agents.join(',')}` : undefined].filter(Boolean).join('; ');
    lines.push(
      `  ${paint(r.effect === 'deny' ? 'red' : r.effect === 'ask' ? 'yellow' : 'green', r.effect)} ${r.paths.join(', ')}${scope ? ` (${scope})` : ''}${r.reason ? `: ${r.reason}` : ''}`,
    );
  }
  lines.push(`from                         ${j.sources.join(' < ')}`);
  return lines.join('\n');
}

/** `ctxfs policy show`. */
export const show: Action = (g) =>
  withFilesystem(
    g,
    async (fs) => {
      const j = policyJson(await effectivePolicy(g, fs));
      await (g.json ? outJson(j) : out(policyText(j)));
      return EXIT.ok;
    },
    'policy',
  );

/** The stricter of two decisions; the first on a tie, as the safety layer takes the first it meets. */
function stricter(a: Decision, b: Decision): Decision {
  const rank = { allow: 0, ask: 1, deny: 2 } as const;
  return rank[b.effect] > rank[a.effect] ? b : a;
}

/**
 * `ctxfs policy check <op> <path>`: exit 0 when allowed or asked, 4 when
 * denied. Decided as a call of this session would be: by the safety layer's
 * own decision (the policy with the registry's credential flags), for the
 * path as given and, when it is a link or passes through one, for the file
 * it leads to — the stricter answer holds.
 */
export const check: Action = async (g, [op = '', rawPath = '']) => {
  const { OP_CLASSES } = await import('@ctxfs/context');
  if (!(OP_CLASSES as readonly string[]).includes(op)) throw new CliError('EINVAL', `policy check ${op}: the operation is one of ${OP_CLASSES.join(', ')}`);
  const opClass = op as OpClass;
  const { resolvePath } = await import('@ctxfs/core');
  const path = resolvePath(rawPath, 'policy').path;
  const agent = agentOf(g);
  return withContext(g, async ({ ctx, fs }) => {
    // Where a session call's path leads: fs.realpath on a backend with links, the path itself where it cannot be resolved.
    const target = path === '' || !fs.capabilities.symlinks ? path : ctx.registry.spelledAs(await fs.realpath(path).catch(() => path));
    const flagged = (p: string): boolean => ctx.registry.get(p)?.sensitive ?? ctx.registry.isSensitive(p);
    // A directory is decided as one (a search of it, its rename or delete): a rule for `secrets/` names it too.
    const directory =
      path === '' ||
      (await fs.stat(target).then(
        (s) => s.kind === 'directory',
        () => false,
      ));
    const own = ctx.policyFor(opClass, path, directory);
    // Another Unicode spelling of the same name is the same file, not a link (as the safety layer words it).
    const linked = target.normalize('NFC') === path.normalize('NFC') ? undefined : ctx.policyFor(opClass, target, directory);
    const d = linked === undefined ? own : stricter(own, linked);
    const byLink = linked !== undefined && d === linked;
    const reason = byLink ? `${path} is a link to ${target}: ${d.reason}` : d.reason;
    const sensitive = flagged(path) || (linked !== undefined && flagged(target));
    const j: DecisionJson = { op: opClass, path, agent, sensitive, effect: d.effect, reason, by: d.by };
    if (g.json) await outJson(j);
    else {
      const colour = (e: Decision['effect']) => (e === 'deny' ? 'red' : e === 'ask' ? 'yellow' : 'green');
      const flag = (p: string) => (flagged(p) ? `\n  (the registry flags ${linked === undefined ? 'this path' : p} as credentials)` : '');
      const lines = [`${paint(colour(d.effect), d.effect)}: ${op} ${path} by ${agent}`];
      if (linked === undefined) lines.push(`  because ${d.reason}${flag(path)}`);
      else {
        lines.push(
          `  ${path} is a link to ${target}: both are decided, and the stricter answer holds`,
          `  ${path}: ${paint(colour(own.effect), own.effect)}, because ${own.reason}${flag(path)}`,
          `  ${target}: ${paint(colour(linked.effect), linked.effect)}, because ${linked.reason}${flag(target)}`,
        );
      }
      await out(lines.join('\n'));
    }
    return d.effect === 'deny' ? EXIT.denied : EXIT.ok;
  });
};
