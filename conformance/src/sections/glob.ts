import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function globSection(_ctx: SuiteContext): void {}
