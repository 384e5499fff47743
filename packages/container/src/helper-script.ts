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
  // A link in a loop met while following the links of a path (realpath).
  114: 'ELOOP',
};

/** The commit lock's name in the workspace root when the container has no writable `/tmp`; never reported by a watcher. */
export const FALLBACK_LOCK_NAME = '.ctxfs-commit.lock';

/** Prefix of the helper's temporary names; hidden from listings. */
export const TEMP_PREFIX = '.ctxfs-';

/** `stat -c` format shared by every stat-like request: raw mode, size, mtime, ctime, uid, gid. */
export const STAT_FORMAT = '%f|%s|%y|%z|%u|%g';

/** A restore's token in a shell pattern (24 hex digits, as `randomBytes(12)` spells it). */
const HEX24 = '[0-9a-f]'.repeat(24);

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
# Enters the directory holding $P (as chk or tgt left it) and checks that it is still inside the root; the
# request then acts on the name $B relative to it. A directory swapped for a link after chk cannot move the
# call elsewhere: the shell holds the directory itself, not its name. The loop goes back to / after each request.
# B starts with ./ so that no tool takes a name beginning with - for an option.
ind() {
  if [ "$P" = "$R" ] || [ "$P" = "$RR" ]; then D=$RR; B=.; else D=${'$'}{P%/*}; B=./${'$'}{P##*/}; fi
  cd -P "$D" || return 1
  case $PWD in "$RR"|"$RR"/*) ;; *) cd /; return 3 ;; esac
}
# Enters the directory $P itself, under the same check.
indir() {
  cd -P "$P" || return 1
  case $PWD in "$RR"|"$RR"/*) ;; *) cd /; return 3 ;; esac
}
# Whether the file open on descriptor 3 is inside the root (where /proc shows it): a name swapped for a
# link between the check and the open is caught on what was opened.
# O is then the opened file's real path.
fd3in() {
  O=$PWD/${'$'}{B#./}
  [ -e /proc/$$/fd/3 ] || return 0
  O=$(readlink /proc/$$/fd/3) || { O=$PWD/${'$'}{B#./}; return 0; }
  case $O in "$RR"/*) return 0 ;; esac
  exec 3<&-; return 3
}
# chk of every component but the last, which the request acts on itself: a link there is removed, renamed
# or stat'ed as the link, never followed (as the host treats a link that leads out of the workspace).
chkp() { case $1 in */*) chk "${'$'}{1%/*}" || return $?; P=$P/${'$'}{1##*/} ;; *) P=$R/$1 ;; esac; }
ST() {
  chk "$1"; e=$?
  # A link leading out of the workspace is an entry of it: its own stat, nothing of where it leads.
  if [ $e = 3 ]; then chkp "$1" || return $?; ind || return $?; [ -L "$B" ] || return 3; stat -c '%f|%s|%y|%z|%u|%g' "$B"; return $?; fi
  [ $e = 0 ] || return $e
  ind || return $?
  stat -L -c '%f|%s|%y|%z|%u|%g' "$B" 2>/dev/null && return 0
  # A link in a loop is an entry too (the host stats it as the link); a dangling one is ENOENT, as there.
  if [ -L "$B" ] && lp "$B"; then stat -c '%f|%s|%y|%z|%u|%g' "$B"; return $?; fi
  stat -L -c '%f|%s|%y|%z|%u|%g' "$B"
}
# Whether the link $1 is in a loop: more links followed than the kernel would (40).
lp() {
  n=0; f=$1
  while [ -L "$f" ]; do
    n=$((n+1)); [ $n -gt 40 ] && return 0
    l=$(readlink "$f") || return 1
    case $l in /*) f=$l ;; *) f=${'$'}{f%/*}/$l ;; esac
  done
  return 1
}
# The file a write of $1 changes: a link's target (created when it dangles), not the link.
# A link in a loop is ELOOP (114); any other link RP will not follow leads outside.
tgt() { chk "$1" || return $?; [ -L "$P" ] || return 0; RP "$1" > /dev/null && return 0; e=$?; [ $e = 114 ] && return 114; return 3; }
RP() {
  P=$RR
  local IFS=/ c t
  set -f
  for c in $1; do
    P=$P/$c
    if [ -L "$P" ]; then
      # A loop leads nowhere (lt would take it for a dangling link and answer where it points).
      if [ ! -e "$P" ] && lp "$P"; then set +f; return 114; fi
      t=$(lt "$P") || { set +f; return 3; }
      case $t in "$RR"|"$RR"/*) P=$t ;; *) set +f; return 3 ;; esac
    fi
  done
  set +f
  printf '%s\n' "${'$'}{P#"$RR"}"
}
# The text of the link $1 (its parent's links checked), for naming the link that closes a loop: relative as
# written, from the workspace root with a leading / when absolute inside it; outside the root it is not told.
RL() {
  chkp "$1" || return $?
  ind || return $?
  [ -L "$B" ] || { cd /; return 100; }
  l=$(readlink "$B"); s=$?; cd /
  [ $s = 0 ] || return $s
  case $l in
    "$RR") printf '/\n' ;;
    "$RR"/*) printf '/%s\n' "${'$'}{l#"$RR"/}" ;;
    /*) return 3 ;;
    *) printf '%s\n' "$l" ;;
  esac
}
LS() {
  chk "$1" || return $?
  [ -d "$P" ] || { [ -e "$P" ] && return 101; stat -L "$P" >/dev/null; return 1; }
  # A directory the user cannot enter lists as empty, as its glob would.
  indir 2>/dev/null; e=$?; [ $e = 3 ] && return 3; [ $e = 0 ] || return 0
  for e in * .*; do
    case $e in .|..) continue ;; esac
    if [ -L "$e" ]; then k=l; elif [ -d "$e" ]; then k=d; elif [ -f "$e" ]; then k=f; elif [ -e "$e" ]; then k=o; else continue; fi
    printf '%s%s\0' "$k" "$e"
  done
}
RD() {
  chk "$1" || return $?
  ind || return $?
  [ -d "$B" ] && return 102
  stat -L "$B" > /dev/null || return 1
  [ -f "$B" ] || return 112
  # Opened first, then checked and served from the descriptor: what is read is the file that was checked.
  # \`command\`: a failed redirection of the special built-in exec would end the shell.
  command exec 3< "$B" || return 1
  fd3in || return 3
  s=$(stat -L -c '%f|%s|%y|%z|%u|%g' /proc/$$/fd/3 2>/dev/null || stat -L -c '%f|%s|%y|%z|%u|%g' "$B") || { exec 3<&-; return 1; }
  printf '%s\n' "$s"
  z=${'$'}{s#*|}; z=${'$'}{z%%|*}
  if [ "$z" -le "$2" ]; then cat <&3; s=$?
  # A large file streams through an exec of its own, which checks it is still this file (inode, size, mtime).
  else printf '%s\n' "$O" && { stat -L -c %i:%s:%Y /proc/$$/fd/3 2>/dev/null || stat -L -c %i:%s:%Y "$B"; }; s=$?
  fi
  exec 3<&-; return $s
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
  indir 2>/dev/null; e=$?; [ $e = 3 ] && return 3; [ $e = 0 ] || return 0
  shift
  find . -mindepth 1 "$@" -path "*$NL*" -exec stat -c "$SOH%f|%s|%y|%z|%u|%g" {} \; -exec printf '%s\0' {} \; \
    -o ! -path "*$NL*" -exec stat -c '%f|%s|%y|%z|%u|%g|%n' {} +
  s=$?; cd /; return $s
}
FL() { chk "$1" || return $?; [ -d "$P" ] || return 101; indir || return $?; shift; find . "$@" -type f -print0; s=$?; cd /; return $s; }
PW() {
  tgt "$2" || return $?
  ind || return $?
  if [ -d "$B" ]; then return 102; fi
  if [ "$1" = create ] && { [ -e "$B" ] || [ -L "$B" ]; }; then return 103; fi
  printf '%s\n' "$PWD"
  if [ -f "$B" ]; then stat -L -c '%a:%u:%g' "$B"; fi
}
WR() {
  tgt "$2"; e=$?
  [ $e = 0 ] && { ind; e=$?; }
  if [ $e = 0 ]; then T=.ctxfs-$N-$i.tmp; else T=/dev/null; fi
  # \`true\`, not \`:\`: a redirection that fails on a special built-in ends a non-interactive shell, and with it the session.
  if [ "$3" = 0 ]; then true > "$T" || return 1
  elif true > "$T"; then
    dd bs="$3" count=1 iflag=fullblock of="$T" || { s=$?; rm -f "$T"; return $s; }
  else dd bs="$3" count=1 iflag=fullblock of=/dev/null 2>/dev/null; return 1
  fi
  [ $e = 0 ] || return $e
  L CM "$1" "$T" "$B" "$4" "$5" "$6"
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
  # The temp was written in the directory the write began in; taken by name from the one entered now, so a
  # directory swapped in between fails the commit instead of moving a file in from elsewhere.
  ind || { s=$?; rm -f "$T"; return $s; }
  [ "$PWD/${'$'}{T##*/}" = "$T" ] || { rm -f "$T"; printf '%s: No such file or directory\n' "$2" >&2; return 1; }
  L CM "$1" "./${'$'}{T##*/}" "$B" "$5" "$6" "$7"
}
RMT() { for t in "$@"; do rm -f "$t" "$t".p* "$t".a; done; }
CLR() {
  chk '' || return $?
  indir || return $?
  for e in * .*; do
    case $e in .|..) continue ;; esac
    if [ -e "$e" ] || [ -L "$e" ]; then rm -rf -- "$e" || return 1; fi
  done
}
# The restores in progress: a file per restore in $RG, named by its token and holding the pid of the helper shell
# working on it. A restore's directories in the root (.ctxfs-<token>-restore, .ctxfs-<token>-old) are left alone while
# that shell lives; once it is gone (the swap could not delete them, or the client or helper was killed) they are
# leftovers, swept by the next snapshot or restore (SWE). Beside the commit lock, so every session agrees.
RGN() {
  [ -n "$LK" ] || LKN
  case $LK in /tmp/*) RG=/tmp/.ctxfs-restores-${'$'}{LK##*-} ;; *) RG=$RR/.ctxfs-000000000000000000000000-restores ;; esac
}
# Whether the shell registered for restore $1 is alive (/proc sees another user's process, kill -0 may not).
RGL() { p=; read -r p 2>/dev/null < "$RG/$1"; [ -n "$p" ] && { [ -d /proc/$p ] || kill -0 "$p" 2>/dev/null; }; }
# World-writable and sticky like /tmp: sessions of every user of the container register there.
RGS() { RGN; { [ -d "$RG" ] || mkdir -m 1777 "$RG" 2>/dev/null || [ -d "$RG" ]; } && printf '%s\n' $$ > "$RG/$1"; }
# Ends restore $1 that did not swap: its staging directory and registration go.
RGX() { RGN; rm -rf -- "$RR/.ctxfs-$1-restore"; rm -f "$RG/$1"; }
# Under the commit lock, so a sweep and a restore taking back its registration (a lost session is replaced by one with
# another pid) never both win: a swept restore's registration is gone, and its swap refuses to start.
RGC() {
  [ -f "$RG/$1" ] || { printf 'the restore was interrupted and its staging directory swept; nothing was changed\n' >&2; return 1; }
  printf '%s\n' $$ > "$RG/$1"
}
SWL() {
  for e in "$RR"/.ctxfs-${HEX24}-restore "$RR"/.ctxfs-${HEX24}-old; do
    [ -d "$e" ] && [ ! -L "$e" ] || continue
    t=${'$'}{e##*/.ctxfs-}; t=${'$'}{t%-*}
    RGL "$t" && continue
    rm -f "$RG/$t"
    D="$D ${'$'}{e##*/}"
  done
  for f in "$RG"/*; do [ -f "$f" ] && ! RGL "${'$'}{f##*/}" && rm -f "$f"; done
  return 0
}
# Sweeps the leftovers of restores that are over. The deletes run after the lock is let go (a large tree takes a while).
SWE() {
  D=
  set -- "$RR"/.ctxfs-${HEX24}-restore "$RR"/.ctxfs-${HEX24}-old
  [ -e "$1" ] || [ -e "$2" ] || [ $# -gt 2 ] || return 0
  RGN
  L SWL || return 0
  for e in $D; do rm -rf -- "$RR/$e" 2>/dev/null; done
  return 0
}
# A restore's swap (of restore $1, whose archive unpacked into ./.ctxfs-$1-restore/$2), under its registration, which
# it gives up when done: whatever it could not delete is then a leftover for the next sweep.
SWP() {
  RGN
  L RGC "$1" || return $?
  SWM ".ctxfs-$1-restore" "$2" ".ctxfs-$1-old"; s=$?
  rm -f "$RG/$1"
  return $s
}
# The workspace's entries are moved aside into ./$3, the ones a restore unpacked into ./$1/$2 moved in, then $1 and $3
# removed. Nothing is deleted before everything restored is in place; a move that fails puts back what was moved (SWB),
# so the workspace is either as it was or as the snapshot has it. The directories of restores (this one's, another's
# in progress, leftovers for the sweep) and the registry stay where they are (RSV), and none is taken from an archive.
RSV() { case $1 in .|..|.ctxfs-${HEX24}-restore|.ctxfs-${HEX24}-old|"${'$'}{RG##*/}") return 0 ;; esac; return 1; }
SWM() {
  chk '' || return $?
  indir || return $?
  [ -d "./$1/$2" ] && mkdir -- "./$3" || { cd /; return 1; }
  for e in * .*; do
    RSV "$e" && continue
    { [ -e "$e" ] || [ -L "$e" ]; } || continue
    mv -f -- "$e" "./$3/" || { SWB "$1" "$2" "$3" 1; return 1; }
  done
  for e in "./$1/$2"/* "./$1/$2"/.*; do
    RSV "${'$'}{e##*/}" && continue
    { [ -e "$e" ] || [ -L "$e" ]; } || continue
    mv -f -- "$e" . || { SWB "$1" "$2" "$3" 2; return 1; }
  done
  chmod "$(stat -c %a "./$1/$2")" . 2>/dev/null
  rm -rf -- "./$1" "./$3"
  cd /
  return 0
}
# Undoes a swap that failed at step $4: what came in from ./$1/$2 goes back there (step 2), what was moved aside
# into ./$3 comes back.
SWB() {
  if [ "$4" = 2 ]; then
    for e in * .*; do
      RSV "$e" && continue
      { [ -e "$e" ] || [ -L "$e" ]; } && mv -f -- "$e" "./$1/$2/"
    done
  fi
  for e in "./$3"/* "./$3"/.*; do
    case ${'$'}{e##*/} in .|..) continue ;; esac
    { [ -e "$e" ] || [ -L "$e" ]; } && mv -f -- "$e" .
  done
  rmdir -- "./$3" 2>/dev/null
  cd /
}
# Mount points below the root, one a line: a snapshot would miss what is mounted there and a restore cannot replace it.
MNT() {
  while read -r d m t o; do
    case $m in "$RR"/*) printf '%s\n' "$m" ;; esac
  done < /proc/mounts 2>/dev/null
  return 0
}
MK() { chk "$1" || return $?; ind || return $?; mkdir -- "$B"; }
RMF() { chkp "$1" || return $?; ind || return $?; [ -d "$B" ] && [ ! -L "$B" ] && return 102; L rm -- "$B"; }
RMD() {
  chk "$1" || return $?
  ind || return $?
  if [ "$2" = 1 ]; then rm -rf -- "$B"; return $?; fi
  rmdir -- "$B"
}
# The source of a move or copy, by its directory's real path (checked inside the root); the destination's
# directory is then entered, so what is written lands inside the root.
# A move takes a link itself (chkp); a copy reads what it leads to, so it must lead inside (chk).
src() { "$1" "$2" || return $?; ind || return $?; A=$PWD/${'$'}{B#./}; cd /; }
MV() {
  src chkp "$1" || return $?
  chk "$2" || return $?
  ind || return $?
  if [ -d "$B" ] && [ ! -L "$B" ]; then rmdir -- "$B" || return 104; elif [ -L "$B" ]; then rm -f -- "$B"; fi
  L mv -f -- "$A" "$B"
}
CP() {
  src chk "$1" || return $?
  chk "$2" || return $?
  ind || return $?
  [ -d "$B" ] && [ ! -L "$B" ] && return 102
  T=.ctxfs-$N-$i.tmp
  cp -- "$A" "$T" && chmod "$(stat -L -c %a "$A")" "$T" && L mv -f -- "$T" "$B"
  s=$?; [ $s = 0 ] || rm -f "$T"; return $s
}
CPR() {
  src chk "$1" || return $?
  chk "$2" || return $?
  ind || return $?
  [ -e "$B" ] && return 103
  # -H: a link named as the source is copied as what it leads to, as the host copies it; links inside stay links
  # (the client refused a tree holding a link that leads out, or would from the copy, before asking).
  cp -RH -- "$A" "$B"
}
# A recursive copy's link $2 with the text $1 as RL tells it: an absolute one (from the root) made absolute again.
LN() {
  chk "$2" || return $?
  ind || return $?
  case $1 in /) t=$RR ;; /*) t=$RR$1 ;; *) t=$1 ;; esac
  ln -s -- "$t" "$B"
}
while IFS= read -r l; do
  i=${'$'}{l%% *}
  eval "${'$'}{l#* }"
  r=$?
  cd /
  printf '\036%s:%s:%d\n' "$N" "$i" "$r"
  printf '\036%s:%s\n' "$N" "$i" >&2
done
`;
