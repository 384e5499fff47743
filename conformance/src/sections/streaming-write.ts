import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function streamingWriteSection(_ctx: SuiteContext): void {}
