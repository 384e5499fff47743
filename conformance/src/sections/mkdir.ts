import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function mkdirSection(_ctx: SuiteContext): void {}
