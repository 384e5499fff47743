/**
 * What the image offers. The helper needs only POSIX `sh` and a handful of
 * tools in their busybox form; the probe runs once per session start and
 * refuses, with the list of what is missing, an image that cannot serve.
 *
 * @module
 */

import { shellQuote } from './shell-quote.ts';

/** Tools the helper script calls (all busybox applets). */
export const REQUIRED_TOOLS = ['stat', 'readlink', 'dd', 'cat', 'mkdir', 'rmdir', 'rm', 'mv', 'cp', 'ln', 'chmod', 'chown'] as const;

/** Tools that enable optional fast paths. */
export const OPTIONAL_TOOLS = ['grep', 'tar', 'find'] as const;

/** The result of a probe. */
export interface ImageProbe {
  uid: number;
  gid: number;
  /** The workspace root with symlinks resolved. */
  realRoot: string;
  missing: string[];
  optional: Set<string>;
  /** Filesystem type of the mount holding the root (`overlay`, `tmpfs`, ...). */
  fstype: string;
}

/** The probe request (one line of shell) for `root`; `create` makes the root first. */
export function probeCommand(root: string, create: boolean): string {
  const all = [...REQUIRED_TOOLS, ...OPTIONAL_TOOLS].join(' ');
  return [
    create ? `mkdir -p ${shellQuote(root)} 2>/dev/null` : ':',
    `RR=$(readlink -f ${shellQuote(root)} 2>/dev/null) || RR=${shellQuote(root)}`,
    `printf 'uid %s\\ngid %s\\nroot %s\\n' "$(id -u 2>/dev/null || echo 0)" "$(id -g 2>/dev/null || echo 0)" "$RR"`,
    `for t in ${all}; do command -v "$t" >/dev/null 2>&1 && printf 'has %s\\n' "$t"; done`,
    `stat -c %s / >/dev/null 2>&1 && printf 'has stat-c\\n'`,
    `[ -d ${shellQuote(root)} ] && printf 'has root\\n'`,
    // The filesystem type under the root: the archive endpoints do not see tmpfs mounts.
    `b=; f=; while read -r d m t o; do case "$RR/" in "\${m%/}"/*) if [ \${#m} -ge \${#b} ]; then b=$m; f=$t; fi ;; esac; done < /proc/mounts 2>/dev/null; printf 'fstype %s\\n' "$f"`,
    ':',
  ].join('; ');
}

/** Parses the probe's output. */
export function parseProbe(output: string): ImageProbe & { rootExists: boolean } {
  const has = new Set<string>();
  let uid = 0;
  let gid = 0;
  let realRoot = '';
  let fstype = '';
  for (const line of output.split('\n')) {
    const [key, ...rest] = line.split(' ');
    const value = rest.join(' ');
    if (key === 'uid') uid = Number(value) || 0;
    else if (key === 'gid') gid = Number(value) || 0;
    else if (key === 'root') realRoot = value;
    else if (key === 'has') has.add(value);
    else if (key === 'fstype') fstype = value;
  }
  const missing: string[] = REQUIRED_TOOLS.filter((t) => !has.has(t));
  if (has.has('stat') && !has.has('stat-c')) missing.push('stat -c');
  const optional = new Set<string>(OPTIONAL_TOOLS.filter((t) => has.has(t)));
  return { uid, gid, realRoot, missing, optional, fstype, rootExists: has.has('root') };
}
