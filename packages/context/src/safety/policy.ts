/**
 * The policy: what a model may do to which paths, decided for one
 * operation class, path and agent at a time — allow, ask a person, or deny —
 * with the reason a refusal gives.
 *
 * Decision order: a `deny` rule; a read-only path for a change; a change
 * in the workspace's `.ctxfs/` (its configuration, the policy itself),
 * which always asks a person; a sensitive
 * path that no `allow` rule names (for a change too: its diff would serve
 * the file); an `ask` rule; an
 * operation that always asks; an `allow` rule; then the mode's default
 * (`auto`: reads approved, changes approved where `autoApproveWritePatterns`
 * match, else ask; `manual`: ask; `deny`: nothing but what an `allow` rule
 * names, and never a change). A change is a write, a delete or a rename
 * (both its paths); rollback and undo are writes. Paths are gitignore-style patterns (core's
 * `compilePathPatterns`), agents are names with `*` wildcards (`llm:*`).
 *
 * @module
 */

import { compilePathPatterns } from '@ctxfs/core';
import { type CommandRules, type CommandRulesConfig, compileCommandRules } from './command-rules.ts';

/** What an operation does, for the policy. A `command` is decided by the command rules, its files by the path rules. */
export type OpClass = 'read' | 'search' | 'write' | 'delete' | 'rename' | 'history' | 'command';

/** Every operation class, in the order the docs list them. */
export const OP_CLASSES: readonly OpClass[] = ['read', 'search', 'write', 'delete', 'rename', 'history', 'command'];

/** Classes that change files. */
export const MUTATING: ReadonlySet<OpClass> = new Set(['write', 'delete', 'rename']);

/** How operations no rule decides are treated. */
export type PolicyMode = 'manual' | 'auto' | 'deny';

/** What a rule or decision says. */
export type Effect = 'allow' | 'ask' | 'deny';

/** One rule: an effect for paths, optionally only for some operations and agents. */
export interface PolicyRule {
  readonly effect: Effect;
  /** Gitignore-style patterns (`secrets/`, `/build`, `**\/*.pem`, `!public.pem`). */
  readonly paths: readonly string[];
  /** Operation classes; default all. */
  readonly ops?: readonly OpClass[] | undefined;
  /** Agent names, `*` a wildcard (`llm:*`); default all. */
  readonly agents?: readonly string[] | undefined;
  /** Said in a refusal. */
  readonly reason?: string | undefined;
}

/** Limits of one session. */
export interface PolicyBudgets {
  /** Operations in a session. */
  readonly operations?: number | undefined;
  /** Bytes served and written in a session. */
  readonly bytes?: number | undefined;
  /** Tokens served in a session. */
  readonly tokens?: number | undefined;
  /** Operations in any 60 seconds. */
  readonly operationsPerMinute?: number | undefined;
}

/** A policy as written (a layer: file or code); every field optional. */
export interface PolicyConfig {
  readonly mode?: PolicyMode | undefined;
  /** Reads and searches need no approval. Default: `true` in `auto` mode, `false` in `manual`. */
  readonly autoApproveReads?: boolean | undefined;
  /** Changes (writes, deletes, renames) of these paths need no approval in `auto` mode. Default `["**"]`. */
  readonly autoApproveWritePatterns?: readonly string[] | undefined;
  /** Operation classes that ask whatever the rules and the mode say (a deny still wins). Default none. */
  readonly alwaysAsk?: readonly OpClass[] | undefined;
  /** Paths no operation may change. */
  readonly readOnly?: readonly string[] | undefined;
  /** Paths denied to reads and searches unless an `allow` rule names them, besides the registry's sensitive files. */
  readonly sensitive?: readonly string[] | undefined;
  /** Rules of every layer apply together (deny, then ask, then allow). */
  readonly rules?: readonly PolicyRule[] | undefined;
  readonly budgets?: PolicyBudgets | undefined;
  /** How long a person has to answer; silence is a denial. Default 120 s. */
  readonly approvalTimeoutMs?: number | undefined;
  /** Which commands may run (`run_command`, a session's `command`); merged field by field. */
  readonly commands?: CommandRulesConfig | undefined;
}

/** A policy ready to decide: the layers merged, patterns compiled. */
export interface Policy {
  readonly mode: PolicyMode;
  readonly autoApproveReads: boolean;
  readonly autoApproveWritePatterns: readonly string[];
  readonly alwaysAsk: readonly OpClass[];
  readonly readOnly: readonly string[];
  readonly sensitive: readonly string[];
  readonly rules: readonly PolicyRule[];
  readonly budgets: PolicyBudgets;
  readonly approvalTimeoutMs: number;
  /** Where each layer came from, lowest first (`defaults`, a file path, `code`). */
  readonly sources: readonly string[];
  /** The command rules. */
  readonly commands: CommandRules;
  /** Decides one operation on one path. */
  decide(request: PolicyRequest): Decision;
  /**
   * Decides an operation on the whole workspace before any path is known (a
   * search of the root): `ask` when the mode or `always_ask` asks for every
   * such operation, else `allow` — each path it serves is then decided on its own.
   */
  decideOperation(op: OpClass): Decision;
}

/** What is asked of the policy. */
export interface PolicyRequest {
  readonly op: OpClass;
  readonly path: string;
  readonly agent: string;
  /** The registry flags the path as credentials (`.env`, keys…). */
  readonly sensitive?: boolean;
  /** The path is a directory: a pattern ending in `/` (`secrets/`) names it too, not only what is below it. */
  readonly directory?: boolean | undefined;
}

/** The policy's answer. */
export interface Decision {
  readonly effect: Effect;
  /** Why, in words for a refusal or a prompt. */
  readonly reason: string;
  /** `auto` when approved by the mode or an auto-approve pattern, `policy` when a rule or limit decided. */
  readonly by: 'policy' | 'auto';
  /**
   * `operation` when an `ask` holds for the operation whatever the path (the
   * mode, `always_ask`): a person's yes to a call then covers every path it
   * serves. Otherwise the answer is this path's (a rule, a sensitive or
   * read-only path), and a yes to another path does not cover it.
   */
  readonly basis?: 'operation' | undefined;
}

/**
 * The workspace's own ctxfs configuration (its `config.toml` holds the
 * project's policy). A model that could change it could write itself an
 * `allow` rule for what the policy denies it.
 */
export const PROJECT_CONFIG_DIR = '.ctxfs';

/** Whether `path` (workspace-relative) is in {@link PROJECT_CONFIG_DIR}; by case, as a case-insensitive disk would see it. */
export function inProjectConfig(path: string): boolean {
  const p = path.toLowerCase();
  return p === PROJECT_CONFIG_DIR || p.startsWith(`${PROJECT_CONFIG_DIR}/`);
}

/** The built-in layer: permissive for a library, strict about credentials. */
export const DEFAULT_POLICY: PolicyConfig = {
  mode: 'auto',
  autoApproveWritePatterns: ['**'],
  alwaysAsk: [],
  readOnly: [],
  sensitive: [],
  rules: [],
  budgets: {},
  approvalTimeoutMs: 120_000,
};

function agentMatcher(patterns: readonly string[] | undefined): (agent: string) => boolean {
  if (patterns === undefined || patterns.length === 0) return () => true;
  const res = patterns.map((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`));
  return (agent) => res.some((re) => re.test(agent));
}

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly path: (path: string, isDirectory?: boolean) => boolean;
  readonly agent: (agent: string) => boolean;
  readonly ops: ReadonlySet<OpClass>;
}

/**
 * Merges policy layers, lowest first: a later layer's fields replace an
 * earlier one's, except `rules`, which add up, and `budgets`, merged field
 * by field.
 *
 * @example
 * ```ts
 * const policy = resolvePolicy([{ source: 'code', config: { rules: [{ effect: 'deny', paths: ['secrets/'] }] } }]);
 * policy.decide({ op: 'read', path: 'secrets/db.txt', agent: 'llm:a' }).effect; // 'deny'
 * ```
 */
export function resolvePolicy(layers: ReadonlyArray<{ source: string; config: PolicyConfig }>): Policy {
  const all = [{ source: 'defaults', config: DEFAULT_POLICY }, ...layers];
  let merged: PolicyConfig = {};
  const rules: PolicyRule[] = [];
  let budgets: PolicyBudgets = {};
  let commands: CommandRulesConfig = {};
  for (const { config } of all) {
    commands = { ...commands, ...Object.fromEntries(Object.entries(config.commands ?? {}).filter(([, v]) => v !== undefined)) };
    const defined = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)) as PolicyConfig;
    merged = { ...merged, ...defined };
    rules.push(...(config.rules ?? []));
    budgets = { ...budgets, ...Object.fromEntries(Object.entries(config.budgets ?? {}).filter(([, v]) => v !== undefined)) };
  }
  const mode = merged.mode ?? 'auto';
  const policy = {
    mode,
    autoApproveReads: merged.autoApproveReads ?? mode === 'auto',
    autoApproveWritePatterns: merged.autoApproveWritePatterns ?? ['**'],
    alwaysAsk: merged.alwaysAsk ?? [],
    readOnly: merged.readOnly ?? [],
    sensitive: merged.sensitive ?? [],
    rules,
    budgets,
    approvalTimeoutMs: merged.approvalTimeoutMs ?? 120_000,
    sources: all.map((l) => l.source),
    commands: compileCommandRules(commands, mode),
  };
  return { ...policy, decide: decider(policy), decideOperation: operationDecider(policy) };
}

function operationDecider(p: Omit<Policy, 'decide' | 'decideOperation' | 'commands'>): (op: OpClass) => Decision {
  return (op) => {
    if (p.alwaysAsk.includes(op)) return { effect: 'ask', reason: `every ${op} asks for approval (always_ask)`, by: 'policy', basis: 'operation' };
    if (!MUTATING.has(op) && p.mode !== 'deny' && !p.autoApproveReads) {
      return { effect: 'ask', reason: `every ${op} asks for approval in ${p.mode} mode`, by: 'policy', basis: 'operation' };
    }
    return { effect: 'allow', reason: 'each path the operation serves is decided on its own', by: 'auto' };
  };
}

function decider(p: Omit<Policy, 'decide' | 'decideOperation' | 'commands'>): (request: PolicyRequest) => Decision {
  const compiled: CompiledRule[] = p.rules.map((rule) => ({
    rule,
    path: compilePathPatterns(rule.paths),
    agent: agentMatcher(rule.agents),
    ops: new Set(rule.ops ?? OP_CLASSES),
  }));
  const readOnly = compilePathPatterns(p.readOnly);
  const sensitive = compilePathPatterns(p.sensitive);
  const autoWrite = compilePathPatterns(p.autoApproveWritePatterns);
  const alwaysAsk = new Set(p.alwaysAsk);
  const said = (r: CompiledRule, what: string): string => r.rule.reason ?? `${what} by the rule ${r.rule.effect} ${JSON.stringify(r.rule.paths.join(', '))}`;

  return ({ op, path, agent, sensitive: flagged = false, directory = false }) => {
    const matching = compiled.filter((r) => r.ops.has(op) && r.agent(agent) && r.path(path, directory));
    const deny = matching.find((r) => r.rule.effect === 'deny');
    if (deny) return { effect: 'deny', reason: said(deny, 'denied'), by: 'policy' };
    const changes = MUTATING.has(op);
    if (changes && p.mode === 'deny') return { effect: 'deny', reason: 'the policy mode is "deny": no file may be changed', by: 'policy' };
    if (changes && readOnly(path, directory)) return { effect: 'deny', reason: `${path} is read-only by the policy (read_only)`, by: 'policy' };
    // Above every ask, allow and mode: no rule of the policy can let an agent rewrite the policy.
    if (changes && inProjectConfig(path)) {
      return {
        effect: 'ask',
        reason: `${path} is in ${PROJECT_CONFIG_DIR}/, this workspace's ctxfs configuration and policy: a person approves every change to it, whatever the mode and rules`,
        by: 'policy',
      };
    }
    const allow = matching.find((r) => r.rule.effect === 'allow');
    if ((flagged || sensitive(path, directory)) && allow === undefined) {
      // A change serves the file too: its diff, a patch's mismatch quoting the lines it met.
      return changes
        ? {
            effect: 'deny',
            reason: `${path} holds credentials (a sensitive path); the policy lets it be changed only where an allow rule names it`,
            by: 'policy',
          }
        : { effect: 'deny', reason: `${path} holds credentials (a sensitive path); the policy serves it only where an allow rule names it`, by: 'policy' };
    }
    const ask = matching.find((r) => r.rule.effect === 'ask');
    if (ask) return { effect: 'ask', reason: said(ask, 'approval required'), by: 'policy' };
    if (alwaysAsk.has(op)) return { effect: 'ask', reason: `every ${op} asks for approval (always_ask)`, by: 'policy', basis: 'operation' };
    if (allow) return { effect: 'allow', reason: said(allow, 'allowed'), by: 'policy' };
    if (p.mode === 'deny')
      return {
        effect: 'deny',
        reason: `the policy mode is "deny": only what an allow rule names may be ${op === 'search' ? 'searched' : 'read'}`,
        by: 'policy',
      };
    if (!changes)
      return p.autoApproveReads
        ? { effect: 'allow', reason: 'reads are auto-approved', by: 'auto' }
        : { effect: 'ask', reason: `every ${op} asks for approval in ${p.mode} mode`, by: 'policy', basis: 'operation' };
    if (p.mode === 'auto' && autoWrite(path, directory)) return { effect: 'allow', reason: 'changes here are auto-approved', by: 'auto' };
    return p.mode === 'manual'
      ? { effect: 'ask', reason: `every ${op} asks for approval in manual mode`, by: 'policy', basis: 'operation' }
      : { effect: 'ask', reason: `${path} is outside the auto-approved write patterns`, by: 'policy' };
  };
}

/**
 * How a restore of a whole snapshot is decided. It may change any file,
 * and which ones is not known before it runs: refused in `deny` mode; put
 * to a person when the policy guards any path from changes (`read_only`,
 * a `deny` or `ask` rule for changes, `always_ask` for writes or deletes);
 * else approved.
 *
 * @example
 * ```ts
 * decideRestore(resolvePolicy([{ source: 'code', config: { readOnly: ['vendor/**'] } }])).effect; // 'ask'
 * ```
 */
export function decideRestore(policy: Policy): Decision {
  if (policy.mode === 'deny') return { effect: 'deny', reason: 'the policy mode is "deny": no file may be changed', by: 'policy' };
  const changes = (ops: readonly OpClass[] | undefined) => ops === undefined || ops.some((op) => MUTATING.has(op));
  const guarded =
    policy.readOnly.length > 0 ||
    policy.alwaysAsk.some((op) => op === 'write' || op === 'delete') ||
    policy.rules.some((r) => r.effect !== 'allow' && changes(r.ops));
  if (guarded) {
    return {
      effect: 'ask',
      reason: 'a restore may change any file, and the policy guards some from changes (read_only, a deny or ask rule, always_ask): a person approves it',
      by: 'policy',
    };
  }
  return { effect: 'allow', reason: 'no path is guarded from changes', by: 'auto' };
}
