/**
 * How a backend plugs into the conformance suite.
 *
 * @module
 */

import type { Capabilities, Filesystem } from '@ctxfs/core';

/** Initial state of a filesystem the suite asks for. */
export interface FixtureInit {
  /** Files to create before the test: path → text or bytes (parents implied). */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** Empty directories to create. */
  dirs?: readonly string[];
  /**
   * Symbolic links to create: path → target, as `ln -s target path` makes
   * them (a relative target is read from the link's own directory). Asked
   * for only of a backend that declares `symlinks`.
   */
  links?: Readonly<Record<string, string>>;
  /** Open the filesystem read-only (after seeding). */
  readOnly?: boolean;
}

/**
 * A backend under test. `create` returns a fresh filesystem per test, seeded
 * as asked; the suite closes it, then calls `cleanup` if given.
 *
 * @example
 * ```ts
 * describeFilesystemConformance({
 *   name: 'memory',
 *   create: async ({ files, dirs, readOnly }) => seedThenOpen(files, dirs, readOnly),
 * });
 * ```
 */
export interface ConformanceTarget {
  /** Name shown in the test report. */
  name: string;
  /**
   * What the backend declares it can do. Sections for a declared capability
   * run in full; for an undeclared one the suite checks that the operations
   * are refused with `EUNSUPPORTED` instead, so nothing is skipped silently.
   * The suite also checks that `fs.capabilities` says the same.
   */
  capabilities: Capabilities;
  create(init: FixtureInit): Promise<Filesystem>;
  /**
   * Removes the root of `fs` from outside it (`rm -rf` of the directory, as
   * a person or another process would), for the "root removed" section. A
   * backend whose root nothing outside can remove (memory) leaves it out,
   * and the section says so in the report.
   */
  removeRoot?(fs: Filesystem): Promise<void>;
  /** Called after each test with the filesystem `create` returned (already closed). */
  cleanup?(fs: Filesystem): Promise<void>;
  /** Fuzz runs per operation; default 10,000 paths in all (see the fuzz section). */
  fuzzRuns?: number;
  /** Per-test timeout in ms for slow backends (containers). */
  timeout?: number;
  /** Run large-file tests up to this many bytes; default 8 MiB. */
  largeFileBytes?: number;
}
