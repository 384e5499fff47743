/**
 * `ctxfs doctor`: whether this machine can run ctxfs on the chosen backend —
 * Node's version, the backend reachable, the Docker engine, ripgrep, the
 * state store — each with what was found. Exit 0 when every required check
 * passes, 5 when the backend cannot be reached, 1 for any other failure.
 *
 * @module
 */

import { CliError, EXIT } from '../exit-codes.ts';
import { out, outJson, paint } from '../output.ts';
import type { Action } from '../program.ts';
import type { DoctorJson } from '../schemas.ts';
import { backendOf } from '../workspace.ts';

type Check = DoctorJson['checks'][number];

/** The oldest Node ctxfs supports (its engines field). */
const NODE_MIN = [22, 18] as const;

function nodeCheck(): Check {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  return { name: 'node', ok, required: true, detail: `${process.version}${ok ? '' : `; ctxfs needs ${NODE_MIN.join('.')} or later`}` };
}

async function dockerCheck(required: boolean): Promise<Check> {
  try {
    const { connectEngine, engineNameOf } = await import('@ctxfs/container');
    const v = await connectEngine().version();
    // The check keeps its name (the Docker Engine API, which Podman serves too); its detail names the engine.
    const kind = engineNameOf(v) === 'podman' ? 'Podman' : 'Docker';
    return { name: 'docker', ok: true, required, detail: `${kind} engine ${v.Version ?? '?'} (Docker API ${v.ApiVersion ?? '?'})` };
  } catch (err) {
    return { name: 'docker', ok: false, required, detail: `no engine: ${(err as Error).message}` };
  }
}

async function ripgrepCheck(): Promise<Check> {
  const { findRipgrep } = await import('@ctxfs/host');
  const rg = findRipgrep();
  return { name: 'ripgrep', ok: rg !== undefined, required: false, detail: rg ?? 'not found: host grep runs in JavaScript (slower on large trees)' };
}

/** `ctxfs doctor`. */
export const doctor: Action = async (g) => {
  const spec = backendOf(g);
  const checks: Check[] = [nodeCheck()];
  const docker = spec.kind === 'container' || spec.kind === 'image';
  checks.push(await dockerCheck(docker));
  checks.push(await ripgrepCheck());
  let backendOk = false;
  try {
    // The state store is opened with the context layer, as every command opens it.
    const { withContext } = await import('../workspace.ts');
    await withContext(g, async ({ fs, ctx, trail, trailMissing }) => {
      const top = await fs.list('');
      backendOk = true;
      checks.push({
        name: 'backend',
        ok: true,
        required: true,
        detail: `${fs.root}: ${top.length} ${top.length === 1 ? 'entry' : 'entries'} at the top${fs.readOnly ? ', read-only' : ''}`,
      });
      checks.push({
        name: 'state store',
        ok: true,
        required: true,
        detail: `${ctx.store.location} (${ctx.store.dialect}, schema ${await ctx.store.schemaVersion()})`,
      });
      checks.push({ name: 'audit trail', ok: trail !== undefined, required: false, detail: trail?.dir ?? trailMissing ?? 'none' });
    });
  } catch (err) {
    // The CLI's own refusals (a stopped container) keep the way out apart from what happened: a finding says both.
    const detail = err instanceof CliError && err.hint !== undefined ? `${err.message}; ${err.hint}` : (err as Error).message;
    checks.push({ name: backendOk ? 'state store' : 'backend', ok: false, required: true, detail });
  }
  const ok = checks.every((c) => c.ok || !c.required);
  if (g.json) await outJson({ ok, checks } satisfies DoctorJson);
  else {
    const mark = (c: Check) => (c.ok ? paint('green', 'ok  ') : c.required ? paint('red', 'FAIL') : paint('yellow', 'warn'));
    await out(checks.map((c) => `${mark(c)} ${c.name.padEnd(12)} ${c.detail}`).join('\n'));
  }
  return ok ? EXIT.ok : backendOk ? EXIT.refused : EXIT.unavailable;
};
