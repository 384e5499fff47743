import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function snapshotsSection(_ctx: SuiteContext): void {}
