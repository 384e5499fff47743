/**
 * The ordered list of conformance sections. Each section is a function that
 * registers its tests with vitest for one backend.
 *
 * @module
 */

import type { SuiteContext } from '../context.ts';
import { capabilitiesSection } from './capabilities.ts';
import { compareAndSwapSection } from './compare-and-swap.ts';
import { concurrencySection } from './concurrency.ts';
import { convenienceSection } from './convenience.ts';
import { copySection } from './copy.ts';
import { deleteSection } from './delete.ts';
import { digestSection } from './digest.ts';
import { fuzzSection } from './fuzz.ts';
import { globSection } from './glob.ts';
import { grepSection } from './grep.ts';
import { grepExcludeSection } from './grep-exclude.ts';
import { lifecycleSection } from './lifecycle.ts';
import { limitsSection } from './limits.ts';
import { linksSection } from './links.ts';
import { metadataSection } from './metadata.ts';
import { mkdirSection } from './mkdir.ts';
import { pathsSection } from './paths.ts';
import { readOnlySection } from './read-only.ts';
import { readWithStatSection } from './read-with-stat.ts';
import { renameSection } from './rename.ts';
import { rootRemovedSection } from './root-removed.ts';
import { snapshotsSection } from './snapshots.ts';
import { streamingLifetimeSection } from './streaming-lifetime.ts';
import { streamingReadSection } from './streaming-read.ts';
import { streamingWriteSection } from './streaming-write.ts';
import { textSection } from './text.ts';
import { walkSection } from './walk.ts';
import { watchSection } from './watch.ts';

/** A section registers tests for one area of the protocol. */
export type Section = (ctx: SuiteContext) => void;

/** Every section, in report order. */
export const SECTIONS: ReadonlyArray<readonly [string, Section]> = [
  ['capabilities', capabilitiesSection],
  ['paths and security', pathsSection],
  ['hostile path fuzz', fuzzSection],
  ['exists, stat, list', metadataSection],
  ['symbolic links', linksSection],
  ['streaming reads', streamingReadSection],
  ['streaming chunk lifetime', streamingLifetimeSection],
  ['streaming writes', streamingWriteSection],
  ['compare-and-swap', compareAndSwapSection],
  ['text reading', textSection],
  ['convenience layer', convenienceSection],
  ['read with stat', readWithStatSection],
  ['limits', limitsSection],
  ['delete', deleteSection],
  ['mkdir', mkdirSection],
  ['rename', renameSection],
  ['copy', copySection],
  ['walk', walkSection],
  ['digest', digestSection],
  ['glob', globSection],
  ['grep', grepSection],
  ['grep exclude', grepExcludeSection],
  ['snapshots', snapshotsSection],
  ['watch', watchSection],
  ['read-only mode', readOnlySection],
  ['concurrency', concurrencySection],
  ['lifecycle', lifecycleSection],
  ['root removed', rootRemovedSection],
];
