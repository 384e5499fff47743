/**
 * The policy's command rules: which command lines an agent may run —
 * allowed, asked about, or denied — and whether a command may run where
 * nothing confines it to the workspace.
 *
 * A pattern is matched against each simple command of a line (split at
 * `;`, `&`, `|`, line breaks, `$(`, `(`, `)` and backquotes, so
 * `ls && curl x` is two commands), its words joined by one space; `*`
 * matches any run of characters, every other character itself. A line is
 * denied when one of its commands is, asked about when one is, allowed
 * when every one is; otherwise `default` decides. Quoting is not parsed:
 * a separator inside quotes splits too, which only ever makes a decision
 * stricter.
 *
 * @module
 */

import type { Decision, Effect } from './policy.ts';

/** Command rules as written (a layer: file or code); every field optional. */
export interface CommandRulesConfig {
  /** Commands that run without asking. */
  readonly allow?: readonly string[] | undefined;
  /** Commands that ask a person first (without an approver: refused). */
  readonly ask?: readonly string[] | undefined;
  /** Commands that never run. */
  readonly deny?: readonly string[] | undefined;
  /** What a command no pattern names gets; default "allow" in auto mode, "ask" in manual, "deny" in deny mode. */
  readonly default?: Effect | undefined;
  /**
   * Whether a command may run where nothing confines it to the workspace (a
   * host without bubblewrap); default `false`: refused there.
   */
  readonly unconfined?: boolean | undefined;
  /** Wall-clock limit of one command, in milliseconds; default 60 s. */
  readonly timeoutMs?: number | undefined;
}

/** Command rules ready to decide. */
export interface CommandRules {
  readonly allow: readonly string[];
  readonly ask: readonly string[];
  readonly deny: readonly string[];
  readonly default: Effect;
  readonly unconfined: boolean;
  readonly timeoutMs: number;
  /** The decision for one command line. */
  decide(command: string): Decision;
}

/** Default wall-clock limit of a command. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/**
 * The simple commands of a line, each as its words joined by one space.
 *
 * @example
 * ```ts
 * simpleCommands('ls -l src && curl  http://x | sh'); // ['ls -l src', 'curl http://x', 'sh']
 * ```
 */
export function simpleCommands(line: string): string[] {
  return line
    .split(/[;&|\n\r()`]|\$\(/)
    .map((part) => part.trim().split(/\s+/).join(' '))
    .filter((part) => part !== '');
}

function matcher(patterns: readonly string[]): (command: string) => string | undefined {
  const compiled = patterns.map((p) => ({
    pattern: p,
    re: new RegExp(
      `^${p
        .trim()
        .split(/\s+/)
        .join(' ')
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')}$`,
      's',
    ),
  }));
  return (command) => compiled.find((c) => c.re.test(command))?.pattern;
}

/**
 * Compiles merged command rules.
 *
 * @example
 * ```ts
 * const rules = compileCommandRules({ allow: ['git status', 'ls*'], deny: ['curl*'] }, 'auto');
 * rules.decide('ls -l && curl x').effect; // 'deny'
 * rules.decide('git status').effect;      // 'allow'
 * ```
 */
export function compileCommandRules(config: CommandRulesConfig, mode: 'auto' | 'manual' | 'deny'): CommandRules {
  const allow = config.allow ?? [];
  const ask = config.ask ?? [];
  const deny = config.deny ?? [];
  const fallback: Effect = config.default ?? (mode === 'auto' ? 'allow' : mode === 'manual' ? 'ask' : 'deny');
  const denied = matcher(deny);
  const asked = matcher(ask);
  const allowed = matcher(allow);
  const decide = (line: string): Decision => {
    const commands = simpleCommands(line);
    if (commands.length === 0) return { effect: 'deny', reason: 'the command is empty', by: 'policy' };
    for (const c of commands) {
      const p = denied(c);
      if (p !== undefined) return { effect: 'deny', reason: `"${c}" is denied by the command rule deny "${p}"`, by: 'policy' };
    }
    for (const c of commands) {
      const p = asked(c);
      if (p !== undefined) return { effect: 'ask', reason: `"${c}" asks for approval by the command rule ask "${p}"`, by: 'policy' };
    }
    if (commands.every((c) => allowed(c) !== undefined)) return { effect: 'allow', reason: 'every command is allowed by a command rule', by: 'policy' };
    const other = commands.find((c) => allowed(c) === undefined) as string;
    if (fallback === 'allow') return { effect: 'allow', reason: 'commands are allowed by default', by: 'auto' };
    return {
      effect: fallback,
      reason:
        fallback === 'ask'
          ? `"${other}" is named by no command rule, and such commands ask for approval`
          : `"${other}" is named by no allow rule of [commands], and other commands are denied`,
      by: 'policy',
    };
  };
  return { allow, ask, deny, default: fallback, unconfined: config.unconfined ?? false, timeoutMs: config.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, decide };
}
