/**
 * The hostile-path table: paths an agent (or an attacker steering one) might
 * pass, each with what the protocol must do with it. Refused rows name the
 * code; legal-but-tricky rows name the normalized path they must land on,
 * inside the root.
 *
 * Shared by the conformance `paths` section and core's path unit tests, so
 * the table and the one path implementation can never drift apart.
 *
 * @module
 */

/** Codes the path layer refuses with. */
export type PathRefusal = 'EPATHESCAPE' | 'EINVAL' | 'ENAMETOOLONG';

/** One row of the table. */
export interface HostilePath {
  /** Short description shown in the test name. */
  readonly name: string;
  /** The path exactly as a caller passes it. */
  readonly path: string;
  /** Refused with this code before any I/O. */
  readonly code?: PathRefusal;
  /** Legal: the normalized path it must resolve to (`''` = root). */
  readonly resolves?: string;
  /**
   * Legal but expensive to create on slow backends (hundreds of directories
   * or kilobytes of name): the suite only checks it is looked up, not refused.
   */
  readonly light?: boolean;
}

const refused = (code: PathRefusal, name: string, path: string): HostilePath => ({ name, path, code });
const legal = (name: string, path: string, resolves: string, light?: boolean): HostilePath =>
  light ? { name, path, resolves, light } : { name, path, resolves };

/** Renders a path for a test name: control characters, surrogates and long runs made readable. */
export function showPath(path: string): string {
  const escaped = JSON.stringify(path).slice(1, -1);
  return escaped.length > 60 ? `${escaped.slice(0, 40)}…(${path.length} chars)` : escaped;
}

/** A path of exactly `bytes` ASCII bytes made of `segment`-byte segments. */
export function pathOfBytes(bytes: number, segment = 200, char = 'p'): string {
  const parts: string[] = [];
  let used = 0;
  while (used < bytes) {
    const sep = parts.length > 0 ? 1 : 0;
    const room = bytes - used - sep;
    // Never leave a remainder that would need an empty segment.
    const take = room <= segment ? room : room - segment < 1 ? segment - 1 : segment;
    parts.push(char.repeat(take));
    used += sep + take;
  }
  return parts.join('/');
}

const escapes: HostilePath[] = [
  refused('EPATHESCAPE', 'parent', '..'),
  refused('EPATHESCAPE', 'parent slash', '../'),
  refused('EPATHESCAPE', 'parent file', '../x'),
  refused('EPATHESCAPE', 'two parents', '../../x'),
  refused('EPATHESCAPE', 'parents to passwd', '../../../../../../../../etc/passwd'),
  refused('EPATHESCAPE', 'twenty parents', `${'../'.repeat(20)}etc/passwd`),
  refused('EPATHESCAPE', 'climb after descend', 'a/../../x'),
  refused('EPATHESCAPE', 'climb after two', 'a/b/../../../x'),
  refused('EPATHESCAPE', 'climb at end', 'a/../..'),
  refused('EPATHESCAPE', 'climb at end slash', 'a/../../'),
  refused('EPATHESCAPE', 'climb trailing', 'a/b/c/../../../..'),
  refused('EPATHESCAPE', 'dot then parent', './..'),
  refused('EPATHESCAPE', 'dot parent file', './../x'),
  refused('EPATHESCAPE', 'parent then dot', '.././x'),
  refused('EPATHESCAPE', 'dot inside climb', 'a/./../../x'),
  refused('EPATHESCAPE', 'double slash parent', '..//x'),
  refused('EPATHESCAPE', 'dot slashes parent', './/..//x'),
  refused('EPATHESCAPE', 'slashes climb', 'a//..//..//x'),
  refused('EPATHESCAPE', 'parent then back in', '../a/..'),
  refused('EPATHESCAPE', 'deep then over', `${'a/'.repeat(10)}${'../'.repeat(11)}x`),
  refused('EPATHESCAPE', 'triple dot then climb', '.../../..'),
  refused('EPATHESCAPE', 'dotdotfoo then climb', '..foo/../../x'),
  refused('EPATHESCAPE', 'backslash parent', '..\\x'),
  refused('EPATHESCAPE', 'backslash two parents', '..\\..\\x'),
  refused('EPATHESCAPE', 'backslash climb after descend', 'a\\..\\..\\x'),
  refused('EPATHESCAPE', 'backslash only parent', '..\\'),
  refused('EPATHESCAPE', 'mixed separators', '..\\../x'),
  refused('EPATHESCAPE', 'mixed separators 2', 'a/..\\..\\x'),
  refused('EPATHESCAPE', 'backslash to windows', '..\\..\\Windows\\System32'),
  refused('EPATHESCAPE', 'parent of parent of file', 'x/../../etc/shadow'),
  refused('EPATHESCAPE', 'climb to sibling workspace', '../other-workspace/secret.txt'),
  refused('EPATHESCAPE', 'climb with dots', './../.././../x'),
  refused('EPATHESCAPE', 'parents only', '../../..'),
  refused('EPATHESCAPE', 'parents only slash', '../../../'),
  refused('EPATHESCAPE', 'dot dot dot dot', '....//../../x'),
  refused('EPATHESCAPE', 'climb inside long path', `${'s/'.repeat(50)}${'../'.repeat(51)}x`),
  refused('EPATHESCAPE', 'legal-looking prefix', 'src/../../node_modules/x'),
  refused('EPATHESCAPE', 'escape via git dir', '.git/../../x'),
  refused('EPATHESCAPE', 'escape with space name', 'a b/../../x'),
  refused('EPATHESCAPE', 'escape with unicode', 'é/../../x'),
];

const absolutes: HostilePath[] = [
  refused('EPATHESCAPE', 'root slash', '/'),
  refused('EPATHESCAPE', 'passwd', '/etc/passwd'),
  refused('EPATHESCAPE', 'tmp', '/tmp'),
  refused('EPATHESCAPE', 'dev null', '/dev/null'),
  refused('EPATHESCAPE', 'proc root', '/proc/self/root'),
  refused('EPATHESCAPE', 'slash dot', '/.'),
  refused('EPATHESCAPE', 'slash parent', '/..'),
  refused('EPATHESCAPE', 'slash dot file', '/./x'),
  refused('EPATHESCAPE', 'double slash', '//x'),
  refused('EPATHESCAPE', 'triple slash', '///x'),
  refused('EPATHESCAPE', 'slash relative-looking', '/a/b/c'),
  refused('EPATHESCAPE', 'backslash root', '\\'),
  refused('EPATHESCAPE', 'backslash file', '\\x'),
  refused('EPATHESCAPE', 'backslash windows dir', '\\Windows\\System32'),
  refused('EPATHESCAPE', 'UNC share', '\\\\srv\\share'),
  refused('EPATHESCAPE', 'UNC file', '\\\\srv\\share\\x.txt'),
  refused('EPATHESCAPE', 'UNC forward', '//srv/share'),
  refused('EPATHESCAPE', 'device namespace', '\\\\?\\C:\\'),
  refused('EPATHESCAPE', 'device namespace file', '\\\\?\\C:\\x'),
  refused('EPATHESCAPE', 'device UNC', '\\\\?\\UNC\\srv\\share'),
  refused('EPATHESCAPE', 'dot device pipe', '\\\\.\\pipe\\x'),
  refused('EPATHESCAPE', 'forward device', '//?/C:/x'),
  refused('EPATHESCAPE', 'forward dot device', '//./PhysicalDrive0'),
  refused('EPATHESCAPE', 'drive backslash', 'C:\\x'),
  refused('EPATHESCAPE', 'drive slash', 'C:/x'),
  refused('EPATHESCAPE', 'drive relative', 'c:x'),
  refused('EPATHESCAPE', 'drive only', 'C:'),
  refused('EPATHESCAPE', 'lower drive only', 'c:'),
  refused('EPATHESCAPE', 'drive root', 'Z:\\'),
  refused('EPATHESCAPE', 'drive relative climb', 'z:..\\x'),
  refused('EPATHESCAPE', 'drive hosts', 'C:\\Windows\\System32\\drivers\\etc\\hosts'),
  refused('EPATHESCAPE', 'drive a colon', 'a:'),
  refused('EPATHESCAPE', 'drive mixed', 'D:/../x'),
  refused('EPATHESCAPE', 'absolute with parents', '/../../etc'),
  refused('EPATHESCAPE', 'absolute with backslash parent', '\\..\\x'),
  refused('EPATHESCAPE', 'absolute home', '/root/.ssh/id_rsa'),
];

// Every C0 control character and DEL, embedded in an otherwise legal name.
const controls: HostilePath[] = [];
for (let c = 0; c < 0x20; c++) {
  controls.push(refused('EINVAL', `control U+${c.toString(16).padStart(4, '0')}`, `a${String.fromCharCode(c)}b`));
}
controls.push(refused('EINVAL', 'DEL', 'a\u007fb'));

const invalid: HostilePath[] = [
  ...controls,
  refused('EINVAL', 'NUL alone', '\u0000'),
  refused('EINVAL', 'NUL first', '\u0000/x'),
  refused('EINVAL', 'NUL last', 'a/\u0000'),
  refused('EINVAL', 'NUL truncation trick', 'x.txt\u0000.png'),
  refused('EINVAL', 'NUL beats escape', '../\u0000'),
  refused('EINVAL', 'NUL beats absolute', '/\u0000'),
  refused('EINVAL', 'newline name', 'line\nbreak'),
  refused('EINVAL', 'CRLF name', 'a\r\n'),
  refused('EINVAL', 'tab only', '\t'),
  refused('EINVAL', 'escape sequence', '\u001b[31mred'),
  refused('EINVAL', 'DEL alone', '\u007f'),
  refused('EINVAL', 'control in dir', 'dir\u0001/x'),
  refused('EINVAL', 'lone high surrogate', '\ud800'),
  refused('EINVAL', 'lone max high surrogate', '\udbff'),
  refused('EINVAL', 'lone low surrogate', '\udc00'),
  refused('EINVAL', 'lone max low surrogate', '\udfff'),
  refused('EINVAL', 'high surrogate inside', 'a\ud800b'),
  refused('EINVAL', 'reversed pair', 'a\udc00\ud800'),
  refused('EINVAL', 'half emoji', 'x\ud83d'),
  refused('EINVAL', 'low surrogate segment', 'x/\ude00'),
  refused('EINVAL', 'two high surrogates', '\ud800\ud800'),
  refused('EINVAL', 'surrogate beats escape', '../\ud800'),
  refused('EINVAL', 'surrogate beats absolute', '/\udc00'),
];

const tooLong: HostilePath[] = [
  refused('ENAMETOOLONG', '256-byte segment', 'a'.repeat(256)),
  refused('ENAMETOOLONG', '1000-byte segment', 'a'.repeat(1000)),
  refused('ENAMETOOLONG', '256-byte nested segment', `x/${'a'.repeat(256)}`),
  refused('ENAMETOOLONG', '256 bytes of 2-byte chars', 'é'.repeat(128)),
  refused('ENAMETOOLONG', '255+1 bytes with 2-byte char', `${'é'.repeat(127)}ab`),
  refused('ENAMETOOLONG', '256 bytes of emoji', '😀'.repeat(64)),
  refused('ENAMETOOLONG', '258 bytes of CJK', '中'.repeat(86)),
  refused('ENAMETOOLONG', 'long segment then climb', `${'a'.repeat(256)}/..`),
  refused('ENAMETOOLONG', 'depth 257', `${'d/'.repeat(256)}f`),
  refused('ENAMETOOLONG', 'depth 300', 'd/'.repeat(300)),
  refused('ENAMETOOLONG', 'path of 4097 bytes', pathOfBytes(4097)),
  refused('ENAMETOOLONG', 'path of 10000 bytes', pathOfBytes(10000)),
  refused('ENAMETOOLONG', 'path of 4097 bytes with backslashes', pathOfBytes(4097).replaceAll('/', '\\')),
];

const legalNames: Array<[string, string]> = [
  ['dotdot prefix', '..foo'],
  ['dotdot suffix', 'foo..'],
  ['three dots', '...'],
  ['four dots', '....'],
  ['dotdot space', '.. '],
  ['space dotdot', ' ..'],
  ['dot space', '. '],
  ['dotfile', '.hidden'],
  ['dotdot in name', 'a..b'],
  ['three dots name', '...x'],
  ['trailing dots', 'x...'],
  ['url-encoded parent', '%2e%2e'],
  ['url-encoded slash', '..%2f..%2fetc'],
  ['double url-encoded', '%252e%252e'],
  ['overlong utf-8 as text', '%c0%ae%c0%ae'],
  ['overlong bytes as latin1 chars', '\u00c0\u00ae\u00c0\u00ae'],
  ['fullwidth dots', '．．'],
  ['two dot leader', '‥'],
  ['ellipsis', '…'],
  ['division slash', 'a∕b'],
  ['fraction slash', 'a⁄b'],
  ['fullwidth solidus', 'a／b'],
  ['fullwidth reverse solidus', 'a＼b'],
  ['tilde', '~'],
  ['tilde root', '~root'],
  ['dollar home', '$HOME'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal shell-expansion lookalike is the point
  ['brace home', '${HOME}'],
  ['backticks', '`id`'],
  ['command substitution', '$(id)'],
  ['space inside', 'a b'],
  ['leading space', ' a'],
  ['trailing space', 'a '],
  ['single quote', "it's"],
  ['double quotes', '"q"'],
  ['colon inside', 'ab:c'],
  ['digit colon', '1:x'],
  ['star', 'a*b'],
  ['question mark', 'a?b'],
  ['brackets', '[a]'],
  ['braces', '{a,b}'],
  ['pipe', 'a|b'],
  ['angle brackets', 'a<b>'],
  ['hash', '#x'],
  ['bang', '!x'],
  ['semicolon', 'a;b'],
  ['ampersand', 'a&b'],
  ['dash rf', '-rf'],
  ['double dash', '--help'],
  ['single dash', '-'],
  ['windows CON', 'CON'],
  ['windows nul', 'nul'],
  ['windows aux.txt', 'aux.txt'],
  ['windows COM1', 'COM1'],
  ['trailing dot', 'foo.'],
  ['right-to-left override', '\u202etxt.exe'],
  ['zero-width space', '\u200b'],
  ['BOM name', '\ufeffbom'],
  ['NFC e-acute', '\u00e9'],
  ['NFD e-acute', 'e\u0301'],
  ['emoji', '😀'],
  ['CJK', '文件.txt'],
  ['C1 next-line', 'a\u0085b'],
  ['no-break space', 'a\u00a0b'],
  ['line separator', 'a\u2028b'],
  ['255 ASCII bytes', 'a'.repeat(255)],
  ['255 bytes with 2-byte chars', `${'é'.repeat(127)}a`],
  ['255 bytes with emoji', `${'😀'.repeat(63)}abc`],
  ['255 bytes of CJK', '中'.repeat(85)],
];

const legalPaths: HostilePath[] = [
  ...legalNames.map(([name, p]) => legal(name, p, p)),
  legal('dot segment', 'a/./b', 'a/b'),
  legal('double slash', 'a//b', 'a/b'),
  legal('triple slash', 'a///b', 'a/b'),
  legal('leading dot slash', './a', 'a'),
  legal('dot dot slash', '././a', 'a'),
  legal('dot double slash', './/a', 'a'),
  legal('backslash separator', 'a\\b', 'a/b'),
  legal('backslash dot', 'a\\.\\b', 'a/b'),
  legal('dot backslash', '.\\a', 'a'),
  legal('backslash parent inside', 'a\\..\\b', 'b'),
  legal('parent inside', 'a/../b', 'b'),
  legal('dot parent inside', 'a/./../b', 'b'),
  legal('parent then sibling', 'x/y/../z', 'x/z'),
  legal('two parents inside', 'a/b/c/../../d', 'a/d'),
  legal('url-encoded parent dir', '%2e%2e/x', '%2e%2e/x'),
  legal('fullwidth parent dir', '．．/x', '．．/x'),
  legal('tilde dir', '~/x', '~/x'),
  legal('drive-like inner segment', 'a/C:/x', 'a/C:/x'),
  legal('colon later', 'ab:', 'ab:'),
  legal('dash dir', 'a/-/b', 'a/-/b'),
  legal('division slashes as parents', '..\u2215..\u2215x', '..\u2215..\u2215x'),
  legal('CJK dir', '中文/文件.txt', '中文/文件.txt'),
  legal('255-byte nested', `x/${'b'.repeat(255)}`, `x/${'b'.repeat(255)}`),
  legal('depth 256', `${'d/'.repeat(255)}f`, `${'d/'.repeat(255)}f`, true),
  legal('path of 3999 bytes', pathOfBytes(3999, 199, 'q'), pathOfBytes(3999, 199, 'q'), true),
  legal('depth 256 via dots', `${'./d/'.repeat(255)}f`, `${'d/'.repeat(255)}f`, true),
  legal('climb back inside depth 256', `${'d/'.repeat(255)}x/../f`, `${'d/'.repeat(255)}f`, true),
  // Trailing slash: legal, and it must name a directory.
  legal('directory slash', 'newdir/', 'newdir'),
  legal('directory double slash', 'newdir//', 'newdir'),
  legal('directory dot slash', './newdir/', 'newdir'),
  legal('directory backslash', 'newdir\\', 'newdir'),
  legal('nested directory slash', 'n1/n2/', 'n1/n2'),
  legal('dotdot-named directory', '..dir/', '..dir'),
  // Spellings of the root.
  legal('empty string', '', ''),
  legal('dot', '.', ''),
  legal('dot slash', './', ''),
  legal('dot dot-segment', './.', ''),
  legal('dot double slash root', './/', ''),
  legal('descend and return', 'a/..', ''),
  legal('descend two and return', 'a/b/../..', ''),
  legal('dot descend return', './a/..', ''),
  legal('backslash dot root', '.\\', ''),
];

/** Every row: refused paths first, then legal ones. */
export const HOSTILE_PATHS: readonly HostilePath[] = Object.freeze([...escapes, ...absolutes, ...invalid, ...tooLong, ...legalPaths]);
