/**
 * `ctxfs snapshot`: the Filesystem protocol's snapshots, on whatever store
 * the backend keeps them in (git objects beside a host workspace, the
 * container's, memory's own — which lives only as long as the command).
 * A snapshot is named by its id or its tag.
 *
 * @module
 */

import type { Filesystem, Snapshot } from '@ctxfs/core';
import { EXIT } from '../exit-codes.ts';
import { out, outJson, paint } from '../output.ts';
import type { Action } from '../program.ts';
import type { SnapshotJson } from '../schemas.ts';
import { withFilesystem } from '../workspace.ts';

function json(s: Snapshot): SnapshotJson {
  return { id: s.id, created_at: s.createdAt.toISOString(), tag: s.tag, ref: s.ref };
}

function line(s: Snapshot): string {
  return `${paint('bold', s.id)}  ${s.createdAt.toISOString()}${s.tag === undefined ? '' : `  ${paint('cyan', s.tag)}`}`;
}

/** `ctxfs snapshot create [tag]`. */
export const create: Action = (g, [tag]) =>
  withFilesystem(g, async (fs) => {
    const s = await fs.snapshot(tag);
    await (g.json ? outJson(json(s)) : out(`snapshot ${line(s)}`));
    return EXIT.ok;
  });

/** `ctxfs snapshot list`. */
export const list: Action = (g) =>
  withFilesystem(g, async (fs) => {
    const all = await fs.listSnapshots();
    if (g.json) await outJson({ snapshots: all.map(json) });
    else await out(all.length === 0 ? 'no snapshots' : all.map(line).join('\n'));
    return EXIT.ok;
  });

/** The snapshot `name` names: its id, else the newest with that tag; the id itself when none does (the backend says it is unknown). */
async function named(fs: Filesystem, name: string): Promise<string> {
  const all = await fs.listSnapshots();
  return (all.find((s) => s.id === name) ?? all.findLast((s) => s.tag === name))?.id ?? name;
}

/** `ctxfs snapshot restore <id|tag>`. */
export const restore: Action = (g, [name = '']) =>
  withFilesystem(g, async (fs) => {
    const id = await named(fs, name);
    await fs.restore(id);
    await (g.json ? outJson({ id, action: 'restored' }) : out(`restored ${id}`));
    return EXIT.ok;
  });

/** `ctxfs snapshot drop <id|tag>`. */
export const drop: Action = (g, [name = '']) =>
  withFilesystem(g, async (fs) => {
    const id = await named(fs, name);
    await fs.dropSnapshot(id);
    await (g.json ? outJson({ id, action: 'dropped' }) : out(`dropped ${id}`));
    return EXIT.ok;
  });
