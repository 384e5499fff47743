import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function deleteSection(_ctx: SuiteContext): void {}
