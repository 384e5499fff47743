import { compilePathPatterns } from '@ctxfs/core';
import ignore from 'ignore';
import { describe, expect, it } from 'vitest';
import { decideRestore, type Effect, type OpClass, POLICY_KEYS, type PolicyConfig, type PolicyRule, parsePolicyFile, resolvePolicy } from '../src/index.ts';

// Patterns and paths with the corners of gitignore: `**`, anchored `/x`,
// directory-only `x/`, negation, dotfiles, character classes, case.
const PATTERN_SETS: readonly (readonly string[])[] = [
  ['secrets/'],
  ['/build'],
  ['build/'],
  ['*.pem', '!public.pem'],
  ['**/.env*'],
  ['.env', '.env.*', '!.env.example'],
  ['src/**/*.ts'],
  ['docs/**'],
  ['**/fixtures/**/*.json'],
  ['/vendor/', 'node_modules/'],
  ['config/*.yml'],
  ['a/**/b'],
  ['*.[ch]'],
  ['LICENSE', 'README*'],
  ['.github/'],
  ['**/id_rsa*'],
  ['tmp/*', '!tmp/keep'],
  ['Secrets/'],
];

const PATHS: readonly string[] = [
  'secrets/db.txt',
  'app/secrets/x/y.txt',
  'build',
  'build/out.js',
  'src/build',
  'src/build/x.js',
  'certs/server.pem',
  'certs/public.pem',
  '.env',
  'config/.env.local',
  '.env.example',
  'src/a.ts',
  'src/deep/nested/b.ts',
  'lib/a.ts',
  'docs/index.md',
  'docs/api/x.md',
  'test/fixtures/a/b.json',
  'fixtures/c.json',
  'vendor/lib.js',
  'pkg/vendor/lib.js',
  'node_modules/x/index.js',
  'config/app.yml',
  'config/sub/app.yml',
  'a/b',
  'a/x/y/b',
  'main.c',
  'include/x.h',
  'main.cc',
  'LICENSE',
  'README.md',
  'sub/README.txt',
  '.github/workflows/ci.yml',
  'home/.ssh/id_rsa.pub',
  'tmp/a.log',
  'tmp/keep',
  'secrets',
];

describe('path patterns read as git reads them (checked against the ignore package)', () => {
  const cases = PATTERN_SETS.flatMap((patterns) => PATHS.map((path) => [patterns.join(' '), path, patterns] as const));
  it(`agrees on ${cases.length} pattern × path cases`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const disagreements: string[] = [];
    for (const [label, path, patterns] of cases) {
      const ours = compilePathPatterns(patterns)(path);
      // git on Linux (core.ignorecase false) matches case-sensitively, as the policy does.
      const theirs = ignore({ ignorecase: false })
        .add([...patterns])
        .ignores(path);
      if (ours !== theirs) disagreements.push(`${label} | ${path}: ours ${ours}, ignore ${theirs}`);
    }
    expect(disagreements).toEqual([]);
  });
});

/**
 * A second reading of the documented decision order, written from the docs
 * alone with the ignore package for matching: deny rule; mode deny or a
 * read-only path for a change; a change in `.ctxfs/`, which asks; a
 * sensitive path without an allow rule (a change of it too); ask rule; always-ask;
 * allow rule; the mode's default.
 */
function reference(config: PolicyConfig, op: OpClass, path: string, agent: string, sensitive: boolean): Effect {
  const matches = (patterns: readonly string[]) =>
    patterns.length > 0 &&
    ignore({ ignorecase: false })
      .add([...patterns])
      .ignores(path);
  const agentOk = (r: PolicyRule) =>
    r.agents === undefined ||
    r.agents.some((a) =>
      new RegExp(
        `^${a
          .split('*')
          .map((x) => x.replace(/[.+?^${}()|[\]\\:]/g, '\\$&'))
          .join('.*')}$`,
      ).test(agent),
    );
  const rules = (config.rules ?? []).filter((r) => (r.ops ?? [op]).includes(op) && agentOk(r) && matches(r.paths));
  const change = op === 'write' || op === 'delete' || op === 'rename';
  const mode = config.mode ?? 'auto';
  if (rules.some((r) => r.effect === 'deny')) return 'deny';
  if (change && mode === 'deny') return 'deny';
  if (change && matches(config.readOnly ?? [])) return 'deny';
  // The workspace's own configuration, whatever its letters' case: only a person changes it.
  if (change && /^\.ctxfs(\/|$)/i.test(path)) return 'ask';
  const allowed = rules.some((r) => r.effect === 'allow');
  if ((sensitive || matches(config.sensitive ?? [])) && !allowed) return 'deny';
  if (rules.some((r) => r.effect === 'ask')) return 'ask';
  if ((config.alwaysAsk ?? []).includes(op)) return 'ask';
  if (allowed) return 'allow';
  if (mode === 'deny') return 'deny';
  if (!change) return (config.autoApproveReads ?? mode === 'auto') ? 'allow' : 'ask';
  if (mode === 'auto' && matches(config.autoApproveWritePatterns ?? ['**'])) return 'allow';
  return 'ask';
}

const CONFIGS: ReadonlyArray<[string, PolicyConfig]> = [
  ['defaults', {}],
  ['manual', { mode: 'manual' }],
  ['manual, reads auto', { mode: 'manual', autoApproveReads: true }],
  ['deny mode with an allow rule', { mode: 'deny', rules: [{ effect: 'allow', paths: ['src/'], ops: ['read', 'search'] }] }],
  ['auto, writes to src and tests only', { mode: 'auto', autoApproveWritePatterns: ['src/**', 'tests/**'] }],
  ['always ask delete and rename', { alwaysAsk: ['delete', 'rename'] }],
  ['read-only vendor and LICENSE', { readOnly: ['vendor/', 'LICENSE'] }],
  ['deny secrets to llm:*', { rules: [{ effect: 'deny', paths: ['secrets/'], agents: ['llm:*'] }] }],
  ['ask for config writes', { rules: [{ effect: 'ask', paths: ['config/**'], ops: ['write'] }] }],
  ['allow the example env', { rules: [{ effect: 'allow', paths: ['.env.example', 'config/.env.local'], ops: ['read'] }] }],
  ['extra sensitive tfvars', { sensitive: ['*.tfvars'] }],
  [
    'deny beats allow',
    {
      rules: [
        { effect: 'allow', paths: ['src/'] },
        { effect: 'deny', paths: ['src/secret.ts'] },
      ],
    },
  ],
  [
    'ask beats allow',
    {
      rules: [
        { effect: 'allow', paths: ['docs/'] },
        { effect: 'ask', paths: ['docs/**/*.md'] },
      ],
    },
  ],
  ['agent llm:local only', { rules: [{ effect: 'deny', paths: ['**'], ops: ['write', 'delete', 'rename'], agents: ['llm:local'] }] }],
  ['allow everything, the policy too', { rules: [{ effect: 'allow', paths: ['**', '.ctxfs/'] }] }],
  ['read-only config dir', { readOnly: ['.ctxfs/'] }],
];

const DECISION_PATHS = [
  'src/a.ts',
  'src/secret.ts',
  'secrets/db.txt',
  'vendor/lib.js',
  'LICENSE',
  'config/app.yml',
  '.env',
  '.env.example',
  'config/.env.local',
  'infra/prod.tfvars',
  'docs/api/x.md',
  'tests/a.test.ts',
  '.ctxfs/config.toml',
  '.CTXFS/config.toml',
  '.ctxfs',
  'src/.ctxfs/config.toml',
];
const OPS: readonly OpClass[] = ['read', 'search', 'write', 'delete', 'rename', 'history'];
const AGENTS = ['llm:claude', 'llm:local', 'human'];
const SENSITIVE = new Set(['.env', 'config/.env.local']);

describe('policy decisions (rule × path × operation × agent) agree with a second reading of the documented order', () => {
  const cases = CONFIGS.flatMap(([name, config]) =>
    DECISION_PATHS.flatMap((path) => OPS.flatMap((op) => AGENTS.map((agent) => ({ name, config, path, op, agent })))),
  );
  it(`${cases.length} cases`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const wrong: string[] = [];
    const counts: Record<Effect, number> = { allow: 0, ask: 0, deny: 0 };
    for (const c of cases) {
      const policy = resolvePolicy([{ source: 'code', config: c.config }]);
      const got = policy.decide({ op: c.op, path: c.path, agent: c.agent, sensitive: SENSITIVE.has(c.path) }).effect;
      const want = reference(c.config, c.op, c.path, c.agent, SENSITIVE.has(c.path));
      counts[got]++;
      if (got !== want) wrong.push(`${c.name} | ${c.op} ${c.path} as ${c.agent}: got ${got}, reference ${want}`);
    }
    expect(wrong).toEqual([]);
    // Every effect is exercised, not only the default.
    expect(Math.min(counts.allow, counts.ask, counts.deny)).toBeGreaterThan(50);
  });

  it('states its reasons in words a refusal can carry', () => {
    const policy = resolvePolicy([
      { source: 'code', config: { readOnly: ['vendor/'], rules: [{ effect: 'deny', paths: ['secrets/'], reason: 'secrets are never shown' }] } },
    ]);
    expect(policy.decide({ op: 'read', path: 'secrets/a', agent: 'x' }).reason).toBe('secrets are never shown');
    expect(policy.decide({ op: 'write', path: 'vendor/a.js', agent: 'x' }).reason).toMatch(/read-only/);
    expect(policy.decide({ op: 'read', path: '.env', agent: 'x', sensitive: true }).reason).toMatch(/credentials/);
  });

  it("never lets a rule or mode approve an agent's change to the workspace's own policy: a person is asked", () => {
    const permissive = resolvePolicy([{ source: 'code', config: { mode: 'auto', rules: [{ effect: 'allow', paths: ['**'] }] } }]);
    for (const op of ['write', 'delete', 'rename'] as const) {
      const d = permissive.decide({ op, path: '.ctxfs/config.toml', agent: 'llm:claude' });
      expect(d).toMatchObject({ effect: 'ask', by: 'policy' });
      expect(d.reason).toMatch(/\.ctxfs\/.*a person approves every change/);
    }
    expect(permissive.decide({ op: 'read', path: '.ctxfs/config.toml', agent: 'llm:claude' }).effect).toBe('allow');
    expect(permissive.decide({ op: 'write', path: 'src/.ctxfs/config.toml', agent: 'llm:claude' }).effect).toBe('allow');
    // A deny still wins over the question.
    const strict = resolvePolicy([{ source: 'code', config: { rules: [{ effect: 'deny', paths: ['.ctxfs/'], ops: ['write'] }] } }]);
    expect(strict.decide({ op: 'write', path: '.ctxfs/config.toml', agent: 'llm:claude' }).effect).toBe('deny');
  });

  it('merges layers in order: fields replaced, rules added up, budgets merged by field', () => {
    const policy = resolvePolicy([
      { source: 'user', config: { mode: 'manual', budgets: { operations: 10, tokens: 1000 }, rules: [{ effect: 'deny', paths: ['a/'] }] } },
      { source: '.ctxfs/config.toml', config: { mode: 'auto', budgets: { tokens: 500 }, rules: [{ effect: 'deny', paths: ['b/'] }] } },
      { source: 'code', config: { autoApproveWritePatterns: ['src/**'] } },
    ]);
    expect(policy.sources).toEqual(['defaults', 'user', '.ctxfs/config.toml', 'code']);
    expect(policy.mode).toBe('auto');
    expect(policy.budgets).toEqual({ operations: 10, tokens: 500 });
    expect(policy.rules.map((r) => r.paths[0])).toEqual(['a/', 'b/']);
    expect(policy.decide({ op: 'write', path: 'lib/x.ts', agent: 'x' }).effect).toBe('ask');
  });
});

describe('a restore of a whole snapshot', () => {
  const restore = (config: PolicyConfig) => decideRestore(resolvePolicy([{ source: 'code', config }])).effect;

  it('is refused in deny mode, asked wherever any path is guarded from changes, else allowed', () => {
    expect(restore({})).toBe('allow');
    expect(restore({ mode: 'deny' })).toBe('deny');
    expect(restore({ readOnly: ['vendor/**'] })).toBe('ask');
    expect(restore({ alwaysAsk: ['delete'] })).toBe('ask');
    expect(restore({ alwaysAsk: ['rename'] })).toBe('allow');
    expect(restore({ rules: [{ effect: 'ask', paths: ['src/**'], ops: ['write'] }] })).toBe('ask');
    expect(restore({ rules: [{ effect: 'deny', paths: ['**'] }] })).toBe('ask');
    // Guarding reads only guards nothing a restore changes.
    expect(restore({ rules: [{ effect: 'deny', paths: ['docs/**'], ops: ['read', 'search'] }] })).toBe('allow');
    expect(restore({ rules: [{ effect: 'allow', paths: ['**'], ops: ['write'] }] })).toBe('allow');
  });
});

describe('policy files', () => {
  it('reads every key', () => {
    const config = parsePolicyFile(
      [
        '[policy]',
        'mode = "manual"',
        'auto_approve_reads = true',
        'auto_approve_write_patterns = ["src/**"]',
        'always_ask = ["delete", "rename"]',
        'read_only = ["vendor/"]',
        'sensitive = ["*.tfvars"]',
        'approval_timeout_seconds = 30',
        '',
        '[[policy.rules]]',
        'effect = "deny"',
        'paths = ["secrets/"]',
        'ops = ["read", "search"]',
        'agents = ["llm:*"]',
        'reason = "never"',
        '',
        '[policy.budgets]',
        'operations = 500',
        'bytes = 1_000_000',
        'tokens = 40_000',
        'operations_per_minute = 60',
      ].join('\n'),
      'config.toml',
    );
    expect(config).toEqual({
      mode: 'manual',
      autoApproveReads: true,
      autoApproveWritePatterns: ['src/**'],
      alwaysAsk: ['delete', 'rename'],
      readOnly: ['vendor/'],
      sensitive: ['*.tfvars'],
      approvalTimeoutMs: 30_000,
      rules: [{ effect: 'deny', paths: ['secrets/'], ops: ['read', 'search'], agents: ['llm:*'], reason: 'never' }],
      budgets: { operations: 500, bytes: 1_000_000, tokens: 40_000, operationsPerMinute: 60 },
    });
  });

  // The key table is what the docs list: each key it names must be read, and every other key refused.
  it.each(Object.entries(POLICY_KEYS))('reads each key of [%s] the key table lists, and refuses any other', (table, keys) => {
    const file = (set: Record<string, string>): string => {
      // A rule needs an effect and paths; the key under test replaces the base rule's own.
      const entries = table === 'policy.rules' ? { effect: '"allow"', paths: '["base/"]', ...set } : set;
      const header = table === 'policy.rules' ? '[[policy.rules]]' : `[${table}]`;
      return [header, ...Object.entries(entries).map(([k, v]) => `${k} = ${v}`)].join('\n');
    };
    const without = parsePolicyFile(file({}), 'config.toml');
    for (const { key, example } of keys) expect(parsePolicyFile(file({ [key]: example }), 'config.toml'), key).not.toEqual(without);
    expect(() => parsePolicyFile(file({ not_a_key: '1' }), 'config.toml')).toThrow(`the keys there are ${keys.map((k) => k.key).join(', ')}`);
  });

  it.each([
    ['[policy]\nmdoe = "auto"\n', /line 2: unknown key "mdoe" in \[policy\]/],
    ['[policy]\nmode = "yolo"\n', /line 2: "mode" must be one of "manual", "auto", "deny"/],
    [
      '[policy]\nmode = "auto"\n\n[[policy.rules]]\neffect = "deny"\npaths = ["a/"]\n\n[[policy.rules]]\neffect = "allow"\npath = ["b/"]\n',
      /line 10: unknown key "path" in \[policy.rules\]/,
    ],
    ['[policy]\n[[policy.rules]]\neffect = "deny"\npaths = "secrets/"\n', /line 4: "paths" must be an array of strings/],
    ['[policy]\nalways_ask = ["erase"]\n', /line 2: "erase" is not an operation class/],
    ['[policy.budgets]\ntokens = -5\n', /line 2: "tokens" must be a whole number/],
    ['[policy]\nmode = "auto\n', /line 2, column \d+/],
    ['[backend]\nkind = "host"\n', /unknown table or key "backend"/],
    ['[policy]\n[[policy.rules]]\npaths = ["a/"]\n', /line 2: rule 1 has no "effect"/],
  ])('a broken file fails loudly with the file and line: %j', (text, message) => {
    expect(() => parsePolicyFile(text, '.ctxfs/config.toml')).toThrow(message);
    try {
      parsePolicyFile(text, '.ctxfs/config.toml');
    } catch (err) {
      expect(err).toMatchObject({ code: 'EINVAL', path: '.ctxfs/config.toml' });
    }
  });

  it("leaves the surfaces' own tables, [mcp] and [cli], to them", () => {
    const text = '[policy]\nmode = "manual"\n\n[mcp]\nprofile = "small"\n\n[cli]\nbackend = "memory"\n';
    expect(parsePolicyFile(text, '.ctxfs/config.toml')).toEqual({ mode: 'manual' });
  });
});
