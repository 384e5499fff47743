import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostFilesystem, type HostFilesystemOptions } from '@ctxfs/host';

/** A fresh temp workspace and a state dir next to it (outside the root). */
export function tempWorkspace(prefix = 'ctxfs-host-'): { base: string; root: string; state: string; remove(): void } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const root = path.join(base, 'root');
  const state = path.join(base, 'state');
  fs.mkdirSync(root);
  return { base, root, state, remove: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/** Seeds files (text or bytes), empty dirs and symbolic links (path → target) with node:fs. */
export function seed(
  root: string,
  files: Readonly<Record<string, string | Uint8Array>> = {},
  dirs: readonly string[] = [],
  links: Readonly<Record<string, string>> = {},
): void {
  for (const d of dirs) fs.mkdirSync(path.join(root, d), { recursive: true });
  for (const [p, content] of Object.entries(files)) {
    const abs = path.join(root, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
  for (const [p, target] of Object.entries(links)) {
    const abs = path.join(root, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.symlinkSync(target, abs);
  }
}

const bases = new WeakMap<HostFilesystem, string>();

/** Opens a seeded workspace; `removeWorkspace` deletes it. */
export async function openSeeded(
  init: {
    files?: Readonly<Record<string, string | Uint8Array>>;
    dirs?: readonly string[];
    links?: Readonly<Record<string, string>>;
    readOnly?: boolean;
  },
  options: Partial<HostFilesystemOptions> = {},
): Promise<HostFilesystem> {
  const ws = tempWorkspace();
  seed(ws.root, init.files, init.dirs, init.links);
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, readOnly: init.readOnly, ...options });
  bases.set(hfs, ws.base);
  return hfs;
}

export async function removeWorkspace(hfs: unknown): Promise<void> {
  const base = bases.get(hfs as HostFilesystem);
  if (base) fs.rmSync(base, { recursive: true, force: true });
}
