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

/**
 * The probe request (one line of shell) for `root`; `create` makes the root
 * first. It runs once per open, so it starts as few processes as it can
 * (each costs milliseconds on a loaded engine, and a command substitution
 * forks even for a builtin): uid and gid come from /proc/self/status (`id`
 * only without /proc), the real root from `cd -P` and `$PWD` (`readlink -f` when it cannot be entered), `mkdir` runs
 * only when the root is missing; `stat -c` support is the one process always
 * started. The loop's working directory is `/` again afterwards, as every
 * request leaves it.
 */
export function probeCommand(root: string, create: boolean): string {
  const all = [...REQUIRED_TOOLS, ...OPTIONAL_TOOLS].join(' ');
  const r = shellQuote(root);
  return [
    create ? `[ -d ${r} ] || mkdir -p ${r} 2>/dev/null` : ':',
    `if cd -P ${r} 2>/dev/null; then RR=$PWD; cd /; else RR=$(readlink -f ${r} 2>/dev/null) || RR=${r}; fi`,
    // The effective ids (the second field), as `id -u` reports them.
    `pu=; pg=; while read -r k a e b; do case "$k" in Uid:) pu=$e ;; Gid:) pg=$e ;; esac; done < /proc/self/status 2>/dev/null`,
    `[ -n "$pu" ] || pu=$(id -u 2>/dev/null || echo 0)`,
    `[ -n "$pg" ] || pg=$(id -g 2>/dev/null || echo 0)`,
    `printf 'uid %s\\ngid %s\\nroot %s\\n' "$pu" "$pg" "$RR"`,
    `for t in ${all}; do command -v "$t" >/dev/null 2>&1 && printf 'has %s\\n' "$t"; done`,
    `stat -c %s / >/dev/null 2>&1 && printf 'has stat-c\\n'`,
    `[ -d ${r} ] && printf 'has root\\n'`,
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
