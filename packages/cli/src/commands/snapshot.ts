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

import { type Filesystem, isFsError, type Snapshot } from '@ctxfs/core';
import { commandPrefix } from '../call-text.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import type { GlobalOptions } from '../options.ts';
import { out, outJson, paint } from '../output.ts';
import type { Action } from '../program.ts';
import type { SnapshotJson } from '../schemas.ts';
import { withContext, withFilesystem } from '../workspace.ts';
import { effectivePolicy } from './policy.ts';

function json(s: Snapshot): SnapshotJson {
  return { id: s.id, created_at: s.createdAt.toISOString(), tag: s.tag, ref: s.ref };
}

function line(s: Snapshot): string {
  return `${paint('bold', s.id)}  ${s.createdAt.toISOString()}${s.tag === undefined ? '' : `  ${paint('cyan', s.tag)}`}`;
}

/**
 * Runs a snapshot command on a container that may be stopped. A stopped
 * container is attached all the same (its snapshots are listed from the
 * user's state directory), so what fails is the first call into it: the
 * workspace's refusal (see `withContext`) is prefixed with the command, and
 * says `list` still works.
 */
async function whileRunning<T>(g: GlobalOptions, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const down = err instanceof CliError ? err : isFsError(err) ? { code: err.code, message: err.reason, hint: err.hint } : undefined;
    if (down?.code !== 'EUNAVAILABLE') throw err;
    const listWorks = down.message.includes(' is not running') ? `; ${await commandPrefix(g)} snapshot list works while it is stopped` : '';
    throw new CliError('EUNAVAILABLE', `cannot ${what}: ${down.message}`, `${down.hint ?? 'start the container and retry'}${listWorks}`);
  }
}

/**
 * A tag is a name to type again: one that is empty or blank, or has a line
 * break or an escape sequence, is refused. An empty one would be named by an
 * empty argument (`snapshot restore "$SNAP"` with SNAP unset), and a control
 * character breaks `snapshot list`'s one line per snapshot (or writes to the
 * terminal).
 */
async function checkTag(g: GlobalOptions, tag: string | undefined): Promise<void> {
  if (tag === undefined) return;
  const why = tag.trim() === '' ? 'is empty' : /\p{Cc}/u.test(tag) ? 'has a control character (a line break, a tab or an escape)' : undefined;
  if (why === undefined) return;
  throw new CliError(
    'EINVAL',
    `snapshot create: the tag ${JSON.stringify(tag)} ${why}`,
    `name it with words you can type again (${await commandPrefix(g)} snapshot create before-refactor), or leave the tag out`,
  );
}

/** `ctxfs snapshot create [tag]`: recorded in the audit (it changes no file, so the policy's path rules do not apply). */
export const create: Action = async (g, [tag]) => {
  await checkTag(g, tag);
  return whileRunning(g, 'take a snapshot', () =>
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
};

/** `ctxfs snapshot list`. */
export const list: Action = (g) =>
  withFilesystem(g, async (fs) => {
    const all = await fs.listSnapshots();
    if (g.json) await outJson({ snapshots: all.map(json) });
    else await out(all.length === 0 ? 'no snapshots' : all.map(line).join('\n'));
    return EXIT.ok;
  });

/** The snapshot `name` names: its id, else the newest with that tag; an empty name is refused. */
async function named(g: GlobalOptions, fs: Filesystem, name: string): Promise<string> {
  // An empty argument (an unset variable) names no snapshot, even one an older ctxfs let be tagged ''.
  if (name.trim() === '') throw new CliError('EINVAL', 'an empty id or tag names no snapshot', `list them with ${await commandPrefix(g)} snapshot list`);
  const all = await fs.listSnapshots();
  const id = (all.find((s) => s.id === name) ?? all.findLast((s) => s.tag === name))?.id;
  if (id === undefined) throw new CliError('ENOSNAPSHOT', `no snapshot has the id or tag '${name}'`, `list them with ${await commandPrefix(g)} snapshot list`);
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
  whileRunning(g, `restore snapshot '${name}'`, () =>
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
          const id = await named(g, fs, name);
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
  whileRunning(g, `drop snapshot '${name}'`, () =>
    // A drop needs nothing of a stopped container but the policy that decides it.
    withContext(
      g,
      async ({ ctx, fs }) => {
        const call = { op: 'dropSnapshot', opClass: 'history', paths: [], params: { snapshot: name } } as const;
        const id = await ctx.guarded(
          call,
          async () => {
            const id = await named(g, fs, name);
            await fs.dropSnapshot(id);
            return id;
          },
          () => ({ result: 'ok' }),
        );
        await (g.json ? outJson({ id, action: 'dropped' }) : out(`dropped ${id}`));
        return EXIT.ok;
      },
      'policy',
    ),
  );
