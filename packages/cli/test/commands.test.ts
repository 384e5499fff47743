import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { BIN, ctxfs, ESC, FILES, pasted, useProject } from './support/cli.ts';

// The built binary, piped as a script would run it: what each command prints and the exit code it means.
describe('ctxfs from a script', () => {
  const project = useProject();
  const run = (args: readonly string[], input?: string) => ctxfs(project, args, { input });

  it('--version and --help (with examples) on every command', () => {
    const v = run(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = run(['--help']);
    expect(help.status).toBe(0);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z]+)(?: |$)/gm)].map((m) => m[1] as string).filter((c) => c !== 'help');
    expect(commands).toEqual(
      expect.arrayContaining(['overview', 'ls', 'cat', 'grep', 'outline', 'symbol', 'related', 'patch', 'replace', 'history', 'diff', 'undo', 'rollback']),
    );
    expect(commands).toEqual(expect.arrayContaining(['audit', 'snapshot', 'scan', 'policy', 'doctor', 'serve']));
    for (const group of ['audit', 'snapshot', 'policy']) expect(run([group, '--help']).stdout, group).toMatch(/\nExamples:\n {2}\$ ctxfs /);
    const leaves = [
      ...commands.filter((c) => !['audit', 'snapshot', 'policy'].includes(c)).map((c) => [c]),
      ['audit', 'query'],
      ['audit', 'verify'],
      ['audit', 'rollback'],
      ...['create', 'list', 'restore', 'drop'].map((c) => ['snapshot', c]),
      ['policy', 'show'],
      ['policy', 'check'],
    ];
    for (const leaf of leaves) {
      const h = run([...leaf, '--help']);
      expect(h.status, leaf.join(' ')).toBe(0);
      expect(h.stdout, leaf.join(' ')).toMatch(/\nExamples:\n( {2}\$ .*ctxfs .*\n)+\s*$/);
    }
  });

  it("a mistake in a command's arguments is exit 2 and names that command's help", () => {
    for (const [args, help] of [
      [['cat'], 'ctxfs cat --help'],
      [['grep', 'x', '--bogus'], 'ctxfs grep --help'],
      [['audit', 'query', '--limit', 'many'], 'ctxfs audit query --help'],
      [['cta', 'x'], 'ctxfs --help'],
    ] as const) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(help);
    }
  });

  it('reads: the budgeted view, a line range, the raw bytes', () => {
    const cat = run(['cat', 'src/math.ts']);
    expect(cat.status).toBe(0);
    expect(cat.stdout).toMatch(/^<file path="src\/math.ts" version="[0-9a-f]{12}" lines="1-6 of 6" view="full"/);
    expect(cat.stdout).toContain('export const retries = 3;');
    const lines = run(['cat', 'src/math.ts', '--lines', '2:3']);
    expect(lines.stdout).toContain('2\texport function add');
    expect(lines.stdout).toContain('3\t  return a + b;');
    expect(lines.stdout).not.toContain('retries');
    // A range as people write it elsewhere is the same range.
    for (const range of ['2-3', '2,3']) expect(run(['cat', 'src/math.ts', '--lines', range]).stdout, range).toBe(lines.stdout);
    const raw = run(['cat', '--raw', 'src/math.ts']);
    expect(raw.stdout).toBe(readFileSync(join(project.root, 'src/math.ts'), 'utf8'));
    expect(run(['grep', 'retries']).stdout).toContain('6:\texport const retries = 3;');
    expect(run(['ls']).stdout).toMatch(/\nsrc\/math\.ts {2}\d+ B( {2}\d+ lines)?\n/);
    expect(run(['ls', 'src']).stdout).toMatch(/paths relative to src\/\.\n<file path="src"[^\n]*>\n(.*\n)*math\.ts {2}\d+ B( {2}\d+ lines)?\n/);
    expect(run(['symbol', 'add', 'src/math.ts']).stdout).toContain('/** Adds two numbers. */');
    expect(run(['symbol', 'add']).stdout).toContain('ctxfs symbol add src/math.ts');
    // One importer is one related file (it said '1 related files').
    expect(run(['related', 'src/math.ts']).stdout).toMatch(/src\/math\.ts: 1 related file\n← src\/main\.ts/);
    expect(run(['overview']).stdout).toContain('README.md');
  });

  it('exit codes: 2 usage, 3 not found (a file, a snapshot, the text to replace)', () => {
    for (const args of [
      ['bogus'],
      ['cat'],
      ['cat', 'x', '--lines', '9:2'],
      ['cat', 'x', '--raw', '--lines', '1:2'],
      ['--profile', 'huge', 'ls'],
      ['grep', '(unclosed'],
    ]) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toBe('');
    }
    for (const args of [
      ['cat', 'missing.ts'],
      ['cat', '--raw', 'missing.ts'],
      ['diff', 'missing.ts'],
      ['snapshot', 'restore', 'never-made'],
    ]) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/^ctxfs: E(NOENT|NOSNAPSHOT)/);
    }
    expect(run(['snapshot', 'restore', 'never-made']).stderr).toBe(
      "ctxfs: ENOSNAPSHOT: no snapshot has the id or tag 'never-made'\nlist them with ctxfs snapshot list\n",
    );
    // The command it names lists the snapshots of the same backend.
    expect(run(['-b', 'host', 'snapshot', 'drop', 'never-made']).stderr).toMatch(/\nlist them with ctxfs --backend host snapshot list\n$/);
    const missing = run(['replace', 'src/math.ts', 'no such text', 'x']);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toMatch(/^ctxfs: /);
    // Text that matches more than once is an argument to make precise.
    expect(run(['replace', 'src/math.ts', 'a', 'x']).status).toBe(2);
  });

  it('patch: --dry-run shows the diff and changes nothing; then it applies, and a second time it is refused', () => {
    const patch = '--- a/src/math.ts\n+++ b/src/math.ts\n@@ -6 +6 @@\n-export const retries = 3;\n+export const retries = 5;\n';
    const before = readFileSync(join(project.root, 'src/math.ts'), 'utf8');
    const dry = run(['patch', '--dry-run'], patch);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/^Dry run, nothing was written\. Applied, it would change src\/math\.ts: \+1 -1 lines\./);
    expect(dry.stdout).toContain('+export const retries = 5;');
    // No new version: the history holds the file as it was (at most), and the real patch adds one.
    expect(dry.stdout).not.toMatch(/\(#\d+\)/);
    const versions = (run(['history', 'src/math.ts']).stdout.match(/^#\d+ /gm) ?? []).length;
    expect(versions).toBeLessThanOrEqual(1);
    expect(readFileSync(join(project.root, 'src/math.ts'), 'utf8')).toBe(before);
    project.write('fix.diff', patch);
    expect(run(['patch', 'fix.diff']).status).toBe(0);
    expect(readFileSync(join(project.root, 'src/math.ts'), 'utf8')).toContain('retries = 5;');
    expect((run(['history', 'src/math.ts']).stdout.match(/^#\d+ /gm) ?? []).length).toBe(Math.max(versions, 1) + 1);
    const again = run(['patch', 'fix.diff']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('does not apply');
    const envelope = '*** Begin Patch\n*** Add File: src/new.ts\n+export const fresh = true;\n*** End Patch\n';
    expect(run(['patch', '--dry-run'], envelope).stdout).toContain('+export const fresh = true;');
    expect(run(['cat', '--raw', 'src/new.ts']).status).toBe(3);
    // The trail tells the dry run from the change: both are applyPatch of src/math.ts.
    const lines = run(['audit', '--op', 'applyPatch', '--path', 'src/math.ts']).stdout.trim().split('\n');
    expect(lines.filter((l) => / applyPatch \(dry run\) src\/math\.ts ok /.test(l))).toHaveLength(1);
    expect(lines.filter((l) => / applyPatch src\/math\.ts ok /.test(l))).toHaveLength(1);
  });

  it('every hint is a command to paste (the CLI command for the tool, else ctxfs call with the JSON arguments), and it runs', () => {
    project.write('long.txt', Array.from({ length: 4000 }, (_, i) => `line ${i + 1} of the long file`).join('\n'));
    const calls = new Set<string>();
    const nexts = new Set<string>();
    for (const args of [
      ['-p', 'small', 'cat', 'long.txt'],
      ['symbol', 'add'],
      ['cat', 'long.txt', '--lines', '5000:5001'],
      ['grep', 'line', '--limit', '3'],
      // A file not found: the hint is a glob, which has no command of its own.
      ['-p', 'small', 'cat', 'docs/long.txt'],
    ]) {
      const r = run(args);
      const said = `${r.stdout}\n${r.stderr}`;
      // With the global options typed before the command, which the hint repeats.
      for (const m of said.matchAll(/ctxfs(?: --[a-z-]+(?: [^\s-]\S*)?)* call [a-z_]+ '(?:[^']|'\\'')*'/g)) calls.add(m[0]);
      // No hint is written as a model's tool call.
      expect(said, args.join(' ')).not.toMatch(/\b[a-z]+_[a-z_]+\(\{/);
      // The same command's JSON names its next call alone, with no prose around it to tell from the command.
      const next = (run(['--json', ...args]).json() as { next?: string }).next;
      if (next !== undefined) nexts.add(next);
    }
    expect([...nexts].sort()).toEqual([
      expect.stringMatching(/^ctxfs --profile small cat long\.txt --lines 1:\d+$/),
      expect.stringMatching(/^ctxfs grep line --limit \d+ --offset 3$/),
    ]);
    expect([...calls]).toContain(`ctxfs --profile small call glob '{"pattern":"**/long.txt"}'`);
    for (const hint of calls) {
      const followed = pasted(project, hint);
      expect(followed.status, `${hint}: ${followed.stderr}`).toBe(0);
    }
    for (const next of nexts) {
      const followed = pasted(project, next);
      expect(followed.status, `${next}: ${followed.stderr}`).toBe(0);
    }
    expect(run(['call', 'nope']).stderr).toMatch(/ENOTOOL.*\n.*read_lines/);
    expect(run(['call', 'read_lines', '{bad']).status).toBe(2);
    expect(run(['call', 'read_lines', '-'], '{"path":"long.txt","start_line":2,"end_line":2}').stdout).toContain('2\tline 2 of the long file');
  });

  it('patch --dry-run of a link out of the workspace is refused as the real call is, without naming the target', () => {
    const outside = join(dirname(project.root), `outside-${process.pid}.txt`);
    writeFileSync(outside, 'kept outside\n');
    symlinkSync(outside, join(project.root, 'out-link.txt'));
    try {
      const patch = '--- a/out-link.txt\n+++ b/out-link.txt\n@@ -1 +1 @@\n-kept outside\n+changed\n';
      const dry = run(['patch', '--dry-run'], patch);
      const real = run(['patch'], patch);
      for (const r of [dry, real]) {
        expect(r.stderr).toContain('EPATHESCAPE');
        expect(r.stderr).not.toContain(outside);
        expect(r.status).toBe(real.status);
      }
      expect(readFileSync(outside, 'utf8')).toBe('kept outside\n');
    } finally {
      rmSync(join(project.root, 'out-link.txt'));
      rmSync(outside);
    }
  });

  it('history, diff, undo and rollback, all recorded', () => {
    expect(run(['replace', 'notes.txt', 'draft', 'review']).status).toBe(0);
    expect(run(['replace', 'notes.txt', 'review', 'final']).status).toBe(0);
    const history = run(['history', 'notes.txt']).stdout;
    expect(history).toMatch(/#3 replace by cli/);
    expect(run(['diff', 'notes.txt', '1', 'current']).stdout).toContain('+status: final');
    expect(run(['undo', 'notes.txt']).status).toBe(0);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe('status: review\n');
    expect(run(['rollback', 'notes.txt', '1']).status).toBe(0);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe('status: draft\n');
  });

  it('a reader that stops early ends the command quietly; a memory workspace has no audit trail to query', () => {
    project.write('big.txt', `${'x'.repeat(1023)}\n`.repeat(4096));
    const r = spawnSync('sh', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} cat --raw big.txt | head -c 5; echo`], {
      cwd: project.root,
      env: project.env,
      encoding: 'utf8',
    });
    expect(r.stdout.startsWith('xxxxx\n')).toBe(true);
    expect(r.stderr).toBe('');
    const audit = run(['--backend', 'memory', 'audit']);
    expect(audit.status).toBe(1);
    expect(audit.stderr).toMatch(/^ctxfs: EUNSUPPORTED: no audit trail/);
    // The flag --help lists (--store is its former name), and a command that then finds the trail.
    expect(audit.stderr).toContain('ctxfs --backend memory --state <file> audit');
    const state = join(project.base, 'memory-state.db');
    expect(run(['--backend', 'memory', '--state', state, 'replace', 'notes.txt', 'status', 'state']).status).toBe(0);
    const kept = run(['--backend', 'memory', '--state', state, 'audit']);
    expect(kept.status, kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(/ cli replace notes\.txt ok /);
  });

  it('snapshots, scan, doctor, audit and outline, as text', () => {
    const created = run(['snapshot', 'create', 'text-test']);
    expect(created.status).toBe(0);
    const id = /^snapshot (\S+) {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}text-test$/m.exec(created.stdout)?.[1];
    expect(id, created.stdout).toBeDefined();
    expect(run(['snapshot']).stdout).toContain(`${id}  `);
    project.write('notes.txt', 'status: scribbled\n');
    expect(run(['snapshot', 'restore', 'text-test']).stdout).toBe(`restored ${id}\n`);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).not.toBe('status: scribbled\n');
    expect(run(['snapshot', 'drop', 'text-test']).stdout).toBe(`dropped ${id}\n`);
    expect(run(['snapshot', 'list']).stdout).not.toContain(id);
    // Each snapshot command leaves its record, as every change does.
    const audited = run(['audit', '--json', '--limit', '50']);
    const ops = (JSON.parse(audited.stdout) as { records: Array<{ op: string; params?: Record<string, unknown> }> }).records.map((r) => r.op);
    for (const op of ['createSnapshot', 'restoreSnapshot', 'dropSnapshot']) expect(ops, op).toContain(op);
    expect(run(['scan']).stdout).toMatch(/^[\d,]+ files?: \d+ added, \d+ changed, \d+ removed, \d+ unchanged \(\d+ hashed\)\n$/);
    // A file touched, its content the same, is hashed and unchanged: the counts add up to the files (it was counted nowhere).
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(project.root, 'README.md'), later, later);
    const touched = /^([\d,]+) files?: 0 added, 0 changed, 0 removed, ([\d,]+) unchanged \(1 hashed\)\n$/.exec(run(['scan']).stdout);
    expect(touched).not.toBeNull();
    expect(touched?.[2]).toBe(touched?.[1]);
    expect(run(['prune']).stdout).toMatch(
      /^history: [\d,]+ versions? removed, [\d,]+ stored contents? \([\d,]+ bytes?\) freed\nreads: [\d,]+ repeated reads? folded; [\d,]+ idle sessions? kept only (its|their) last read of each file \([\d,]+ older reads? removed\)\n$/,
    );
    const zero = run(['prune', '--max-versions', '0']);
    expect(zero.status).toBe(2);
    expect(zero.stderr).toMatch(/--max-versions must be a whole number of at least 1, not 0/);
    const doctor = run(['doctor']).stdout.split('\n');
    for (const check of ['node', 'docker', 'ripgrep', 'backend', 'state store', 'audit trail']) {
      expect(
        doctor.some((l) => new RegExp(`^(ok  |warn|FAIL) ${check}`).test(l)),
        check,
      ).toBe(true);
    }
    expect(doctor.find((l) => l.includes(' backend '))).toMatch(/^ok {3}backend {6}/);
    expect(run(['outline', 'src/math.ts']).stdout).toContain('export function add');
    expect(run(['audit', '--limit', '1']).stdout).toMatch(/^#\d+ \S+Z cli \w+ .* (ok|refused|denied|error).* session [0-9a-f]{8}-[0-9a-f-]{27}\n$/);
    expect(run(['audit', 'verify']).stdout).toMatch(
      /^ok: store chain: [\d,]+ records? verif(?:y|ies) \(head #\d+ [0-9a-f]{12}\); .*\nok: trail: [\d,]+ lines? \([\d,]+ records?\) in 1 file verif(?:y|ies); /,
    );
  });

  it('--state inside the workspace is refused (exit 2): a snapshot restore deleted the open database and its audit trail', () => {
    const inside = join(project.root, 'state.db');
    const r = run(['--state', inside, 'cat', 'README.md']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`EINVAL: the state store ${inside} is inside the workspace`);
    expect(existsSync(inside)).toBe(false);
  });

  it('commands run at once each leave their record in the audit', async () => {
    const before = ctxfs(project, ['audit', '--op', 'readLines', '--json']).json<{ records: unknown[] }>().records.length;
    const runs = Array.from(
      { length: 5 },
      (_, i) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, [BIN, 'cat', 'README.md', '--lines', `${(i % 3) + 1}`], {
            cwd: project.root,
            env: project.env,
            stdio: 'ignore',
          });
          child.once('exit', resolve);
        }),
    );
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0]);
    expect(ctxfs(project, ['audit', '--op', 'readLines', '--json']).json<{ records: unknown[] }>().records).toHaveLength(before + 5);
    // The five appended to the one chain at once: it verifies, and the index agrees with it.
    const verify = ctxfs(project, ['audit', 'verify']);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  });

  it("audit verify names a changed row of the state store's chain and exits 1; mended, it verifies again", () => {
    const db = new DatabaseSync(join(project.base, '.proj.ctxfs', 'state.db'), { timeout: 10_000 });
    try {
      const row = db.prepare('SELECT id, op FROM audit ORDER BY id LIMIT 1 OFFSET 2').get() as { id: number; op: string };
      db.prepare("UPDATE audit SET op = 'nothing-happened' WHERE id = ?").run(row.id);
      const damaged = run(['audit', 'verify']);
      expect(damaged.status).toBe(1);
      expect(damaged.stdout).toMatch(new RegExp(`^damaged: store chain: 2 records verify \\(head #\\d+ [0-9a-f]{12}\\), then row #${row.id}: altered, `));
      expect(damaged.stdout).toMatch(/\nok: trail: /);
      db.prepare('UPDATE audit SET op = ? WHERE id = ?').run(row.op, row.id);
    } finally {
      db.close();
    }
    expect(run(['audit', 'verify']).status).toBe(0);
  });

  it('piped: no colour and no progress, whatever FORCE_COLOR is not set to', () => {
    for (const args of [
      ['scan'],
      ['replace', 'notes.txt', 'draft', 'done'],
      ['diff', 'notes.txt', '1', 'current'],
      ['doctor'],
      ['policy', 'show'],
      ['cat', 'x'],
    ]) {
      const r = run(args);
      expect(r.stdout.includes(ESC) || r.stderr.includes(ESC), args.join(' ')).toBe(false);
    }
    expect(run(['scan']).stderr).toBe('');
  });

  it('--session carries reads and edits over: a session that read a file, then saw it change, has its edit merged or refused', () => {
    const session = 'session-test-1';
    expect(ctxfs(project, ['--session', session, 'cat', 'src/main.ts']).status).toBe(0);
    project.write('src/main.ts', "import { add } from './math.ts';\n\nconsole.log(add(2, 2));\n");
    const r = ctxfs(project, ['--session', session, 'replace', 'src/main.ts', 'add(2, 2)', 'add(3, 3)', '--json']);
    // The change since the read is on the same line: the edit is based on a stale read and merges or refuses, saying which.
    expect(r.json()).toMatchObject({ op: 'replace' });
    const audit = ctxfs(project, ['audit', '--session', session, '--json']).json<{ records: Array<{ op: string }> }>();
    expect(audit.records.map((x) => x.op)).toEqual(['replace', 'readFile']);
  });

  it('--request-id: a command retried with the same id makes its change once; without one it makes it again', () => {
    project.write('src/tuning.ts', 'export const retries = 3;\n');
    const math = () => readFileSync(join(project.root, 'src/tuning.ts'), 'utf8');
    const before = math();
    // The replacement still matches after it applied: a blind retry would add the comment twice.
    const args = ['replace', 'src/tuning.ts', 'retries = 3;', 'retries = 3; // tuned'];
    const first = run(['--request-id', 'req-7f3a', ...args]);
    expect(first.status, first.stderr).toBe(0);
    const retry = run([...args, '--request-id', 'req-7f3a']);
    expect(retry.status, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/Already applied: request "req-7f3a" changed src\/tuning\.ts/);
    expect(math()).toBe(before.replace('retries = 3;', 'retries = 3; // tuned'));
    expect(ctxfs(project, args, { env: { CTXFS_REQUEST_ID: 'req-7f3a' } }).stdout).toMatch(/Already applied/);
    expect(run(args).status).toBe(0);
    expect(math()).toBe(before.replace('retries = 3;', 'retries = 3; // tuned // tuned'));
  });

  it('--request-id sent again with another change of the same file is refused, naming the id; nothing written', () => {
    project.write('src/count.ts', 'export const count = 0;\n');
    const count = () => readFileSync(join(project.root, 'src/count.ts'), 'utf8');
    expect(run(['--request-id', 'req-9c1d', 'replace', 'src/count.ts', 'count = 0', 'count = 1']).status).toBe(0);
    const reused = run(['--request-id', 'req-9c1d', 'replace', 'src/count.ts', 'count = 1', 'count = 42']);
    expect(reused.status).not.toBe(0);
    expect(`${reused.stdout}${reused.stderr}`).toMatch(
      /EINVAL.*The request id "req-9c1d" was already used by another call .*give every new call an id of its own/s,
    );
    expect(count()).toBe('export const count = 1;\n');
  });
});

describe('ctxfs on a backend that is not there', () => {
  const project = useProject();

  it('exits 5 with what to do, for every kind', () => {
    const cases = [
      ['-C', join(project.base, 'no-such-dir'), 'ls'],
      ['--backend', 'docker:ctxfs-no-such-container', 'ls'],
      ['--backend', 'docker-image:ctxfs-no-such-image:never', 'cat', 'a.txt'],
      ['-C', join(project.base, 'no-such-dir'), 'cat', '--raw', 'a.txt'],
    ];
    for (const args of cases) {
      const r = ctxfs(project, args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(5);
      expect(r.stderr).toMatch(/^ctxfs: EUNAVAILABLE: cannot open /);
    }
    const doctor = ctxfs(project, ['-C', join(project.base, 'no-such-dir'), 'doctor', '--json']);
    expect(doctor.status).toBe(5);
    expect(doctor.json()).toMatchObject({ ok: false, checks: expect.arrayContaining([expect.objectContaining({ name: 'backend', ok: false })]) });
    expect(ctxfs(project, ['--backend', 'ftp:x', 'ls']).status).toBe(2);
    // A bad --workdir is refused before any container is made for the image.
    const workdir = ctxfs(project, ['--backend', 'docker-image:ctxfs-no-such-image:never', '--workdir', 'relative', 'ls']);
    expect(workdir.status).toBe(2);
    expect(workdir.stderr).toContain('--workdir relative');
  });
});

describe('--no-policy-files and a [cli] table that would fail the command', () => {
  const project = useProject(FILES, (p) => p.write('.ctxfs/config.toml', '[cli]\nbackend = "docker:ctxfs-no-such-container"\n'));

  it('reads no config file at all: the command runs on the host', () => {
    expect(ctxfs(project, ['cat', '--raw', 'src/math.ts']).status).toBe(5);
    const r = ctxfs(project, ['--no-policy-files', 'cat', '--raw', 'src/math.ts']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('export function add');
    // After `--`, "--json" is a word to search for, not the option.
    const g = ctxfs(project, ['--no-policy-files', 'grep', '-F', '--', '--json']);
    expect(g.stdout.startsWith('{')).toBe(false);
  });
});

describe('ctxfs under a policy that denies', () => {
  const project = useProject(FILES, (p) =>
    p.write(
      '.ctxfs/config.toml',
      '[policy]\nread_only = ["README.md"]\n\n[[policy.rules]]\neffect = "deny"\npaths = ["notes.txt"]\nops = ["read"]\nreason = "notes are private"\n',
    ),
  );

  it('exits 4 and changes nothing; policy check explains it; --no-policy-files reads no file', () => {
    const write = ctxfs(project, ['replace', 'README.md', 'Demo', 'Demo!']);
    expect(write.status).toBe(4);
    expect(write.stderr).toContain('read-only');
    expect(readFileSync(join(project.root, 'README.md'), 'utf8')).toContain('# Demo\n');
    const patch = ctxfs(project, ['patch', '--dry-run'], { input: '--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# Demo\n+# Demo!\n' });
    expect(patch.status).toBe(4);
    const read = ctxfs(project, ['cat', 'notes.txt']);
    expect(read.status).toBe(4);
    expect(read.stderr).toContain('notes are private');
    // The raw bytes are a read like any other: the policy decides them and the audit records them.
    const raw = ctxfs(project, ['cat', '--raw', 'notes.txt']);
    expect(raw.status).toBe(4);
    expect(raw.stdout).toBe('');
    expect(raw.stderr).toMatch(/^ctxfs: EDENIED: notes are private/);
    expect(ctxfs(project, ['cat', '--raw', '.env']).status).toBe(4);
    expect(ctxfs(project, ['--no-policy-files', 'cat', '--raw', 'notes.txt']).status).toBe(0);
    const check = ctxfs(project, ['policy', 'check', 'read', 'notes.txt']);
    expect(check.status).toBe(4);
    expect(check.stdout).toMatch(/^deny: read notes.txt by cli\n {2}because notes are private/);
    expect(ctxfs(project, ['policy', 'check', 'write', 'src/math.ts']).status).toBe(0);
    expect(ctxfs(project, ['policy', 'show']).stdout).toMatch(/from\s+defaults < .*\.ctxfs\/config\.toml/);
    expect(ctxfs(project, ['--no-policy-files', 'cat', 'notes.txt']).status).toBe(0);
  });

  it('a snapshot restore under a policy that guards paths is put to a person: refused without a terminal, recorded', () => {
    expect(ctxfs(project, ['snapshot', 'create', 'guarded']).status).toBe(0);
    project.write('notes.txt', 'status: rewritten\n');
    const restore = ctxfs(project, ['snapshot', 'restore', 'guarded']);
    expect(restore.status).toBe(4);
    expect(restore.stderr).toMatch(/^ctxfs: EDENIED: .*a restore may change any file, and the policy guards some from changes/);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe('status: rewritten\n');
    expect(ctxfs(project, ['audit', '--json']).stdout).toMatch(/"op": ?"restoreSnapshot"/);
  });
});

describe('ctxfs snapshot restore with the default policy', () => {
  const project = useProject();

  it('restores every file but the workspace policy made since, which it leaves as it is', () => {
    expect(ctxfs(project, ['snapshot', 'create', 'before-policy']).status).toBe(0);
    project.write('notes.txt', 'status: rewritten\n');
    project.write('.ctxfs/config.toml', '[policy]\nmode = "auto"\n');
    const restore = ctxfs(project, ['snapshot', 'restore', 'before-policy']);
    expect(restore.status, restore.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe(FILES['notes.txt']);
    expect(readFileSync(join(project.root, '.ctxfs', 'config.toml'), 'utf8')).toBe('[policy]\nmode = "auto"\n');
  });
});

describe('ctxfs with a [cli] table in the config files', () => {
  const project = useProject(FILES, (p) => {
    const user = join(p.base, 'config', 'ctxfs', 'config.toml');
    mkdirSync(dirname(user), { recursive: true });
    writeFileSync(user, '[cli]\nagent = "llm:from-user"\nprofile = "small"\n');
  });
  const author = (): string | undefined =>
    ctxfs(project, ['history', 'notes.txt', '--json']).json<{ versions: Array<{ author: string }> }>().versions[0]?.author;

  it("takes the user's settings, the project's over them, and a flag or variable over both", () => {
    expect(ctxfs(project, ['replace', 'notes.txt', 'draft', 'one']).status).toBe(0);
    expect(author()).toBe('llm:from-user');
    project.write('.ctxfs/config.toml', '[cli]\nagent = "llm:from-project"\n\n[policy]\nmode = "auto"\n');
    expect(ctxfs(project, ['replace', 'notes.txt', 'one', 'two']).status).toBe(0);
    expect(author()).toBe('llm:from-project');
    expect(ctxfs(project, ['replace', 'notes.txt', 'two', 'three'], { env: { CTXFS_AGENT: 'llm:from-env' } }).status).toBe(0);
    expect(author()).toBe('llm:from-env');
    expect(ctxfs(project, ['--agent', 'llm:from-flag', 'replace', 'notes.txt', 'three', 'four'], { env: { CTXFS_AGENT: 'llm:from-env' } }).status).toBe(0);
    expect(author()).toBe('llm:from-flag');
    // The user's profile still holds: a small model's budgets.
    expect(ctxfs(project, ['cat', 'README.md', '--json']).json<{ tokens: number }>().tokens).toBeGreaterThan(0);
    const listed = ctxfs(project, ['--backend', 'memory', 'ls', '--json']);
    expect(listed.status).toBe(0);
  });

  it('refuses a key it does not know, naming the file (exit 2)', () => {
    project.write('.ctxfs/config.toml', '[cli]\nbakend = "memory"\n');
    const r = ctxfs(project, ['ls']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/config\.toml: \[cli\] has an unknown key "bakend"/);
    project.write('.ctxfs/config.toml', '[cli]\nbackend = "docker:ctxfs-no-such-container"\n');
    expect(ctxfs(project, ['ls']).status).toBe(5);
    expect(ctxfs(project, ['--backend', 'host', 'ls']).status).toBe(0);
  });
});
