/**
 * Policy files: `config.toml` read strictly — a syntax error, an unknown key
 * or a value of the wrong type fails the open with the file, the line and
 * what is wrong, never a silently ignored setting.
 *
 * Layers, lowest first: the built-in defaults, the user's file
 * (`$XDG_CONFIG_HOME/ctxfs/config.toml`, else `~/.config/ctxfs/config.toml`),
 * the project's (`.ctxfs/config.toml` in the workspace), then code.
 *
 * ```toml
 * [policy]
 * mode = "auto"                                  # manual | auto | deny
 * auto_approve_reads = true
 * auto_approve_write_patterns = ["src/**", "tests/**"]
 * always_ask = ["delete", "rename"]
 * read_only = ["vendor/", "LICENSE"]
 * sensitive = ["*.tfvars"]
 * approval_timeout_seconds = 60
 *
 * [[policy.rules]]
 * effect = "deny"                                # allow | ask | deny
 * paths = ["secrets/"]
 * ops = ["read", "search"]                       # read search write delete rename history
 * agents = ["llm:*"]
 * reason = "secrets are never shown to models"
 *
 * [policy.budgets]
 * operations = 500
 * bytes = 50_000_000
 * tokens = 400_000
 * operations_per_minute = 120
 *
 * [commands]                                     # what run_command may run
 * allow = ["git status", "npm test*"]            # * matches any characters
 * ask = ["rm *"]
 * deny = ["curl *", "sudo *"]
 * default = "allow"                              # a command no pattern names
 * unconfined = false                             # run where nothing confines it (host without bubblewrap)?
 * timeout_seconds = 60
 * ```
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type Filesystem, FsError, fsError, isFsError } from '@ctxfs/core';
import { parse, TomlError } from 'smol-toml';
import { MAX_APPROVAL_TIMEOUT_MS } from './approval.ts';
import type { CommandRulesConfig } from './command-rules.ts';
import {
  type Effect,
  OP_CLASSES,
  type OpClass,
  type PolicyBudgets,
  type PolicyConfig,
  type PolicyMode,
  type PolicyRule,
  PROJECT_CONFIG_DIR,
} from './policy.ts';

/** Where the project's policy lives in the workspace. */
export const PROJECT_CONFIG_PATH = `${PROJECT_CONFIG_DIR}/config.toml`;

/** The user's config file. */
export function userConfigPath(): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'ctxfs', 'config.toml');
}

type Table = Record<string, unknown>;

/** Tables of the same file that the surfaces read (and check) themselves: `[mcp]` is the MCP server's, `[cli]` the command line's. */
export const SURFACE_TABLES: readonly string[] = ['mcp', 'cli'];

/** One key a policy table takes. */
export interface PolicyKey {
  readonly key: string;
  /** The value it takes, in words. */
  readonly value: string;
  /** What it does, and its default. */
  readonly meaning: string;
  /** A valid TOML value for it. */
  readonly example: string;
}

/**
 * Every key of the policy's tables. The parser refuses any key not listed
 * here, and the documentation (LLM_FILE_ACCESS.md) is generated from it, so
 * the two cannot disagree on what a policy file may say.
 */
export const POLICY_KEYS = {
  policy: [
    { key: 'mode', value: '"auto", "manual" or "deny"', meaning: 'What happens where no rule decides (default "auto").', example: '"auto"' },
    {
      key: 'auto_approve_reads',
      value: 'true or false',
      meaning: 'Reads and searches go ahead without asking (default: true in auto mode, false in manual).',
      example: 'true',
    },
    {
      key: 'auto_approve_write_patterns',
      value: 'array of path patterns',
      meaning: 'Changes of these paths go ahead without asking in auto mode; others ask (default ["**"]).',
      example: '["src/**", "tests/**"]',
    },
    {
      key: 'always_ask',
      value: 'array of operation classes',
      meaning: 'Classes that ask a person even where a rule allows (a deny still wins; default none).',
      example: '["delete", "rename"]',
    },
    { key: 'read_only', value: 'array of path patterns', meaning: 'Paths no call may change.', example: '["vendor/", "LICENSE"]' },
    {
      key: 'sensitive',
      value: 'array of path patterns',
      meaning: "Paths treated as credentials besides the registry's own list: denied to reads and searches unless an allow rule names them.",
      example: '["*.tfvars"]',
    },
    {
      key: 'approval_timeout_seconds',
      value: 'number > 0, at most 2147483',
      meaning: 'How long a person has to answer; no answer is a denial (default 120).',
      example: '60',
    },
    {
      key: 'rules',
      value: 'array of tables, [[policy.rules]]',
      meaning: "Rules; every layer's rules apply together.",
      example: '[{ effect = "deny", paths = ["secrets/"] }]',
    },
    { key: 'budgets', value: 'table, [policy.budgets]', meaning: 'Limits of one session.', example: '{ tokens = 400_000 }' },
  ],
  'policy.rules': [
    { key: 'effect', value: '"allow", "ask" or "deny"', meaning: 'What the rule says (required).', example: '"deny"' },
    { key: 'paths', value: 'array of path patterns', meaning: 'The paths it applies to (required).', example: '["secrets/"]' },
    { key: 'ops', value: 'array of operation classes', meaning: 'The classes it applies to (default all).', example: '["read", "search"]' },
    { key: 'agents', value: 'array of agent names, * a wildcard', meaning: 'The agents it applies to (default all).', example: '["llm:*"]' },
    { key: 'reason', value: 'string', meaning: 'Said in the refusal or the question to the person.', example: '"secrets are never shown to models"' },
  ],
  'policy.budgets': [
    { key: 'operations', value: 'whole number ≥ 0', meaning: 'Calls in a session.', example: '500' },
    { key: 'bytes', value: 'whole number ≥ 0', meaning: 'Bytes served and written in a session.', example: '50_000_000' },
    { key: 'tokens', value: 'whole number ≥ 0', meaning: 'Tokens served in a session.', example: '400_000' },
    { key: 'operations_per_minute', value: 'whole number ≥ 0', meaning: 'Calls in any 60 seconds.', example: '120' },
  ],
  commands: [
    {
      key: 'allow',
      value: 'array of command patterns, * a wildcard',
      meaning: 'Commands that run without asking; a line runs when each of its commands is allowed.',
      example: '["git status", "npm test*"]',
    },
    { key: 'ask', value: 'array of command patterns', meaning: 'Commands that ask a person first (no approver: refused).', example: '["rm *"]' },
    { key: 'deny', value: 'array of command patterns', meaning: 'Commands that never run; one in a line refuses the line.', example: '["curl *", "sudo *"]' },
    {
      key: 'default',
      value: '"allow", "ask" or "deny"',
      meaning: 'What a command no pattern names gets (default: "allow" in auto mode, "ask" in manual, "deny" in deny mode).',
      example: '"ask"',
    },
    {
      key: 'unconfined',
      value: 'true or false',
      meaning: 'Whether a command may run where nothing confines it to the workspace (a host without bubblewrap); default false.',
      example: 'true',
    },
    {
      key: 'timeout_seconds',
      value: 'number > 0, at most 2147483',
      meaning: 'Wall-clock limit of one command (default 60); the result says when it was hit.',
      example: '30',
    },
  ],
} as const satisfies Readonly<Record<string, readonly PolicyKey[]>>;

/** The names of a table's keys, as the parser checks them. */
function keysOf(table: keyof typeof POLICY_KEYS): readonly string[] {
  return POLICY_KEYS[table].map((k) => k.key);
}

/** Where a value is in the document: its keys and array indices (`['policy', 'rules', 1, 'effect']`). */
type ValuePath = readonly (string | number)[];

const pathKey = (path: ValuePath): string => path.join('\0');

/**
 * The line (1-based) of every key and array element of a TOML text, by its
 * path, for messages. The text has parsed already, so this reads valid TOML
 * only — [tables], [[arrays of tables]], dotted keys, inline tables and
 * arrays over several lines — and steps over what it does not need (values).
 */
function valueLines(text: string): Map<string, number> {
  const found = new Map<string, number>();
  const note = (path: ValuePath, at: number): void => {
    for (let n = 1; n <= path.length; n++) {
      const k = pathKey(path.slice(0, n));
      if (!found.has(k)) found.set(k, at);
    }
  };
  let i = 0;
  let line = 1;
  const blank = (): void => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  // Line breaks and comments too: between array elements, between statements.
  const space = (): void => {
    for (;;) {
      blank();
      if (text[i] === '#') while (i < text.length && text[i] !== '\n') i++;
      if (text[i] === '\n') line++;
      else if (text[i] !== '\r') return;
      i++;
    }
  };
  const quoted = (): string => {
    const q = text[i] as string;
    const multi = text.startsWith(q.repeat(3), i);
    const close = multi ? q.repeat(3) : q;
    i += close.length;
    let out = '';
    while (i < text.length && !text.startsWith(close, i)) {
      if (text[i] === '\n') line++;
      if (q === '"' && text[i] === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      out += text[i];
      i++;
    }
    i += close.length;
    // A multi-line string may end with up to two quotes of its own before the closing three.
    while (multi && text[i] === q) i++;
    return out;
  };
  const dottedKey = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      blank();
      if (text[i] === '"' || text[i] === "'") parts.push(quoted());
      else {
        const from = i;
        while (i < text.length && /[A-Za-z0-9_-]/.test(text[i] as string)) i++;
        parts.push(text.slice(from, i));
      }
      blank();
      if (text[i] !== '.') return parts;
      i++;
    }
  };
  const value = (path: ValuePath): void => {
    blank();
    const c = text[i];
    if (c === '"' || c === "'") quoted();
    else if (c === '{' || c === '[') {
      i++;
      const end = c === '{' ? '}' : ']';
      for (let n = 0; ; n++) {
        space();
        if (i >= text.length) return;
        if (text[i] === end) break;
        const before = i;
        if (c === '{') assignment(path);
        else {
          note([...path, n], line);
          value([...path, n]);
        }
        space();
        if (text[i] === ',') i++;
        // Whatever this reader does not know is stepped over, never looped on.
        else if (i === before) i++;
      }
      i++;
    } else while (i < text.length && !',]}\n\r#'.includes(text[i] as string)) i++;
  };
  /** `key = value` in the table at `path`. */
  const assignment = (path: ValuePath): void => {
    const at = line;
    const key = dottedKey();
    note([...path, ...key], at);
    blank();
    if (text[i] === '=') i++;
    value([...path, ...key]);
  };
  const arrays = new Map<string, number>();
  let table: ValuePath = [];
  while (i < text.length) {
    const before = i;
    space();
    if (i >= text.length) break;
    if (text[i] === '[') {
      const many = text[i + 1] === '[';
      i += many ? 2 : 1;
      const key = dottedKey();
      i += many ? 2 : 1;
      if (many) {
        const n = arrays.get(pathKey(key)) ?? 0;
        arrays.set(pathKey(key), n + 1);
        table = [...key, n];
      } else table = key;
      note(table, line);
    } else assignment(table);
    if (i === before) i++;
  }
  return found;
}

/** The name a message gives the value at `path`: its key. */
const keyName = (path: ValuePath): string => String([...path].reverse().find((p) => typeof p === 'string') ?? '');

class ConfigReader {
  readonly #file: string;
  readonly #text: string;
  #lines: Map<string, number> | undefined;

  constructor(file: string, text: string) {
    this.#file = file;
    this.#text = text;
  }

  /** The line of `path`, or of the nearest table or element that holds it (for a key that is missing). */
  #lineOf(path: ValuePath): number | undefined {
    this.#lines ??= valueLines(this.#text);
    for (let n = path.length; n > 0; n--) {
      const line = this.#lines.get(pathKey(path.slice(0, n)));
      if (line !== undefined) return line;
    }
    return undefined;
  }

  fail(path: ValuePath, message: string): never {
    const line = this.#lineOf(path);
    throw fsError('EINVAL', 'loadPolicy', this.#file, {
      reason: `${line === undefined ? '' : `line ${line}: `}${message}`,
      hint: 'fix the policy file (its keys are listed in packages/context/POLICY.md); nothing was opened',
    });
  }

  /** Refuses any key of the table at `path` (named `[name]` in the message) but `keys`. */
  only(path: ValuePath, value: Table, keys: readonly string[], name: string): void {
    for (const k of Object.keys(value)) {
      if (!keys.includes(k)) this.fail([...path, k], `unknown key "${k}" in [${name}]; the keys there are ${keys.join(', ')}`);
    }
  }

  table(path: ValuePath, value: unknown): Table {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) this.fail(path, `"${keyName(path)}" must be a table`);
    return value as Table;
  }

  strings(path: ValuePath, value: unknown): string[] {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) this.fail(path, `"${keyName(path)}" must be an array of strings`);
    return value as string[];
  }

  oneOf<T extends string>(path: ValuePath, value: unknown, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !allowed.includes(value as T))
      this.fail(path, `"${keyName(path)}" must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
    return value as T;
  }

  ops(path: ValuePath, value: unknown): OpClass[] {
    const list = this.strings(path, value);
    for (const v of list) if (!OP_CLASSES.includes(v as OpClass)) this.fail(path, `"${v}" is not an operation class; use ${OP_CLASSES.join(', ')}`);
    return list as OpClass[];
  }

  count(path: ValuePath, value: unknown): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) this.fail(path, `"${keyName(path)}" must be a whole number ≥ 0`);
    return value;
  }

  /**
   * A number of seconds, in milliseconds: above 0 and within what a timer
   * can wait — Node runs a longer delay after 1 ms, which would end every
   * wait at once.
   */
  seconds(path: ValuePath, value: unknown): number {
    if (typeof value !== 'number' || !(value > 0) || !(value * 1000 <= MAX_APPROVAL_TIMEOUT_MS))
      this.fail(path, `"${keyName(path)}" must be a number of seconds above 0 and at most ${MAX_SECONDS.toLocaleString('en-US')} (about 24.8 days)`);
    return value * 1000;
  }
}

/** The longest wait a policy file may set, in whole seconds. */
const MAX_SECONDS = Math.floor(MAX_APPROVAL_TIMEOUT_MS / 1000);

/**
 * Parses the text of a policy file.
 *
 * @example
 * ```ts
 * parsePolicyFile('[policy]\nmode = "manual"\n', 'config.toml').mode; // 'manual'
 * parsePolicyFile('[policy]\nmdoe = "manual"\n', 'config.toml'); // throws EINVAL: line 2: unknown key "mdoe" in [policy] …
 * ```
 */
export function parsePolicyFile(text: string, file: string): PolicyConfig {
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    if (err instanceof TomlError) {
      throw fsError('EINVAL', 'loadPolicy', file, {
        reason: `line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}`,
        hint: 'fix the TOML syntax; nothing was opened',
      });
    }
    throw err;
  }
  const r: ConfigReader = new ConfigReader(file, text);
  for (const k of Object.keys(doc)) {
    if (k !== 'policy' && k !== 'commands' && !SURFACE_TABLES.includes(k))
      r.fail([k], `unknown table or key "${k}"; a ctxfs config has [policy], [commands] and ${SURFACE_TABLES.map((t) => `[${t}]`).join(', ')}`);
  }
  const config: { -readonly [K in keyof PolicyConfig]: PolicyConfig[K] } = {};
  if (doc.commands !== undefined) config.commands = commandRules(r, r.table(['commands'], doc.commands));
  if (doc.policy === undefined) return config;
  const p = r.table(['policy'], doc.policy);
  r.only(['policy'], p, keysOf('policy'), 'policy');
  const at = (key: string): ValuePath => ['policy', key];
  if (p.mode !== undefined) config.mode = r.oneOf<PolicyMode>(at('mode'), p.mode, ['manual', 'auto', 'deny']);
  if (p.auto_approve_reads !== undefined) {
    if (typeof p.auto_approve_reads !== 'boolean') r.fail(at('auto_approve_reads'), '"auto_approve_reads" must be true or false');
    config.autoApproveReads = p.auto_approve_reads;
  }
  if (p.auto_approve_write_patterns !== undefined)
    config.autoApproveWritePatterns = r.strings(at('auto_approve_write_patterns'), p.auto_approve_write_patterns);
  if (p.always_ask !== undefined) config.alwaysAsk = r.ops(at('always_ask'), p.always_ask);
  if (p.read_only !== undefined) config.readOnly = r.strings(at('read_only'), p.read_only);
  if (p.sensitive !== undefined) config.sensitive = r.strings(at('sensitive'), p.sensitive);
  if (p.approval_timeout_seconds !== undefined) config.approvalTimeoutMs = r.seconds(at('approval_timeout_seconds'), p.approval_timeout_seconds);
  if (p.rules !== undefined) {
    if (!Array.isArray(p.rules)) r.fail(at('rules'), '"rules" must be an array of tables: [[policy.rules]]');
    config.rules = p.rules.map((raw, i): PolicyRule => {
      const here: ValuePath = ['policy', 'rules', i];
      const rule = r.table(here, raw);
      r.only(here, rule, keysOf('policy.rules'), 'policy.rules');
      if (rule.effect === undefined) r.fail(here, `rule ${i + 1} has no "effect" (allow, ask or deny)`);
      if (rule.paths === undefined) r.fail(here, `rule ${i + 1} has no "paths"`);
      const reason = rule.reason;
      if (reason !== undefined && typeof reason !== 'string') r.fail([...here, 'reason'], '"reason" must be a string');
      return {
        effect: r.oneOf<Effect>([...here, 'effect'], rule.effect, ['allow', 'ask', 'deny']),
        paths: r.strings([...here, 'paths'], rule.paths),
        ops: rule.ops === undefined ? undefined : r.ops([...here, 'ops'], rule.ops),
        agents: rule.agents === undefined ? undefined : r.strings([...here, 'agents'], rule.agents),
        reason,
      };
    });
  }
  if (p.budgets !== undefined) {
    const b = r.table(at('budgets'), p.budgets);
    r.only(at('budgets'), b, keysOf('policy.budgets'), 'policy.budgets');
    const budgets: { -readonly [K in keyof PolicyBudgets]: PolicyBudgets[K] } = {};
    const key = (k: string): ValuePath => ['policy', 'budgets', k];
    if (b.operations !== undefined) budgets.operations = r.count(key('operations'), b.operations);
    if (b.bytes !== undefined) budgets.bytes = r.count(key('bytes'), b.bytes);
    if (b.tokens !== undefined) budgets.tokens = r.count(key('tokens'), b.tokens);
    if (b.operations_per_minute !== undefined) budgets.operationsPerMinute = r.count(key('operations_per_minute'), b.operations_per_minute);
    config.budgets = budgets;
  }
  return config;
}

/** The `[commands]` table. */
function commandRules(r: ConfigReader, t: Table): CommandRulesConfig {
  r.only(['commands'], t, keysOf('commands'), 'commands');
  const at = (key: string): ValuePath => ['commands', key];
  const out: { -readonly [K in keyof CommandRulesConfig]: CommandRulesConfig[K] } = {};
  if (t.allow !== undefined) out.allow = r.strings(at('allow'), t.allow);
  if (t.ask !== undefined) out.ask = r.strings(at('ask'), t.ask);
  if (t.deny !== undefined) out.deny = r.strings(at('deny'), t.deny);
  if (t.default !== undefined) out.default = r.oneOf<Effect>(at('default'), t.default, ['allow', 'ask', 'deny']);
  if (t.unconfined !== undefined) {
    if (typeof t.unconfined !== 'boolean') r.fail(at('unconfined'), '"unconfined" must be true or false');
    out.unconfined = t.unconfined;
  }
  // The command runner's time limit is a timer too.
  if (t.timeout_seconds !== undefined) out.timeoutMs = r.seconds(at('timeout_seconds'), t.timeout_seconds);
  return out;
}

/**
 * The file layers of a workspace's policy: the user's file, then the
 * project's, each present or not.
 */
export async function loadPolicyFiles(fs: Filesystem, options: { userConfig?: string | false } = {}): Promise<Array<{ source: string; config: PolicyConfig }>> {
  const layers: Array<{ source: string; config: PolicyConfig }> = [];
  const user = options.userConfig === undefined ? userConfigPath() : options.userConfig;
  if (user !== false && existsSync(user)) layers.push({ source: user, config: parsePolicyFile(readFileSync(user, 'utf8'), user) });
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await fs.readBytes(PROJECT_CONFIG_PATH));
  } catch (err) {
    if (!(isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR'))) {
      if (err instanceof FsError) throw err;
      throw fsError('EINVAL', 'loadPolicy', PROJECT_CONFIG_PATH, { reason: 'the policy file is not UTF-8 text', hint: 'save it as UTF-8' });
    }
  }
  if (text !== undefined) layers.push({ source: PROJECT_CONFIG_PATH, config: parsePolicyFile(text, PROJECT_CONFIG_PATH) });
  return layers;
}
