import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DecisionJson } from '../src/schemas.ts';
import { ctxfs, shapeErrors, useProject } from './support/cli.ts';

describe('policy check of a link', () => {
  const project = useProject({ '.env': 'DB_PASSWORD=Zx81qPm2Lw9\n', 'readme.md': '# hi\n' }, (p) => {
    symlinkSync('.env', join(p.root, 'notes.txt'));
    symlinkSync('readme.md', join(p.root, 'docs.md'));
  });

  // A session call decides the link and the file it leads to; check must say what the call would.
  it.each(['read', 'write'])('%s notes.txt (a link to .env) is denied, as the real call is, and says why', (op) => {
    const r = ctxfs(project, ['policy', 'check', op, 'notes.txt']);
    expect(r.status).toBe(4);
    expect(r.stdout).toContain(`deny: ${op} notes.txt by cli`);
    expect(r.stdout).toContain('notes.txt is a link to .env');
    expect(r.stdout).toMatch(/ {2}notes\.txt: allow, because/);
    expect(r.stdout).toMatch(/ {2}\.env: deny, because \.env holds credentials/);
    expect(ctxfs(project, op === 'read' ? ['cat', 'notes.txt'] : ['replace', 'notes.txt', 'DB_PASSWORD', 'DB_PASS']).status).toBe(4);
  });

  it('--json gives the decision that holds, with the link in its reason', () => {
    const r = ctxfs(project, ['policy', 'check', 'read', 'notes.txt', '--json']);
    expect(r.status).toBe(4);
    const j = r.json<DecisionJson>();
    expect(shapeErrors('policy check', j)).toEqual([]);
    expect(j).toMatchObject({ op: 'read', path: 'notes.txt', effect: 'deny', sensitive: true });
    expect(j.reason).toMatch(/^notes\.txt is a link to \.env: \.env holds credentials/);
  });

  it('a link to an allowed file is allowed', () => {
    const r = ctxfs(project, ['policy', 'check', 'read', 'docs.md']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('allow: read docs.md by cli');
    expect(r.stdout).toContain('docs.md is a link to readme.md');
  });
});

describe('policy check of a directory', () => {
  const project = useProject({ 'secrets/db.txt': 'password=hunter2\n', 'src/a.ts': 'export {};\n' }, (p) =>
    p.write('.ctxfs/config.toml', '[[policy.rules]]\neffect = "deny"\npaths = ["secrets/"]\nops = ["search", "rename"]\nreason = "no secrets"\n'),
  );

  // A search of `secrets` is refused by the rule for `secrets/` (the session decides its scope as a directory); check must say so.
  it.each(['search', 'rename'])('%s secrets is denied by the rule for secrets/, as the call is', (op) => {
    const r = ctxfs(project, ['policy', 'check', op, 'secrets']);
    expect(r.stdout).toContain(`deny: ${op} secrets by cli`);
    expect(r.stdout).toContain('no secrets');
    expect(r.status).toBe(4);
  });

  it('the real search is refused alike; another directory is allowed', () => {
    expect(ctxfs(project, ['grep', 'hunter2', 'secrets']).status).toBe(4);
    const src = ctxfs(project, ['policy', 'check', 'search', 'src']);
    expect(src.status, src.stdout).toBe(0);
  });
});

describe('audit --path', () => {
  const project = useProject({ 'a.txt': 'a1\n' });

  it('finds the records of a path however it is spelled, as every call normalizes it', () => {
    expect(ctxfs(project, ['cat', './a.txt']).status).toBe(0);
    for (const spelled of ['a.txt', './a.txt', 'x/../a.txt']) {
      const r = ctxfs(project, ['audit', '--path', spelled, '--json']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.json<{ records: Array<{ op: string; paths: string[] }> }>().records).toEqual([expect.objectContaining({ op: 'readFile', paths: ['a.txt'] })]);
    }
  });
});

describe('a trail edited by hand', () => {
  const project = useProject({ 'a.txt': 'a1\na2\n' });

  it('audit verify names the edited line whatever its new length; other commands warn, and a query refuses naming it', () => {
    for (let i = 0; i < 3; i++) expect(ctxfs(project, ['cat', 'a.txt']).status).toBe(0);
    const dir = join(project.base, '.proj.ctxfs', 'audit');
    const log = join(dir, readdirSync(dir).find((f) => f.endsWith('.jsonl')) as string);
    const lines = readFileSync(log, 'utf8').split('\n');
    lines[2] = (lines[2] as string).replace('"agent":"cli"', '"agent":"llm:evil"');
    writeFileSync(log, lines.join('\n'));

    const verify = ctxfs(project, ['audit', 'verify']);
    expect(verify.status, verify.stderr).toBe(1);
    expect(verify.stdout).toMatch(/damaged: trail: 2 lines verify, then audit-000001\.jsonl line 3 \(seq 3\): edited/);

    const cat = ctxfs(project, ['cat', 'a.txt']);
    expect(cat.status).toBe(0);
    expect(cat.stdout).toContain('a1');
    expect(cat.stderr).toMatch(/CTXFS_AUDIT_DAMAGED.*the audit trail was changed: audit-000001\.jsonl line 3 \(seq 3\)/);
    expect(cat.stderr).toContain('ctxfs audit verify');

    const query = ctxfs(project, ['audit']);
    expect(query.status).not.toBe(0);
    expect(query.stderr).toMatch(/the audit trail was changed: audit-000001\.jsonl line 3 \(seq 3\): edited/);
    expect(query.stderr).toContain('ctxfs audit verify');
    expect(query.stderr).toContain('ctxfs audit reindex');

    // Reindexed, queries read the log as it is: the edited record is there, marked; the change stays as evidence.
    const reindex = ctxfs(project, ['audit', 'reindex', '--json']);
    expect(reindex.status, reindex.stderr).toBe(1);
    const report = reindex.json<{ indexed: number; ok: boolean; firstBad?: { file: string; line: number; seq: number; damage: string } }>();
    expect(report).toMatchObject({ ok: false, firstBad: { file: 'audit-000001.jsonl', line: 3, seq: 3, damage: 'edited' } });
    expect(report.indexed).toBeGreaterThan(3);
    const after = ctxfs(project, ['audit', '--json']);
    expect(after.status, after.stderr).toBe(0);
    const records = after.json<{ records: Array<{ seq: number; agent: string; verified: boolean }> }>().records;
    expect(records.find((r) => r.seq === 3)).toMatchObject({ agent: 'llm:evil', verified: false });
    expect(records.filter((r) => r.seq !== 3).every((r) => r.verified)).toBe(true);
    expect(ctxfs(project, ['audit']).stdout).toMatch(/#3 .* llm:evil .*\(does not verify\)/);
    expect(ctxfs(project, ['audit', 'verify']).status).toBe(1);
  });
});
