import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function streamingReadSection(_ctx: SuiteContext): void {}
