#!/usr/bin/env node
/**
 * `ctxfs`. Node's compile cache is turned on before anything else is
 * loaded: from the second run on, the modules of the CLI and the backend are
 * read as compiled code, which is most of the start-up of `ctxfs cat --raw`.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 *
 * @module
 */

import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./main.ts');
