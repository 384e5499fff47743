import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function renameSection(_ctx: SuiteContext): void {}
