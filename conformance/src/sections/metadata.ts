import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function metadataSection(_ctx: SuiteContext): void {}
