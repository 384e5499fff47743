/**
 * The shell program of the helper session, run by the image's own `sh`
 * (busybox ash is enough: no bash, no GNU options, no Node).
 *
 * Protocol: ctxfs writes one request per line, `<id> <code>`; the loop
 * evaluates the code and ends the response with a marker on stdout
 * (`RS nonce:id:status LF`) and one on stderr (`RS nonce:id LF`). Each
 * channel is ordered on its own, so a response is complete when both markers
 * have arrived; the random nonce keeps file content from forging one.
 * Requests that carry bytes (small writes) have them follow the line; `read`
 * takes its line one byte at a time and `dd iflag=fullblock` reads exactly the
 * payload (busybox `head -c` reads ahead through stdio and would swallow the
 * next pipelined request).
 *
 * `FL dir [find words]` lists the files below a directory for grep, NUL
 * separated, the words (a prune clause) keeping excluded names out.
 *
 * `WK dir [find words]` walks a tree with one busybox `find` (no GNU
 * options): a line `mode|size|mtime|ctime|uid|gid|./path` per entry from
 * `stat` batched by `-exec {} +`, taken without following links. A path
 * holding a newline would split its line, so those are printed as find meets
 * them, `SOH fields LF ./path NUL` (read whole and dropped by the caller: no
 * path can address them). Status 1 is find's own (entries that
 * vanished or cannot be read, which the caller passes over by message); an
 * unreadable start answers nothing, as `LS` does.
 *
 * Status codes above 100 are ctxfs's own (see `STATUS_CODES`); anything else
 * is the failing tool's exit status, classified by its stderr message.
 *
 * Commits (`CM`, behind `WR` and `JN`) and the other replacing requests
 * (`RMF`, `MV`, `CP`) hold the commit lock, so that every helper session on
 * the container, other processes' too, waits for the others: a file named
 * after the workspace in `/tmp` (else in the workspace, hidden), created
 * exclusively (`set -C` makes `>` an O_EXCL create, and `true` is a shell
 * builtin, so no process starts for it on every write; not `:`, whose failed
 * redirection would end a POSIX shell). Its name hashes the real root, so
 * every session on the workspace agrees; it is worked out at the session's
 * first commit, and the start itself runs no process (the real root comes
 * from `cd -P`, the SOH byte is written into the script): a filesystem opens
 * once per test in the suites, and on a busy engine each process costs
 * milliseconds. It is held for milliseconds; one
 * older than 10 s belongs to a session that died mid-commit and is taken
 * over. Under it a compare-and-swap commit hashes the current file
 * (`sha256sum`) and swaps only when it is the expected one.
 *
 * @module
 */

/** Status codes the script returns, mapped to error codes. */
export const STATUS_CODES: Readonly<Record<number, string>> = {
  3: 'EPATHESCAPE',
  100: 'ENOENT',
  101: 'ENOTDIR',
  102: 'EISDIR',
  103: 'EEXIST',
  104: 'ENOTEMPTY',
  105: 'ELOCKTIMEOUT',
  112: 'EINVAL',
  // The commit's ifMatch did not match; stdout holds the current hash (or
  // 'absent') for the caller's ECONFLICT.
  113: 'ECONFLICT',
};

/** The commit lock's name in the workspace root when the container has no writable `/tmp`; never reported by a watcher. */
export const FALLBACK_LOCK_NAME = '.ctxfs-commit.lock';

/** Prefix of the helper's temporary names; hidden from listings. */
export const TEMP_PREFIX = '.ctxfs-';

/** `stat -c` format shared by every stat-like request: raw mode, size, mtime, ctime, uid, gid. */
export const STAT_FORMAT = '%f|%s|%y|%z|%u|%g';

export const HELPER_SCRIPT = String.raw`
umask 022
R=$1; N=$2; i=0
NL='
'
SOH='${'\u0001'}'
if cd -P "$R" 2>/dev/null; then RR=$PWD; cd /; else RR=$(readlink -f "$R" 2>/dev/null) || RR=$R; fi
LK=
LKN() {
  LK=/tmp/.ctxfs-commit-$(printf '%s' "$RR" | sha256sum | cut -c1-16)
  [ -d /tmp ] && [ -w /tmp ] || LK=$RR/${FALLBACK_LOCK_NAME}
}
LKT() {
  [ -n "$LK" ] || LKN
  n=0
  until set -C; { true > "$LK"; } 2>/dev/null; r=$?; set +C; [ $r = 0 ]; do
    n=$((n+1))
    if [ $((n % 200)) = 0 ]; then
      t=$(stat -c %Y "$LK" 2>/dev/null) && [ $(($(date +%s) - t)) -ge 10 ] && rm -f "$LK"
      [ $n -ge 4000 ] && return 105
    fi
    usleep 5000 2>/dev/null || sleep 0.005 2>/dev/null || sleep 1
  done
}
LKD() { "$@"; s=$?; rm -f "$LK"; return $s; }
L() { LKT || return $?; LKD "$@"; }
lt() {
  if [ -e "$1" ]; then readlink -f "$1"; return $?; fi
  # A dangling link: its target's directory, resolved from the link's own directory (busybox's
  # readlink -f resolves a relative target against the current directory), and the name in it.
  l=$(readlink "$1") || return 1
  (cd -P "${'$'}{1%/*}" && cd -P "$(dirname "$l")" 2>/dev/null && printf '%s/%s' "$PWD" "${'$'}{l##*/}")
}
chk() {
  P=$R
  [ -z "$1" ] && return 0
  local IFS=/ c t
  set -f
  for c in $1; do
    P=$P/$c
    if [ -L "$P" ]; then
      t=$(lt "$P") || { set +f; return 3; }
      case $t in "$RR"|"$RR"/*) ;; *) set +f; return 3 ;; esac
    fi
  done
  set +f
  return 0
}
ST() { chk "$1" || return $?; stat -L -c '%f|%s|%y|%z|%u|%g' "$P"; }
# The file a write of $1 changes: a link's target (created when it dangles), not the link.
tgt() { chk "$1" || return $?; [ -L "$P" ] || return 0; RP "$1" > /dev/null || return 3; }
RP() {
  P=$RR
  local IFS=/ c t
  set -f
  for c in $1; do
    P=$P/$c
    if [ -L "$P" ]; then
      t=$(lt "$P") || { set +f; return 3; }
      case $t in "$RR"|"$RR"/*) P=$t ;; *) set +f; return 3 ;; esac
    fi
  done
  set +f
  printf '%s\n' "${'$'}{P#"$RR"}"
}
LS() {
  chk "$1" || return $?
  [ -d "$P" ] || { [ -e "$P" ] && return 101; stat -L "$P" >/dev/null; return 1; }
  for e in "$P"/* "$P"/.*; do
    n=${'$'}{e##*/}
    case $n in .|..) continue ;; esac
    if [ -L "$e" ]; then k=l; elif [ -d "$e" ]; then k=d; elif [ -f "$e" ]; then k=f; elif [ -e "$e" ]; then k=o; else continue; fi
    printf '%s%s\0' "$k" "$n"
  done
}
RD() {
  chk "$1" || return $?
  [ -d "$P" ] && return 102
  s=$(stat -L -c '%f|%s|%y|%z|%u|%g' "$P") || return 1
  [ -f "$P" ] || return 112
  printf '%s\n' "$s"
  z=${'$'}{s#*|}; z=${'$'}{z%%|*}
  if [ "$z" -le "$2" ]; then cat "$P"
  # A large file streams through the engine (the archive endpoint reads as root): the user must be able to read it.
  elif [ -r "$P" ]; then readlink -f "$P" && stat -L -c %i:%s:%Y "$P"
  else printf '%s: Permission denied\n' "$1" >&2; return 1
  fi
}
RB() {
  l=$(dd bs="$2" count=1 iflag=fullblock 2>/dev/null)
  local IFS='
'
  set -f; set -- "$1" $l; set +f
  unset IFS
  m=$1; shift
  v=
  for a; do if chk "$a"; then v="$v$P
"; fi; done
  [ -n "$v" ] || return 0
  local IFS='
'
  set -f
  f=$(find $v -maxdepth 0 -type f -size -$((m + 1))c 2>/dev/null)
  set -- $f
  set +f
  unset IFS
  [ $# -gt 0 ] && tar -cf - -C / -- "$@" 2>/dev/null
  :
}
WK() {
  chk "$1" || return $?
  [ -d "$P" ] || { [ -e "$P" ] && return 101; stat -L "$P" >/dev/null; return 2; }
  cd "$P" 2>/dev/null || return 0
  shift
  find . -mindepth 1 "$@" -path "*$NL*" -exec stat -c "$SOH%f|%s|%y|%z|%u|%g" {} \; -exec printf '%s\0' {} \; \
    -o ! -path "*$NL*" -exec stat -c '%f|%s|%y|%z|%u|%g|%n' {} +
  s=$?; cd /; return $s
}
FL() { chk "$1" || return $?; [ -d "$P" ] || return 101; shift; cd "$P" && find . "$@" -type f -print0; s=$?; cd /; return $s; }
PW() {
  tgt "$2" || return $?
  if [ -d "$P" ]; then return 102; fi
  if [ "$1" = create ] && { [ -e "$P" ] || [ -L "$P" ]; }; then return 103; fi
  printf '%s\n' "${'$'}{P%/*}"
  if [ -f "$P" ]; then stat -L -c '%a:%u:%g' "$P"; fi
}
WR() {
  tgt "$2"; e=$?
  if [ $e = 0 ]; then T=${'$'}{P%/*}/.ctxfs-$N-$i.tmp; else T=/dev/null; fi
  # \`true\`, not \`:\`: a redirection that fails on a special built-in ends a non-interactive shell, and with it the session.
  if [ "$3" = 0 ]; then true > "$T" || return 1
  elif true > "$T"; then
    dd bs="$3" count=1 iflag=fullblock of="$T" || { s=$?; rm -f "$T"; return $s; }
  else dd bs="$3" count=1 iflag=fullblock of=/dev/null 2>/dev/null; return 1
  fi
  [ $e = 0 ] || return $e
  L CM "$1" "$T" "$P" "$4" "$5" "$6"
}
CM() {
  if [ -d "$3" ]; then rm -f "$2"; return 102; fi
  if [ -n "$6" ] && [ "$6" != - ]; then
    if [ -e "$3" ] || [ -L "$3" ]; then c=$(sha256sum < "$3") || { rm -f "$2"; return 1; }; c=${'$'}{c%% *}; else c=absent; fi
    if [ "$c" != "$6" ]; then rm -f "$2"; printf '%s\n' "$c"; return 113; fi
  fi
  [ "$4" = - ] || chmod "$4" "$2" || { rm -f "$2"; return 1; }
  [ "$5" = - ] || chown "$5" "$2" || { rm -f "$2"; return 1; }
  case $1 in
  create)
    if [ -e "$3" ] || [ -L "$3" ]; then rm -f "$2"; return 103; fi
    if ln "$2" "$3" 2>/dev/null; then rm -f "$2"; return 0; fi
    if [ -e "$3" ]; then rm -f "$2"; return 103; fi
    mv -f "$2" "$3" ;;
  append)
    if [ -f "$3" ]; then
      cp -p "$3" "$2.a" && cat "$2" >> "$2.a" && mv -f "$2.a" "$3"
      s=$?; rm -f "$2" "$2.a"; return $s
    fi
    mv -f "$2" "$3" ;;
  *) mv -f "$2" "$3" ;;
  esac
}
JN() {
  T=$3
  if [ "$4" -gt 0 ]; then cat "$T".p* > "$T" || { s=$?; rm -f "$T" "$T".p*; return $s; }; rm -f "$T".p*; fi
  tgt "$2" || { s=$?; rm -f "$T"; return $s; }
  L CM "$1" "$T" "$P" "$5" "$6" "$7"
}
RMT() { for t in "$@"; do rm -f "$t" "$t".p* "$t".a; done; }
CLR() {
  chk '' || return $?
  for e in "$R"/* "$R"/.*; do
    case ${'$'}{e##*/} in .|..) continue ;; esac
    if [ -e "$e" ] || [ -L "$e" ]; then rm -rf "$e" || return 1; fi
  done
}
MK() { chk "$1" || return $?; mkdir "$P"; }
RMF() { chk "$1" || return $?; [ -d "$P" ] && [ ! -L "$P" ] && return 102; L rm "$P"; }
RMD() {
  chk "$1" || return $?
  if [ "$2" = 1 ]; then rm -rf "$P"; return $?; fi
  rmdir "$P"
}
MV() {
  chk "$1" || return $?; A=$P
  chk "$2" || return $?
  if [ -d "$P" ] && [ ! -L "$P" ]; then rmdir "$P" || return 104; elif [ -L "$P" ]; then rm -f "$P"; fi
  L mv -f "$A" "$P"
}
CP() {
  chk "$1" || return $?; A=$P
  chk "$2" || return $?
  [ -d "$P" ] && [ ! -L "$P" ] && return 102
  T=${'$'}{P%/*}/.ctxfs-$N-$i.tmp
  cp "$A" "$T" && chmod "$(stat -L -c %a "$A")" "$T" && L mv -f "$T" "$P"
  s=$?; [ $s = 0 ] || rm -f "$T"; return $s
}
CPR() {
  chk "$1" || return $?; A=$P
  chk "$2" || return $?
  [ -e "$P" ] && return 103
  # -H: a link named as the source is copied as what it leads to, as the host copies it; links inside stay links.
  cp -RH "$A" "$P"
}
while IFS= read -r l; do
  i=${'$'}{l%% *}
  eval "${'$'}{l#* }"
  r=$?
  printf '\036%s:%s:%d\n' "$N" "$i" "$r"
  printf '\036%s:%s\n' "$N" "$i" >&2
done
`;
