/**
 * Core's third-party libraries, each loaded the first time a call needs it
 * (see `lazy-module.ts` for why). Internal: not exported from the package.
 *
 * @module
 */

import { lazyModule } from './lazy-module.ts';

/** iconv-lite: decoders and encoders beyond what `TextDecoder` covers. */
export const iconvLite = lazyModule<typeof import('iconv-lite')>('iconv-lite', import.meta.url);

/** picomatch: the glob pattern language. */
export const picomatchModule = lazyModule<typeof import('picomatch')>('picomatch', import.meta.url);

/** chardet: ICU's statistical detector for legacy encodings. */
export const chardetModule = lazyModule<typeof import('chardet')>('chardet', import.meta.url);

/** re2js: the linear-time regular-expression engine. */
export const re2jsModule = lazyModule<typeof import('re2js')>('re2js', import.meta.url);
