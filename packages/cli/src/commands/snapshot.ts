/**
 * `ctxfs snapshot`: the Filesystem protocol's snapshots, on whatever store
 * the backend keeps them in: git objects beside a host workspace; for an
 * attached container, tar archives under the user's state directory (a new
 * container from an image, and memory, keep theirs only as long as the
 * command).
 * A snapshot is named by its id or its tag.
 *
 * @module
 */

import { type Filesystem, type FsError, isFsError, type Snapshot } from '@ctxfs/core';
import { CliError, EXIT } from '../exit-codes.ts';
import type { GlobalOptions } from '../options.ts';
import { out, outJson, paint } from '../output.ts';
import type { Action } from '../program.ts';
import type { SnapshotJson } from '../schemas.ts';
import { backendOf, withContext, withFilesystem } from '../workspace.ts';
import { effectivePolicy } from './policy.ts';

function json(s: Snapshot): SnapshotJson {
  return { id: s.id, created_at: s.createdAt.toISOString(), tag: s.tag, ref: s.ref };
}

function line(s: Snapshot): string {
  return `${paint('bold', s.id)}  ${s.createdAt.toISOString()}${s.tag === undefined ? '' : `  ${paint('cyan', s.tag)}`}`;
}

/**
 * Runs a snapshot command that needs the container running. A stopped
 * container is attached all the same (its snapshots are listed from the
 * user's state directory), so what fails is the first call into it, often
 * the context layer's read of the workspace's policy: the error names the
 * command instead, and says `list` still works.
 */
async function whileRunning<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!isFsError(err, 'EUNAVAILABLE')) throw err;
    throw new CliError('EUNAVAILABLE', `cannot ${what}: ${err.reason ?? err.message}`, `${err.hint ?? 'start the container and retry'}${listWorks(err)}`);
  }
}

function listWorks(err: FsError): string {
  return err.reason?.includes(' is not running') ? '; ctxfs snapshot list works while it is stopped' : '';
}

/**
 * Runs a drop, which, unlike a snapshot or a restore, needs nothing of a
 * stopped container but the policy that decides it: the workspace's own is
 * a file inside it. Deciding without that file would let a drop the project
 * forbids go through, so it is refused; the refusal says so, and gives both
 * ways on: start the container, or decide by the built-in policy knowingly.
 */
async function policyReadable<T>(g: GlobalOptions, name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!isFsError(err, 'EUNAVAILABLE') || !g.policyFiles) throw err;
    const { PROJECT_CONFIG_PATH } = await import('@ctxfs/context');
    if (err.path !== PROJECT_CONFIG_PATH) throw err;
    const spec = backendOf(g);
    const start =
      spec.kind === 'container' && err.reason?.includes(' is not running') ? `start the container (docker start ${spec.container}) and retry` : err.hint;
    throw new CliError(
      'EUNAVAILABLE',
      `cannot drop snapshot '${name}': the workspace's policy (${PROJECT_CONFIG_PATH}) cannot be read, because ${err.reason ?? err.message}`,
      `${start ?? 'start the container and retry'}, or pass --no-policy-files to decide by the built-in policy alone (neither your config.toml nor the project's is read)${listWorks(err)}`,
    );
  }
}

/** `ctxfs snapshot create [tag]`: recorded in the audit (it changes no file, so the policy's path rules do not apply). */
export const create: Action = (g, [tag]) =>
  whileRunning('take a snapshot', () =>
    withContext(g, async ({ ctx, fs }) => {
      const call = { op: 'createSnapshot', opClass: 'history', paths: [], params: tag === undefined ? {} : { tag } } as const;
      const s = await ctx.guarded(
        call,
        () => fs.snapshot(tag),
        () => ({ result: 'ok' }),
      );
      await (g.json ? outJson(json(s)) : out(`snapshot ${line(s)}`));
      return EXIT.ok;
    }),
  );

/** `ctxfs snapshot list`. */
export const list: Action = (g) =>
  withFilesystem(g, async (fs) => {
    const all = await fs.listSnapshots();
    if (g.json) await outJson({ snapshots: all.map(json) });
    else await out(all.length === 0 ? 'no snapshots' : all.map(line).join('\n'));
    return EXIT.ok;
  });

/** The snapshot `name` names: its id, else the newest with that tag. */
async function named(fs: Filesystem, name: string): Promise<string> {
  const all = await fs.listSnapshots();
  const id = (all.find((s) => s.id === name) ?? all.findLast((s) => s.tag === name))?.id;
  if (id === undefined) throw new CliError('ENOSNAPSHOT', `no snapshot has the id or tag '${name}'`, 'list them with ctxfs snapshot list');
  return id;
}

/** The files of the workspace's configuration directory (`.ctxfs/`). */
async function configPaths(fs: Filesystem, dir: string): Promise<string[]> {
  const paths: string[] = [];
  if (!(await fs.exists(dir))) return paths;
  for await (const batch of fs.walk(dir)) for (const e of batch) if (e.kind === 'file') paths.push(e.path);
  return paths;
}

/**
 * `ctxfs snapshot restore <id|tag>`: every file as the snapshot has it,
 * except the workspace's policy in `.ctxfs/`, which a restore leaves as it
 * is (a person changes it by hand); decided by `decideRestore` of `@ctxfs/context` and
 * recorded in the audit like any other change.
 */
export const restore: Action = (g, [name = '']) =>
  whileRunning(`restore snapshot '${name}'`, () =>
    withContext(g, async ({ ctx, fs }) => {
      const { decideRestore, PROJECT_CONFIG_DIR } = await import('@ctxfs/context');
      const decision = decideRestore(await effectivePolicy(g, fs));
      const call = {
        op: 'restoreSnapshot',
        opClass: 'write',
        paths: [],
        params: { snapshot: name },
        decision: { decision, subject: `restore snapshot ${name}` },
      } as const;
      const id = await ctx.guarded(
        call,
        async () => {
          const id = await named(fs, name);
          const kept = new Map<string, Uint8Array>();
          for (const path of await configPaths(fs, PROJECT_CONFIG_DIR)) kept.set(path, await fs.readBytes(path));
          await fs.restore(id);
          for (const path of await configPaths(fs, PROJECT_CONFIG_DIR)) if (!kept.has(path)) await fs.delete(path);
          for (const [path, bytes] of kept) await fs.writeBytes(path, bytes, { createParents: true });
          return id;
        },
        () => ({ result: 'ok' }),
      );
      await (g.json ? outJson({ id, action: 'restored' }) : out(`restored ${id}`));
      return EXIT.ok;
    }),
  );

/** `ctxfs snapshot drop <id|tag>`: recorded in the audit, as the end of a recovery point. */
export const drop: Action = (g, [name = '']) =>
  whileRunning(`drop snapshot '${name}'`, () =>
    policyReadable(g, name, () =>
      withContext(g, async ({ ctx, fs }) => {
        const call = { op: 'dropSnapshot', opClass: 'history', paths: [], params: { snapshot: name } } as const;
        const id = await ctx.guarded(
          call,
          async () => {
            const id = await named(fs, name);
            await fs.dropSnapshot(id);
            return id;
          },
          () => ({ result: 'ok' }),
        );
        await (g.json ? outJson({ id, action: 'dropped' }) : out(`dropped ${id}`));
        return EXIT.ok;
      }),
    ),
  );
