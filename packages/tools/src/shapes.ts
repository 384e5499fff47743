/**
 * The result shapes several tools share, as schemas: the package's exports
 * `servedData`, `searchData` and `editData`, built when the package's index
 * loads. They are the same objects as those tools' output schemas
 * (`readFile.output === servedData`). A process that imports only
 * `@ctxfs/tools/toolset` (the CLI) does not load this module, and builds a
 * shape only when a tool's output schema is read.
 *
 * @module
 */

import { editDataSchema, searchDataSchema, servedDataSchema } from './results.ts';

/** Something served from a file: a whole file, lines, an outline, a symbol, a summary. */
export const servedData = servedDataSchema();
/** A listing or a search: what was found, how much of it is shown, the way to the rest. */
export const searchData = searchDataSchema();
/** A change, applied or refused. */
export const editData = editDataSchema();
