/**
 * Secret redaction for everything served to a model: file content, excerpts,
 * symbols, summaries, overviews, and the texts made from files (diffs,
 * conflicts, refusals quoting lines; see `Redactor.masker`).
 * Provider-specific formats are matched by their documented prefixes and
 * lengths; generic assignments
 * (`password = "..."`) and URL credentials need a value that is not a
 * placeholder or a variable reference, which is what keeps precision high.
 * Line structure is preserved (a redacted multi-line key keeps its line
 * count) so line numbers stay true.
 *
 * @module
 */

import { TextMemo } from '../content/text-memo.ts';

/** One kind of secret. */
export interface SecretRule {
  /** Stable id, shown in the marker: `[REDACTED:<kind>]`. */
  readonly kind: string;
  readonly description: string;
  /** Global regular expression. */
  readonly pattern: RegExp;
  /** Capture group holding the secret itself; default the whole match. */
  readonly group?: number;
  /** Extra check on the secret (placeholders, entropy). */
  readonly validate?: (secret: string) => boolean;
  /**
   * Lowercase strings of which every match contains at least one: a text
   * holding none of them is not searched with this rule (as gitleaks
   * pre-filters), which spares most texts most rules. Omit to always search.
   */
  readonly keywords?: readonly string[];
}

/** Where a secret was found (code-unit offsets in the input). */
export interface SecretFinding {
  readonly kind: string;
  readonly start: number;
  readonly end: number;
  /** 1-based line of the start. */
  readonly line: number;
}

/** Output of {@link Redactor.redact}. */
export interface RedactionResult {
  readonly text: string;
  readonly findings: readonly SecretFinding[];
}

/** Options of {@link Redactor}. */
export interface RedactionOptions {
  /** Default `true`; `false` serves content as-is. */
  enabled?: boolean;
  /** Kinds to turn off. */
  disable?: readonly string[];
  /** Extra rules, e.g. a company's internal token format. */
  rules?: readonly SecretRule[];
  /** Secrets that are known to be harmless (exact strings or patterns). */
  allow?: ReadonlyArray<string | RegExp>;
}

const PLACEHOLDER =
  /^(?:\$\{.*\}|\$\(.*\)|\$[A-Za-z_][A-Za-z0-9_]*|%\(?[A-Za-z_]+\)?s?%?|\{\{.*\}\}|<[^>]*>|\[[^\]]*\]|x+|X+|\*+|\.+|-+|0+|#+|(?:your|my|the|some|insert|enter|replace|example|sample|dummy|fake|test|placeholder|changeme|change[_-]?me|secret|password|passwd|pass|token|api[_-]?key|redacted|none|null|nil|undefined|empty|todo|tbd|xxx+)(?:[_-].*)?)$/i;
const CODE_REFERENCE = /process\.env|os\.environ|getenv|System\.getenv|ENV\[|config\.|settings\.|import\.meta\.env|vault:|secretRef|valueFrom/i;

const DOC_EXAMPLE = /EXAMPLE|X{6,}|x{6,}|0{8,}|\*{4,}|123456789|abcdefgh/i;

/** A provider-format token that is not a documentation example or a filler string. */
function plausibleToken(secret: string): boolean {
  if (secret.includes('\n')) return true; // key blocks: the format is proof enough
  return !DOC_EXAMPLE.test(secret) && entropy(secret) >= 3;
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** A value written by a person as a secret, not a placeholder, reference or label. */
export function looksLikeSecretValue(value: string): boolean {
  if (value.length < 8) return false;
  if (PLACEHOLDER.test(value) || CODE_REFERENCE.test(value)) return false;
  if (/^[a-z]+(?:[A-Z][a-z]+)+$/.test(value) && value.length < 24) return false; // camelCase identifier
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value)) return false; // CONSTANT_NAME
  if (/^[a-z]+(?:[_-][a-z]+){1,2}$/.test(value) && value.length < 24) return false; // snake_case or kebab-case name (`GRANT_TYPE_REFRESH_TOKEN = "refresh_token"`)
  if (/^(?:https?:)?\/\//.test(value) && !/:[^/@]+@/.test(value)) return false; // plain URL
  if (/^[\w.-]+\.(?:json|ya?ml|pem|key|txt|env|toml|ini)$/.test(value)) return false; // a file name
  if (/^(?:~|\.{1,2})?\/[\w.~/-]*$/.test(value)) return false; // a path (PWD: '/Users/me')
  // Letters only, in several capitalized words, perhaps behind a sigil: an identifier or a label
  // (`lastSignificantToken = "?InterpolationInJSX"`), not a credential.
  if (/^[^A-Za-z0-9]{0,2}[A-Za-z]+$/.test(value) && (value.match(/[A-Z][a-z]+/g)?.length ?? 0) >= 2) return false;
  if (/^(?:[A-Z][a-z]*|[A-Z]+)(?:-(?:[A-Z][a-z]*|[A-Z]+))+$/.test(value)) return false; // an HTTP header name
  return entropy(value) >= 2.5;
}

/**
 * The built-in rules, at least one per supported kind. Order matters only for
 * overlaps: the earliest, longest finding wins.
 */
export const DEFAULT_SECRET_RULES: readonly SecretRule[] = [
  {
    kind: 'private-key',
    keywords: ['-----begin'],
    description: 'PEM/OpenSSH private key block',
    pattern: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----\r?\n([\s\S]*?)\r?\n?-----END \1-----/g,
    group: 2,
  },
  {
    kind: 'aws-access-key-id',
    keywords: ['akia', 'asia', 'abia', 'acca', 'agpa', 'aida', 'aroa', 'anpa', 'anva', 'apka'],
    description: 'AWS access key id',
    pattern: /\b((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z2-7]{16})\b/g,
    group: 1,
  },
  {
    kind: 'aws-secret-access-key',
    keywords: ['secret'],
    description: 'AWS secret access key next to its name',
    pattern: /(?:aws_?secret_?access_?key|aws_?secret_?key|secretAccessKey|SecretAccessKey)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
  },
  {
    kind: 'github-token',
    keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    description: 'GitHub personal, OAuth, app or refresh token',
    pattern: /\b(gh[pousr]_[A-Za-z0-9]{36,251})\b/g,
    group: 1,
  },
  {
    kind: 'github-fine-grained-token',
    keywords: ['github_pat_'],
    description: 'GitHub fine-grained PAT',
    pattern: /\b(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b/g,
    group: 1,
  },
  {
    kind: 'gitlab-token',
    keywords: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glcbt-'],
    description: 'GitLab personal/project/runner token',
    pattern: /\b((?:glpat|gldt|glrt|glptt|glcbt)-[A-Za-z0-9_-]{20,})\b/g,
    group: 1,
  },
  {
    kind: 'slack-token',
    keywords: ['xox', 'xapp-'],
    description: 'Slack bot/user/app token',
    pattern: /\b(xox[abposr]-(?:[0-9]+-)+[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,})\b/g,
    group: 1,
  },
  {
    kind: 'slack-webhook',
    keywords: ['hooks.slack.com'],
    description: 'Slack incoming webhook URL',
    pattern: /(https:\/\/hooks\.slack\.com\/(?:services|workflows)\/T[A-Z0-9]{6,}\/[A-Z0-9]{6,}\/[A-Za-z0-9]{16,})/g,
    group: 1,
  },
  {
    kind: 'stripe-key',
    keywords: ['_live_', '_test_'],
    description: 'Stripe secret or restricted key',
    pattern: /\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,})\b/g,
    group: 1,
  },
  { kind: 'google-api-key', keywords: ['aiza'], description: 'Google API key', pattern: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/g, group: 1 },
  {
    kind: 'anthropic-key',
    keywords: ['sk-ant-'],
    description: 'Anthropic API key',
    pattern: /\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,})(?![A-Za-z0-9_-])/g,
    group: 1,
  },
  {
    kind: 'openai-key',
    keywords: ['sk-'],
    description: 'OpenAI API key (project, service account or legacy)',
    pattern: /\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])/g,
    group: 1,
  },
  { kind: 'npm-token', keywords: ['npm_'], description: 'npm access token', pattern: /\b(npm_[A-Za-z0-9]{36})\b/g, group: 1 },
  {
    kind: 'pypi-token',
    keywords: ['pypi-'],
    description: 'PyPI upload token',
    pattern: /\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})(?![A-Za-z0-9_-])/g,
    group: 1,
  },
  {
    kind: 'sendgrid-key',
    keywords: ['sg.'],
    description: 'SendGrid API key',
    pattern: /\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g,
    group: 1,
  },
  { kind: 'twilio-key', keywords: ['sk'], description: 'Twilio API key SID', pattern: /\b(SK[0-9a-f]{32})\b/g, group: 1 },
  { kind: 'mailgun-key', keywords: ['key-'], description: 'Mailgun API key', pattern: /\b(key-[0-9a-f]{32})\b/g, group: 1 },
  { kind: 'huggingface-token', keywords: ['hf_'], description: 'Hugging Face access token', pattern: /\b(hf_[A-Za-z]{34})\b/g, group: 1 },
  { kind: 'digitalocean-token', keywords: ['_v1_'], description: 'DigitalOcean token', pattern: /\b(do[por]_v1_[a-f0-9]{64})\b/g, group: 1 },
  { kind: 'shopify-token', keywords: ['shp'], description: 'Shopify access token', pattern: /\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b/g, group: 1 },
  {
    kind: 'azure-storage-key',
    keywords: ['accountkey='],
    description: 'Azure storage account key in a connection string',
    pattern: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    group: 1,
  },
  {
    kind: 'jwt',
    keywords: ['eyj'],
    description: 'JSON Web Token',
    pattern: /\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})(?![A-Za-z0-9_-])/g,
    group: 1,
  },
  {
    kind: 'connection-string',
    keywords: ['://'],
    description: 'password inside a URL or database connection string',
    pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@'"`]{0,64}:([^\s@/'"`]{3,128})@[\w.-]+/gi,
    group: 1,
    validate: (s) => !PLACEHOLDER.test(s) && !/^\$|^\{\{|^%|^<|^\*+$/.test(s) && entropy(s) >= 2,
  },
  {
    kind: 'bearer-token',
    keywords: ['authorization'],
    description: 'token in an Authorization header',
    pattern: /\bAuthorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|token)\s+([A-Za-z0-9._~+/=-]{16,})/gi,
    group: 1,
    validate: (s) => !PLACEHOLDER.test(s) && entropy(s) >= 3,
  },
  {
    kind: 'password-assignment',
    keywords: ['pass', 'pwd', 'secret', 'key', 'token'],
    description: 'a password, secret, token or key assigned a literal value',
    pattern:
      /(?<![\w-])["']?[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key|token)["']?\s*(?::=|=>|=|:)\s*(["'`])([^"'`\s]{8,200})\1/gi,
    group: 2,
    validate: looksLikeSecretValue,
  },
  {
    kind: 'password-assignment',
    keywords: ['pass', 'pwd', 'secret', 'key', 'token'],
    description: 'an unquoted secret in a .env-style line',
    pattern:
      /^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CLIENT_SECRET)[A-Z0-9_]*[ \t]*=[ \t]*([^\s"'#`]{8,200})[ \t]*$/gm,
    group: 1,
    validate: looksLikeSecretValue,
  },
];

// Each rule's pattern compiled once, global; `find` is synchronous, so one
// instance per rule can be reused from lastIndex 0.
const compiled = new WeakMap<SecretRule, RegExp>();
function globalPattern(rule: SecretRule): RegExp {
  let re = compiled.get(rule);
  if (re === undefined) {
    re = new RegExp(rule.pattern.source, rule.pattern.flags.includes('g') ? rule.pattern.flags : `${rule.pattern.flags}g`);
    compiled.set(rule, re);
  }
  return re;
}

/** Every kind the default rules support. */
export const SUPPORTED_SECRET_KINDS: readonly string[] = [...new Set(DEFAULT_SECRET_RULES.map((r) => r.kind))];

function lineAt(offset: number, starts: number[]): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Longest text whose findings a redactor keeps. */
const RECENT_MAX_CHARS = 1024;

/** The mask of a served secret, `[REDACTED:<kind>]`. */
const MASK = /\[REDACTED:([^\]\s]+)\]/;
const MASKS = new RegExp(MASK.source, 'g');

/** Shortest piece of a secret (a line of a key block, what is left where a quoted line is cut) masked in a derived text. */
const MIN_PIECE = 4;
/** Below this length a piece is masked only where no letter or digit touches it: shorter, it could be part of a word. */
const SHORT_PIECE = 8;
/** How a derived text marks where it cut a quoted line (the mismatch report's `around`). */
const CUT = '…';

function count(text: string, part: string): number {
  let n = 0;
  for (let i = text.indexOf(part); i !== -1; i = text.indexOf(part, i + part.length)) n++;
  return n;
}

/** Where an edit's new text holds a served mask that would take the place of its secret. */
export interface ServedMask {
  /** 1-based line of the new text. */
  readonly line: number;
  readonly kind: string;
}

/**
 * Why an edit whose text holds a served mask (see
 * {@link Redactor.servedMaskIn}) is refused, and what to do instead; every
 * edit path (disk and buffer) refuses with these words.
 */
export function servedMaskRefusal(path: string, at: ServedMask): { reason: string; hint: string } {
  return {
    reason: `line ${at.line} of ${path} as the edit would leave it holds [REDACTED:${at.kind}], the mask served in place of a secret the file holds: written, it would replace the secret itself`,
    hint: `edit around it: a line-range edit or a replace that leaves line ${at.line} out keeps the secret as it is (changing the secret itself is a person's to do)`,
  };
}

/** `redactor`'s {@link Redactor.masker} over `sources`; without a redactor, texts are served as made. */
export function maskerOf(redactor: Redactor | undefined, sources: ReadonlyArray<string | undefined>): (text: string) => string {
  return redactor?.masker(sources) ?? ((text) => text);
}

/**
 * For an edit refused because its old text (a patch's context, a replace's
 * search) is not in the file: why, when that text holds a served mask.
 */
export function maskInOldText(text: string): string | undefined {
  const m = MASK.exec(text);
  if (m === null) return undefined;
  return `The text to match holds ${m[0]}, the mask served in place of a secret; the file holds the secret itself there, so that text never matches. Leave the secret's line out of it.`;
}

/**
 * Finds and masks secrets.
 *
 * @example
 * ```ts
 * const redactor = new Redactor();
 * redactor.redact('AWS_KEY=AKIAZ7XQ2M4N6P3R3T5V').text; // 'AWS_KEY=[REDACTED:aws-access-key-id]'
 * ```
 */
export class Redactor {
  readonly enabled: boolean;
  readonly rules: readonly SecretRule[];
  readonly #allow: ReadonlyArray<string | RegExp>;

  constructor(options: RedactionOptions = {}) {
    this.enabled = options.enabled ?? true;
    const off = new Set(options.disable ?? []);
    this.rules = [...DEFAULT_SECRET_RULES, ...(options.rules ?? [])].filter((r) => !off.has(r.kind));
    this.#allow = options.allow ?? [];
  }

  #allowed(secret: string): boolean {
    return this.#allow.some((a) => (typeof a === 'string' ? a === secret : a.test(secret)));
  }

  // The same short texts pass again and again: every row of a listing served
  // again (a path, its size and language), every header. Their findings are
  // kept, frozen.
  readonly #recent = new TextMemo<readonly SecretFinding[]>({ maxTexts: 4096, maxChars: 1024 * 1024 });
  // And the last few file contents: an edit's result is masked by the secrets
  // of the file before and after it (see `masker`), and the content after one
  // edit is the content before the next.
  readonly #contents = new TextMemo<readonly SecretFinding[]>({ maxTexts: 4, maxChars: 4 * 1024 * 1024 });

  /** The secrets in `text`, sorted by position, overlaps resolved. */
  find(text: string): SecretFinding[] {
    if (!this.enabled || text.length === 0) return [];
    const memo = text.length > RECENT_MAX_CHARS ? this.#contents : this.#recent;
    const found =
      memo.get(text) ??
      memo.set(
        text,
        this.#find(text).map((f) => Object.freeze(f)),
      );
    return [...found];
  }

  #find(text: string): SecretFinding[] {
    const raw: Array<{ kind: string; start: number; end: number }> = [];
    let lower: string | undefined;
    for (const rule of this.rules) {
      if (rule.keywords !== undefined) {
        lower ??= text.toLowerCase();
        if (!rule.keywords.some((k) => (lower as string).includes(k))) continue;
      }
      const re = globalPattern(rule);
      re.lastIndex = 0;
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        const secret = rule.group === undefined ? m[0] : m[rule.group];
        if (secret === undefined || secret.length === 0) continue;
        const start = m.index + (rule.group === undefined ? 0 : m[0].lastIndexOf(secret));
        if (rule.validate ? !rule.validate(secret) : !plausibleToken(secret)) continue;
        if (this.#allowed(secret)) continue;
        raw.push({ kind: rule.kind, start, end: start + secret.length });
      }
    }
    raw.sort((a, b) => a.start - b.start || b.end - a.end);
    const starts = [0];
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    const out: SecretFinding[] = [];
    let lastEnd = -1;
    for (const f of raw) {
      if (f.start < lastEnd) continue;
      out.push({ ...f, line: lineAt(f.start, starts) });
      lastEnd = f.end;
    }
    return out;
  }

  /** Replaces each secret with `[REDACTED:<kind>]`, keeping the number of lines. */
  redact(text: string): RedactionResult {
    const findings = this.find(text);
    return { text: maskSpans(text, findings), findings };
  }

  /**
   * Masks texts derived from `sources` (file contents): a diff, a conflict,
   * a refusal quoting lines. Such a text shows parts of its sources out of
   * their context — a hunk inside a key block has no BEGIN line, a quoted
   * line is cut short — where the rules, run on it alone, miss what they
   * find in the whole file. So every secret found in a source is masked
   * wherever it appears in the derived text, each line of a multi-line one
   * on its own, and so is what is left of one where a quoted line is cut
   * (`…`); then the rules run on the text itself, for secrets of its own
   * (the new lines of an edit). Lines keep their place: a diff stays a diff.
   *
   * @example
   * ```ts
   * const mask = redactor.masker([before, after]);
   * mask(formatUnifiedDiff(before, after).text); // a hunk inside a key block: each key line `[REDACTED:private-key]`
   * ```
   */
  masker(sources: ReadonlyArray<string | undefined>): (text: string) => string {
    if (!this.enabled) return (text) => text;
    let pieces: SecretPieces | undefined;
    return (text) => {
      if (text === '') return text;
      pieces ??= this.#pieces(sources);
      const shown = pieces.mask(text);
      // A finding made of masks alone (a key block whose lines are masked already) is left as it is, so the lines keep their diff prefixes.
      return maskSpans(
        shown,
        this.find(shown).filter((f) => /[A-Za-z0-9]/.test(shown.slice(f.start, f.end).replace(MASKS, ''))),
      );
    };
  }

  /** Every secret of `sources` as the pieces a derived text can show: each line of it, trimmed. */
  #pieces(sources: ReadonlyArray<string | undefined>): SecretPieces {
    const kinds = new Map<string, string>();
    for (const source of new Set(sources)) {
      if (source === undefined) continue;
      for (const f of this.find(source)) {
        for (const line of source.slice(f.start, f.end).split('\n')) {
          const piece = line.trim();
          if (piece.length >= MIN_PIECE && !kinds.has(piece)) kinds.set(piece, f.kind);
        }
      }
    }
    return new SecretPieces(kinds);
  }

  /**
   * Where `after`, the text an edit would leave, holds the mask of a secret
   * kind `before` holds, more often than `before` holds that mask as text:
   * an edit made from the masked text it was served, which would write the
   * mask over the secret. `undefined` when it does not (a mask written into
   * a file holding no secret of its kind is text like any other).
   */
  servedMaskIn(before: string, after: string): ServedMask | undefined {
    if (!this.enabled || !after.includes('[REDACTED:')) return undefined;
    const kinds = new Set(this.find(before).map((f) => f.kind));
    const known = new Set(before.split('\n'));
    for (const kind of kinds) {
      const mask = `[REDACTED:${kind}]`;
      if (count(after, mask) <= count(before, mask)) continue;
      const lines = after.split('\n');
      const at = lines.findIndex((l) => l.includes(mask) && !known.has(l));
      return { line: (at === -1 ? lines.findIndex((l) => l.includes(mask)) : at) + 1, kind };
    }
    return undefined;
  }
}

/** A place of a text to mask. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
}

/** `text` with each span (in order, none overlapping) replaced by its mask, keeping the number of lines. */
function maskSpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start);
    const newlines = text.slice(s.start, s.end).split('\n').length - 1;
    out += `[REDACTED:${s.kind}]${'\n'.repeat(newlines)}`;
    at = s.end;
  }
  return out + text.slice(at);
}

/** The pieces of a set of secrets, each with its kind, found in any text. */
class SecretPieces {
  /** Longest first, so where two pieces start at one place the longer is masked. */
  readonly #pieces: ReadonlyArray<readonly [piece: string, kind: string]>;

  constructor(kinds: ReadonlyMap<string, string>) {
    this.#pieces = [...kinds].sort((a, b) => b[0].length - a[0].length);
  }

  mask(text: string): string {
    if (this.#pieces.length === 0) return text;
    const spans: Span[] = [];
    for (const [piece, kind] of this.#pieces) {
      for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + 1)) {
        const end = at + piece.length;
        if (piece.length < SHORT_PIECE && (/[A-Za-z0-9]/.test(text[at - 1] ?? '') || /[A-Za-z0-9]/.test(text[end] ?? ''))) continue;
        spans.push({ start: at, end, kind });
      }
    }
    if (text.includes(CUT)) spans.push(...this.#cut(text));
    // Where two overlap (a piece inside a longer one, a cut piece beside a whole one), the first and longest is masked.
    const apart: Span[] = [];
    for (const s of spans.sort((a, b) => a.start - b.start || b.end - a.end)) {
      if (s.start >= (apart.at(-1)?.end ?? 0)) apart.push(s);
    }
    return maskSpans(text, apart);
  }

  /** What is left of a secret beside a cut: the start of one before `…`, the end of one after it. */
  #cut(text: string): Span[] {
    const spans: Span[] = [];
    for (let i = text.indexOf(CUT); i !== -1; i = text.indexOf(CUT, i + 1)) {
      let before: Span | undefined;
      let after: Span | undefined;
      for (const [piece, kind] of this.#pieces) {
        if (piece.length < SHORT_PIECE) break;
        for (let n = Math.min(piece.length - 1, i); n >= MIN_PIECE && n > (before ? before.end - before.start : 0); n--) {
          if (text.startsWith(piece.slice(0, n), i - n)) before = { start: i - n, end: i, kind };
        }
        for (let n = Math.min(piece.length - 1, text.length - i - 1); n >= MIN_PIECE && n > (after ? after.end - after.start : 0); n--) {
          if (text.startsWith(piece.slice(piece.length - n), i + 1)) after = { start: i + 1, end: i + 1 + n, kind };
        }
      }
      if (before !== undefined) spans.push(before);
      if (after !== undefined) spans.push(after);
    }
    return spans;
  }
}
