# Pando guest library: sourced by /init in every kernel-client VM (busybox ash).
#
# Parameters come from the kernel command line as PANDO_NAME=value words:
#   PANDO_SERVER     NFS server address as the guest sees it (10.0.2.2)
#   PANDO_PORT       NFS port;  PANDO_MOUNTPORT  MOUNT port (NFSv3)
#   PANDO_EXPORT3    path to mount over NFSv3;  PANDO_EXPORT4  over NFSv4.x
#   PANDO_RUN        name of this VM's run: its files go under <mount>/<run>/
#   PANDO_CLIENT_ID  nfs4_unique_id given to the nfs module (one per VM)
#   PANDO_MOUNT_OPTS extra mount options (comma separated), optional
#   PANDO_MODOPTS    module options, MODULE:KEY=VAL[:KEY=VAL],MODULE:...
#                    (a kernel ignores, with a warning, options it lacks)
#   PANDO_NFS3_LOCKS 1: NFSv3 mounts lock through the server (NLM); rpcbind
#                    and rpc.statd run in the guest (nsm_up).  Otherwise
#                    they mount with nolock: locks stay in the guest.
# The scenario is /pando/scenario.sh (from the per-test archive): a list of
#   step SCENARIO VERS [ARGS...]
# lines.  Each step mounts VERS (v3, v4.1, v4.2) at /mnt/VERS if needed, runs
# sc_SCENARIO in a fresh directory <mount>/<run>/s<N>-<scenario> with `set -e`,
# and prints one result line on the second serial port (/dev/ttyS1):
#   PANDO {"event":"step","n":N,"scenario":...,"status":"pass"|"fail",
#          "rc":..,"seconds":..,"metrics":{..},"output":"<the guest's own words>"}
# Other events: init (first thing /init does), ready (modules + network up),
# error (setup failed), done (last line before poweroff).

RESULTS=/dev/ttyS1
STEP=0
FAILED=0
OUT_LIMIT=8000

# ---- output ---------------------------------------------------------------
emit() { echo "PANDO $1" > "$RESULTS"; }
say() { echo "pando: $*" > /dev/console; }
now() { read -r up _ < /proc/uptime; echo "$up"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 0.001; printf "%.1f", n / s }'; }

# stdin -> a JSON string literal (the last $1 bytes, non-ASCII as '?')
json_str() {
  tail -c "${1:-$OUT_LIMIT}" | tr -c '\11\12\40-\176' '?' |
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' |
    awk 'BEGIN { ORS = ""; printf "\"" } { if (NR > 1) printf "\\n"; printf "%s", $0 } END { printf "\"" }'
}
metric() { echo "$1 $2" >> /tmp/metrics; }
metrics_json() {
  awk 'BEGIN { printf "{"; n = 0 }
       NF >= 2 { k = $1; $1 = ""; v = substr($0, 2); gsub(/["\\]/, "", v)
                 if (n++) printf ","
                 if (v ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/) printf "\"%s\":%s", k, v
                 else printf "\"%s\":\"%s\"", k, v }
       END { printf "}" }' /tmp/metrics
}
fatal() {
  say "setup failed: $*"
  emit "{\"event\":\"error\",\"output\":$(echo "$*" | json_str)}"
  finish
}

# ---- setup ----------------------------------------------------------------
parse_params() {
  for w in $(cat /proc/cmdline); do
    case "$w" in
      PANDO_*=*) eval "${w%%=*}='${w#*=}'" ;;
    esac
  done
  S=${PANDO_SERVER:-10.0.2.2}
  P=${PANDO_PORT:-2049}
  MP=${PANDO_MOUNTPORT:-20048}
  PANDO_RUN=${PANDO_RUN:-run}
}

load_modules() {
  while read -r m; do
    [ -n "$m" ] || continue
    opts=""
    if [ "$m" = nfs ] && [ -n "$PANDO_CLIENT_ID" ]; then opts="nfs4_unique_id=$PANDO_CLIENT_ID"; fi
    for item in $(echo "$PANDO_MODOPTS" | tr ',' ' '); do
      [ "${item%%:*}" = "$m" ] && opts="$opts $(echo "${item#*:}" | tr ':' ' ')"
    done
    insmod "/lib/modules/$m.ko" $opts > /tmp/insmod.out 2>&1 ||
      fatal "insmod $m $opts failed: $(cat /tmp/insmod.out)"
  done < /lib/modules/load.list
}

net_up() {
  ip link set lo up
  i=0
  while [ ! -e /sys/class/net/eth0 ]; do
    i=$((i + 1)); [ $i -le 100 ] || fatal "no eth0 after 10 s: $(ls /sys/class/net)"
    sleep 0.1
  done
  ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
    ip route add default via 10.0.2.2 || fatal "network setup failed"
}

# The NFSv3 client's lock manager (lockd, in the kernel) registers with the
# local rpcbind when the first locking mount comes, and asks the local
# rpc.statd to monitor the server (SM_MON) before its first lock there; with
# neither, mount and locks fail.  statd -L: this guest booted fresh and has
# nobody to tell of a reboot (sm-notify).  The binaries and their libraries
# come from the host (tests/pando_testing/guest_nsm.py).
nsm_up() {
  rpcbind -f > /tmp/rpcbind.log 2>&1 &
  i=0
  until [ -S /run/rpcbind.sock ]; do
    i=$((i + 1)); [ $i -le 100 ] || fatal "rpcbind did not start: $(cat /tmp/rpcbind.log)"
    sleep 0.1
  done
  rpc.statd -F -d -L > /tmp/statd.log 2>&1 &
  i=0
  until grep -q "Waiting for client connections" /tmp/statd.log; do
    i=$((i + 1)); [ $i -le 100 ] || fatal "rpc.statd did not start: $(cat /tmp/statd.log)"
    sleep 0.1
  done
  say "NFSv3 locking: rpcbind and rpc.statd running"
}

# ---- mounting -----------------------------------------------------------------
is_mounted() { grep -q " /mnt/$1 nfs" /proc/mounts; }

mount_nfs() {  # VERS
  v=$1
  is_mounted "$v" && return 0
  mkdir -p "/mnt/$v"
  case "$v" in
    v3) opts="vers=3,proto=tcp,addr=$S,port=$P,mountport=$MP,mountproto=tcp"
        [ "$PANDO_NFS3_LOCKS" = 1 ] || opts="$opts,nolock"
        src="$S:$PANDO_EXPORT3" ;;
    v4.1|v4.2) opts="vers=${v#v},proto=tcp,addr=$S,port=$P"
        src="$S:$PANDO_EXPORT4" ;;
    *) echo "unknown NFS version '$v' (want v3, v4.1 or v4.2)"; return 2 ;;
  esac
  [ -z "$PANDO_MOUNT_OPTS" ] || opts="$opts,$PANDO_MOUNT_OPTS"
  mount -t nfs -o "$opts" "$src" "/mnt/$v" || { echo "mount -t nfs -o $opts $src /mnt/$v failed"; return 1; }
}

# Inside a step: unmount and mount again, so what follows is read from the server.
remount() {
  cd /
  umount "/mnt/$VERS" || fail "umount /mnt/$VERS failed"
  mount_nfs "$VERS" || fail "mount $VERS again failed"
  cd "$W"
}

# ---- helpers for scenarios -------------------------------------------------------
fail() { echo "FAIL: $*"; exit 1; }
sha() { sha256sum < "$1" | cut -d' ' -f1; }
size_of() { stat -c %s "$1"; }
# A random file of SIZE bytes in guest memory (made once per boot); prints its path.
# Its sha256 is in PATH.sha.
gen() {
  g=/tmp/data.$1
  if [ ! -f "$g" ]; then
    head -c "$1" /dev/urandom > "$g.tmp" && mv "$g.tmp" "$g"
    sha "$g" > "$g.sha"
  fi
  echo "$g"
}
# check_file FILE REF: same size and sha256 as REF, else a message saying how they differ
check_file() {
  [ -e "$1" ] || { echo "$1 ($VERS): missing"; return 1; }
  want_size=$(size_of "$2"); got_size=$(size_of "$1")
  [ "$got_size" = "$want_size" ] || { echo "size mismatch for $1 ($VERS): expected $want_size bytes, server has $got_size"; return 1; }
  want=$(sha "$2"); got=$(sha "$1")
  [ "$got" = "$want" ] || { echo "sha256 mismatch for $1 ($VERS): wrote $want, read back $got"; return 1; }
}

# must_fail WANT CMD...: CMD fails, and its message has WANT in it (strerror's words)
must_fail() {
  want=$1; shift
  if out=$("$@" 2>&1); then fail "'$*' succeeded, want it to fail with '$want'"; fi
  case "$out" in *"$want"*) ;; *) fail "'$*' failed with '$out', want '$want'" ;; esac
}
# eq WHAT GOT WANT
eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
# wait_for FILE [SECONDS]: until FILE exists
wait_for() {
  i=0
  while [ ! -e "$1" ]; do
    i=$((i + 1)); [ $i -le $((${2:-30} * 20)) ] || fail "$1 did not appear in ${2:-30} s"
    sleep 0.05
  done
}
# opcount OP: how many OP calls /proc/self/mountstats counts for /mnt/$VERS
opcount() {
  awk -v mp="/mnt/$VERS" -v op="$1:" '$1 == "device" { on = ($5 == mp) }
    on && $1 == op { print $2; found = 1; exit } END { if (!found) print 0 }' \
    "${MOUNTSTATS:-/proc/self/mountstats}"
}
# A listing of the tree under . : path, type, links, size (and the target of symlinks)
tree_attrs() {
  find . | sort | while read -r p; do
    if [ -L "$p" ]; then echo "$p link $(stat -c %h "$p") -> $(readlink "$p")"
    elif [ -d "$p" ]; then echo "$p dir $(stat -c %h "$p")"
    else echo "$p $(stat -c '%F %h %s' "$p")"; fi
  done
}

# ---- scenarios (cwd = a fresh directory on the mount; $W = that directory) ----

# Write files of the given sizes, remount, verify size and sha256 of each.
sc_verify() {
  for s in "$@"; do
    src=$(gen "$s")
    t0=$(now); dd if="$src" of="f.$s" bs=1M 2>/dev/null || fail "writing f.$s failed"; t1=$(now)
    metric "write_s.$s" "$(elapsed "$t0" "$t1")"
    metric "sha256.$s" "$(cat "$src.sha")"
  done
  t0=$(now); sync; metric sync_s "$(elapsed "$t0" "$(now)")"
  remount
  bad=0
  for s in "$@"; do
    t0=$(now)
    check_file "f.$s" "/tmp/data.$s" || bad=$((bad + 1))
    metric "read_s.$s" "$(elapsed "$t0" "$(now)")"
  done
  [ $bad -eq 0 ] || fail "$bad of $# files did not read back as written"
}

# A sparse file: holes, 4 KiB at 8 MiB, one byte at the end of 32 MiB.
sc_sparse() {
  src=$(gen 4096)
  for f in f /tmp/ref.sparse; do
    rm -f "$f"; truncate -s 0 "$f"
    dd if="$src" of="$f" bs=4096 seek=2048 conv=notrunc 2>/dev/null
    printf 'Z' | dd of="$f" bs=1 seek=$((32 * 1048576 - 1)) conv=notrunc 2>/dev/null
  done
  sync; remount
  check_file f /tmp/ref.sparse || fail "sparse file did not read back"
  head -c 4096 /dev/zero > /tmp/zero4k
  dd if=f of=/tmp/hole bs=4096 skip=100 count=1 2>/dev/null
  cmp -s /tmp/hole /tmp/zero4k || fail "a hole did not read back as zeros"
  metric apparent_bytes "$(size_of f)"
  metric allocated_bytes $(( $(stat -c %b f) * 512 ))
}

# Appends from separate opens and from one open O_APPEND descriptor.
sc_append() {
  : > /tmp/ref.append
  for i in 1 2 3 4 5; do
    src=$(gen $((i * 1000 + 7)))
    cat "$src" >> f; cat "$src" >> /tmp/ref.append
  done
  exec 4>> f
  for s in 1 4096 65537; do
    src=$(gen $s); cat "$src" >&4; cat "$src" >> /tmp/ref.append
  done
  exec 4>&-
  sync; remount
  check_file f /tmp/ref.append || fail "appended file did not read back"
}

# Shrink, extend (zero fill) and empty a file; each checked after a remount.
sc_truncate() {
  src=$(gen 1048576)
  dd if="$src" of=f bs=1M 2>/dev/null
  truncate -s 1000 f; head -c 1000 "$src" > /tmp/ref.trunc
  remount; check_file f /tmp/ref.trunc || fail "after truncate to 1000"
  truncate -s 3000 f; head -c 2000 /dev/zero >> /tmp/ref.trunc
  remount; check_file f /tmp/ref.trunc || fail "after extending to 3000"
  printf 'tail' >> f; printf 'tail' >> /tmp/ref.trunc
  remount; check_file f /tmp/ref.trunc || fail "after appending to the extended file"
  truncate -s 0 f
  remount; [ "$(size_of f)" = 0 ] || fail "after truncate to 0: size $(size_of f)"
}

# Renames: plain, over an existing file, across directories, of a directory.
sc_rename() {
  s1=$(gen 4096); s2=$(gen 1)
  cp "$s1" a; cp "$s2" b; mkdir d d2
  mv a c; mv c b; mv b d/e; mv d d2/d
  remount
  left=$(ls -A | tr '\n' ' ')
  [ "$left" = "d2 " ] || fail "expected only d2 after the renames, found: $left"
  check_file d2/d/e "$s1" || fail "renamed file lost its data"
}

# Unlink a file that is still open: reads through the descriptor still work
# (the client "silly renames" it to .nfsXXXX), and it goes away on close.
sc_unlink_open() {
  src=$(gen "${1:-1048577}")
  dd if="$src" of=f bs=1M conv=fsync 2>/tmp/dd.err || fail "writing f: $(cat /tmp/dd.err)"
  exec 3< f
  rm f
  [ ! -e f ] || fail "f still visible after unlink"
  metric silly_renamed "$(ls -A | grep -c '^\.nfs' || true)"
  got=$(sha256sum <&3 | cut -d' ' -f1)
  exec 3<&-
  [ "$got" = "$(cat "$src.sha")" ] || fail "read through the open descriptor after unlink: sha256 $got, want $(cat "$src.sha")"
  i=0
  while [ -n "$(ls -A)" ]; do
    i=$((i + 1)); [ $i -le 100 ] || fail "directory not empty 10 s after close: $(ls -A)"
    sleep 0.1
  done
}

# A directory tree (DEPTH levels, FANOUT dirs and files per level): listing and
# contents survive a remount, and rm -rf empties it.
sc_tree() {
  depth=${1:-3}; fan=${2:-3}
  dirs=.
  for level in $(seq 1 "$depth"); do
    next=""
    for d in $dirs; do
      for i in $(seq 1 "$fan"); do
        mkdir "$d/d$i"; echo "$d/f$i at level $level" > "$d/f$i"
        next="$next $d/d$i"
      done
    done
    dirs=$next
  done
  find . | sort > /tmp/tree.list
  find . -type f | sort | xargs sha256sum > /tmp/tree.sums
  metric entries "$(wc -l < /tmp/tree.list)"
  remount
  find . | sort > /tmp/tree.list2
  cmp -s /tmp/tree.list /tmp/tree.list2 || fail "tree listing changed across remount: $(diff /tmp/tree.list /tmp/tree.list2 | head -20)"
  sha256sum -c -s /tmp/tree.sums || fail "tree contents changed: $(sha256sum -c /tmp/tree.sums 2>&1 | grep -v ': OK' | head)"
  t0=$(now); rm -rf ./*; metric rm_rf_s "$(elapsed "$t0" "$(now)")"
  remount
  [ -z "$(ls -A)" ] || fail "tree not empty after rm -rf: $(ls -A)"
}

# Create N empty files, stat them (after a remount: each is a LOOKUP), list,
# unlink; timings as metrics.
sc_metastorm() {
  n=${1:-200}
  t0=$(now); i=0
  while [ $i -lt "$n" ]; do : > "f$i"; i=$((i + 1)); done
  t1=$(now); metric create_s "$(elapsed "$t0" "$t1")"; metric creates_per_s "$(rate "$n" "$(elapsed "$t0" "$t1")")"
  remount
  t0=$(now); i=0
  while [ $i -lt "$n" ]; do [ -e "f$i" ] || fail "f$i missing after remount"; i=$((i + 1)); done
  t1=$(now); metric stat_s "$(elapsed "$t0" "$t1")"; metric stats_per_s "$(rate "$n" "$(elapsed "$t0" "$t1")")"
  t0=$(now); count=$(ls | wc -l); t1=$(now)
  metric readdir_s "$(elapsed "$t0" "$t1")"
  [ "$count" = "$n" ] || fail "ls shows $count entries, want $n"
  t0=$(now); rm -f f*; t1=$(now)
  metric unlink_s "$(elapsed "$t0" "$t1")"; metric unlinks_per_s "$(rate "$n" "$(elapsed "$t0" "$t1")")"
  remount
  [ -z "$(ls -A)" ] || fail "files left after unlink: $(ls -A | head)"
}

# dd throughput: write MIB MiB (conv=fsync), remount, read it back.
sc_dd() {
  mb=${1:-64}
  t0=$(now); dd if=/dev/zero of=f bs=1M count="$mb" conv=fsync 2>/tmp/dd.err || fail "dd write: $(cat /tmp/dd.err)"; t1=$(now)
  metric write_MBps "$(rate "$mb" "$(elapsed "$t0" "$t1")")"; metric write_s "$(elapsed "$t0" "$t1")"
  remount
  t0=$(now); dd if=f of=/dev/null bs=1M 2>/tmp/dd.err || fail "dd read: $(cat /tmp/dd.err)"; t1=$(now)
  metric read_MBps "$(rate "$mb" "$(elapsed "$t0" "$t1")")"; metric read_s "$(elapsed "$t0" "$t1")"
  [ "$(size_of f)" = $((mb * 1048576)) ] || fail "size $(size_of f) after dd"
}

# Write SIZE bytes, sync, drop the page cache, read back: on one mount (no
# remount), so its mountstats show both the WRITEs and the READs.
sc_io() {
  src=$(gen "${1:-1048577}")
  dd if="$src" of=f bs=1M 2>/dev/null || fail "write failed"
  sync; echo 3 > /proc/sys/vm/drop_caches
  check_file f "$src" || fail "read back after dropping caches"
}

# Two clients: publish ME.bin and ME.sha in <mount>/exchange, wait for OTHER's,
# check OTHER's data from this client.
sc_exchange() {
  me=$1; other=$2; size=${3:-1048577}
  d=/mnt/$VERS/exchange; mkdir -p "$d"
  src=$(gen "$size")
  dd if="$src" of="$d/$me.bin" bs=1M 2>/dev/null || fail "writing $me.bin failed"
  (cd "$d" && sha256sum "$me.bin" > "$me.sha.tmp" && mv "$me.sha.tmp" "$me.sha") || fail "publishing $me.sha failed"
  i=0
  while ! cat "$d/$other.sha" > /tmp/other.sha 2>/dev/null; do
    i=$((i + 1)); [ $i -le 900 ] || fail "$other.sha did not appear in 180 s"
    sleep 0.2
  done
  metric waited_s "$(awk -v i=$i 'BEGIN { printf "%.1f", i * 0.2 }')"
  (cd "$d" && sha256sum -c /tmp/other.sha) || fail "$other's data read from this client does not match $other's sha256"
}

# POSIX namespace work: mkdir -p, rename over a file and over an empty
# directory, the errors rename(2), rmdir and link must give, hard links and
# link counts, symlinks, unlink of an open file; what the server kept is
# checked again after a remount.
sc_namespace() {
  mkdir -p a/b/c/d/e
  [ -d a/b/c/d/e ] || fail "mkdir -p a/b/c/d/e made no a/b/c/d/e"
  mkdir -p a/b/c/d/e || fail "mkdir -p of an existing tree failed"
  must_fail "File exists" mkdir a/b
  # rename over a file: the target's old data goes, the source name goes
  echo one > a/f1; echo two > a/f2
  mv a/f1 a/f2
  eq "a/f2 after mv a/f1 a/f2" "$(cat a/f2)" one
  [ ! -e a/f1 ] || fail "a/f1 still there after mv a/f1 a/f2"
  # a directory over an empty directory: allowed; over a non-empty one: ENOTEMPTY
  mkdir e1 e2; echo x > e1/x
  ptool rename e1 e2
  [ -f e2/x ] && [ ! -e e1 ] || fail "rename e1 over the empty e2: $(ls -AR)"
  mkdir n2; echo y > n2/y
  must_fail "Directory not empty" ptool rename e2 n2
  [ -f e2/x ] && [ -f n2/y ] || fail "a failed rename changed something: $(ls -AR)"
  # type mismatches, a directory into itself, rmdir of a non-empty directory
  echo z > z
  must_fail "Is a directory" ptool rename z n2
  must_fail "Not a directory" ptool rename n2 z
  must_fail "Invalid argument" ptool rename a a/b/c/inside
  must_fail "Directory not empty" rmdir n2
  must_fail "No such file or directory" ptool rename nothing-here elsewhere
  # rename within a directory and across directories, of files and directories
  mv z a/b/z2; mv a/b/c a/c2; mv e2 a/c2/e3
  [ -f a/b/z2 ] && [ -f a/c2/e3/x ] && [ -d a/c2/d/e ] || fail "cross-directory renames: $(find . | sort)"
  # hard links: one inode, counts go up and down, data shared
  echo data > h1; mkdir hl
  ln h1 h2; ln h1 hl/h3
  eq "links of h1 with 3 names" "$(stat -c %h h1)" 3
  eq "inode of h2" "$(stat -c %i h2)" "$(stat -c %i h1)"
  echo more >> hl/h3
  eq "h2 after appending through hl/h3" "$(cat h2)" "$(printf 'data\nmore')"
  rm h1
  eq "links of h2 after rm h1" "$(stat -c %h h2)" 2
  must_fail "Operation not permitted" ln a hardlink-to-dir
  must_fail "File exists" ln h2 hl/h3
  # directory link counts: 2 + subdirectories
  mkdir L L/s1 L/s2 L/s3
  eq "links of L with 3 subdirectories" "$(stat -c %h L)" 5
  rmdir L/s3; mv L/s2 L2
  eq "links of L after rmdir and mv of a subdirectory" "$(stat -c %h L)" 3
  # symlinks: relative, absolute and dangling, to a directory, long targets
  ln -s h2 sl
  eq "readlink sl" "$(readlink sl)" h2
  eq "cat through sl" "$(cat sl)" "$(cat h2)"
  ln -s /nowhere/at/all dangling
  [ -L dangling ] && [ ! -e dangling ] || fail "dangling symlink: $(ls -l dangling)"
  ln -s a/c2 dl
  [ -d dl/d/e ] || fail "symlink to a directory does not resolve: $(ls -l dl)"
  long=$(head -c 1000 /dev/zero | tr '\0' 'x')
  ln -s "$long" longlink
  eq "readlink of a 1000-byte target" "$(readlink longlink)" "$long"
  eq "size of a symlink" "$(stat -c %s longlink)" 1000
  mv sl sl2; rm dangling
  [ -f h2 ] || fail "removing a symlink removed its target"
  # unlink of an open (inline, small) file: the client silly-renames it;
  # reads and writes through the descriptor go on, and it goes at close
  printf 'open and unlinked' > u
  exec 5<> u
  rm u
  [ ! -e u ] || fail "u still visible after unlink"
  printf 'OPEN' >&5
  got=$(cat <&5)
  exec 5>&-
  eq "reading on through the descriptor after unlink" "$got" " and unlinked"
  i=0
  while ls -A | grep -q '^\.nfs'; do
    i=$((i + 1)); [ $i -le 100 ] || fail "silly-renamed file still there 10 s after close: $(ls -A)"
    sleep 0.1
  done
  # everything as the server kept it
  tree_attrs > /tmp/ns.before
  remount
  tree_attrs > /tmp/ns.after
  cmp -s /tmp/ns.before /tmp/ns.after || fail "the tree changed across a remount: $(diff /tmp/ns.before /tmp/ns.after)"
  eq "h2 after remount" "$(cat h2)" "$(printf 'data\nmore')"
  eq "links of h2 after remount" "$(stat -c %h h2)" 2
  eq "readlink longlink after remount" "$(readlink longlink)" "$long"
  metric entries "$(wc -l < /tmp/ns.after)"
  rm -rf ./*
  [ -z "$(ls -A)" ] || fail "not empty after rm -rf: $(ls -A)"
}

# chmod, chown, truncate, touch -d, set-id bits, what a user who does not
# own a file may not change; the attributes again after a remount.  (`ptool as UID GID` runs a command
# as another user: busybox's setpriv cannot change ids.)
sc_attrs() {
  printf 'hello world' > f
  chmod 0751 f
  eq "mode after chmod 0751" "$(stat -c %a f)" 751
  chown 1234:5678 f
  eq "owner after chown 1234:5678" "$(stat -c %u:%g f)" 1234:5678
  chmod 4755 f; chown 4321 f
  eq "mode of a set-uid file after chown" "$(stat -c %a f)" 755
  chmod 2755 f; chgrp 99 f
  eq "mode of a set-gid (group exec) file after chgrp" "$(stat -c %a f)" 755
  truncate -s 100000 f
  eq "size after truncate -s 100000" "$(stat -c %s f)" 100000
  truncate -s 5 f
  eq "content after truncate -s 5" "$(cat f)" hello
  touch -d '2001-02-03 04:05:06' f
  eq "mtime after touch -d" "$(stat -c %Y f)" 981173106
  touch -a -d '1999-12-31 23:59:59' f
  eq "atime after touch -a -d" "$(stat -c %X f)" 946684799
  eq "mtime after touch -a" "$(stat -c %Y f)" 981173106
  # what others may not do to a file they do not own (the server checks)
  chown 1234:5678 f; chmod 0640 f
  must_fail "Operation not permitted" ptool as 1235 5678 chmod 0777 f
  must_fail "Operation not permitted" ptool as 1235 5678 chown 1235 f
  must_fail "Operation not permitted" ptool as 1235 5678 touch -d '2002-01-01 00:00:00' f
  must_fail "Permission denied" ptool as 1235 5678 touch f
  must_fail "Permission denied" ptool as 1235 5678 truncate -s 0 f
  must_fail "Permission denied" ptool as 1235 5679 cat f
  eq "the group reads a 0640 file" "$(ptool as 1235 5678 cat f)" hello
  ptool as 1234 5678 chmod 0600 f || fail "the owner cannot chmod its own file"
  must_fail "Permission denied" ptool as 1235 5678 cat f
  eq "the owner reads its 0600 file" "$(ptool as 1234 5678 cat f)" hello
  eq "mode after the owner's chmod" "$(stat -c %a f)" 600
  mkdir d; chown 1234:5678 d; chmod 0710 d; touch -d '2003-04-05 06:07:08' d
  stat -c '%n %a %u:%g %s %Y %X' f d > /tmp/attrs.before
  remount
  stat -c '%n %a %u:%g %s %Y %X' f d > /tmp/attrs.after
  cmp -s /tmp/attrs.before /tmp/attrs.after || fail "attributes changed across a remount: $(diff /tmp/attrs.before /tmp/attrs.after)"
}

# A set-gid directory passes its group on (BSD group semantics, what Linux
# file systems do): to the files made in it, and to its subdirectories
# with the set-gid bit itself.
sc_sgid() {
  mkdir g; chgrp 777 g; chmod 2775 g
  touch g/file; mkdir g/sub
  eq "group of a file made in a set-gid directory" "$(stat -c %g g/file)" 777
  eq "group of a directory made in a set-gid directory" "$(stat -c %g g/sub)" 777
  eq "mode of a directory made in a set-gid directory (umask 022)" "$(stat -c %a g/sub)" 2755
  remount
  eq "group and mode of g/sub after a remount" "$(stat -c %g:%a g/sub)" 777:2755
}

# Who may change a directory's names: a user without write permission on
# a directory can create, link, rename and remove nothing in it; one
# without search permission cannot reach into it; in a sticky (1777)
# directory only a file's owner removes or renames it.  The Linux client
# does not check write permission on directories itself (nfs_permission
# leaves that to the server), so each refusal here is the server's.
sc_perms() {
  echo root > rootfile; mkdir rootdir; chmod 0755 .
  mkdir priv; chmod 0700 priv; touch priv/x
  for c in "touch newfile" "mkdir newdir" "ln -s x newlink" "mknod newfifo p" \
           "ln rootfile newhard" "mv rootfile moved" "rm -f rootfile" "rmdir rootdir"; do
    if out=$(ptool as 1235 5679 sh -c "$c" 2>&1); then
      echo "ALLOWED: user 1235 in root's 0755 directory: $c"
    else
      case "$out" in *"Permission denied"*|*"Operation not permitted"*) ;;
        *) echo "refused with an unexpected error: $c: $out" ;; esac
    fi
  done > /tmp/perms.out
  for c in "ls priv" "cat priv/x" "touch priv/y" "rm -f priv/x"; do
    if out=$(ptool as 1235 5679 sh -c "$c" 2>&1); then
      echo "ALLOWED: user 1235 in root's 0700 directory: $c"
    fi
  done >> /tmp/perms.out
  # what was left behind tells which refusals were only the client's
  ls -A > /tmp/perms.ls
  chmod 1777 .
  ptool as 1235 5679 touch mine || fail "user 1235 cannot create in a 1777 directory"
  eq "owner of a file a user made" "$(stat -c %u:%g mine)" 1235:5679
  must_fail "Operation not permitted" ptool as 1236 5679 rm -f mine
  must_fail "Operation not permitted" ptool as 1236 5679 mv mine theirs
  ptool as 1235 5679 rm -f mine || fail "the owner cannot remove its file from a sticky directory"
  chmod 0755 .
  if [ -s /tmp/perms.out ]; then
    cat /tmp/perms.out
    fail "$(grep -c ALLOWED /tmp/perms.out) operations a user may not do were done; left: $(tr '\n' ' ' < /tmp/perms.ls)"
  fi
}

# N entries in one directory: created, counted with an unsorted readdir
# (`ls -f | wc -l`; busybox ls has no -f, ptool ls is the same readdir loop)
# after a remount, every name exactly once, then removed.
sc_bigdir() {
  n=${1:-10000}
  t0=$(now); i=0
  while [ $i -lt "$n" ]; do : > "e$i"; i=$((i + 1)); done
  t1=$(now); metric create_s "$(elapsed "$t0" "$t1")"; metric creates_per_s "$(rate "$n" "$(elapsed "$t0" "$t1")")"
  remount
  t0=$(now); count=$(ptool ls . | wc -l); t1=$(now)
  metric readdir_s "$(elapsed "$t0" "$t1")"
  eq "entries readdir returns (ls -f | wc -l)" "$count" $((n + 2))
  eq "entries ls -a shows" "$(ls -a | wc -l)" $((n + 2))
  ptool ls . | grep -v '^\.\.\?$' | sort > /tmp/bigdir.got
  seq 0 $((n - 1)) | sed 's/^/e/' | sort > /tmp/bigdir.want
  dups=$(uniq -d /tmp/bigdir.got | head -5)
  [ -z "$dups" ] || fail "readdir returned names twice: $dups"
  cmp -s /tmp/bigdir.got /tmp/bigdir.want || fail "readdir names differ from those created: $(diff /tmp/bigdir.want /tmp/bigdir.got | head -10)"
  eq "links of the directory" "$(stat -c %h .)" 2
  t0=$(now); find . -name 'e*' -type f -exec rm -f {} +; t1=$(now)
  metric unlink_s "$(elapsed "$t0" "$t1")"; metric unlinks_per_s "$(rate "$n" "$(elapsed "$t0" "$t1")")"
  remount
  [ -z "$(ls -A)" ] || fail "entries left after removing them all: $(ls -A | head)"
}

# Byte-range and whole-file locks between two processes of this guest
# (ptool lock).  Over NFSv4.1 the server arbitrates: both processes are
# lock owners of one client, and the LOCK count in mountstats proves the
# requests reached it.  (NFSv3 mounts use nolock: locks stay in the client.)
sc_locks() {
  : > f
  src=$(gen 1048577); dd if="$src" of=big bs=1M 2>/dev/null
  lock0=$(opcount LOCK)
  for file in f big; do
    # an exclusive lock held by A: B can take neither kind, F_GETLK sees it
    rm -f held release
    ptool lock -x "$file" sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' > a.out 2>&1 &
    a=$!
    wait_for held
    must_fail "Resource temporarily unavailable" ptool lock -n -x "$file"
    must_fail "Resource temporarily unavailable" ptool lock -n -s "$file"
    case "$(ptool lock -g "$file")" in "conflict W 0:0 "*) ;; *) fail "F_GETLK on $file: $(ptool lock -g "$file"), want conflict W 0:0";; esac
    # B blocks until A lets go
    ptool lock -t 60 -x "$file" > b.out 2>&1 &
    b=$!
    sleep 1
    kill -0 $b 2>/dev/null || fail "B did not wait for A's lock on $file: $(cat b.out)"
    touch release
    wait $a || fail "A failed: $(cat a.out)"
    wait $b || fail "B never got the lock on $file after A released it: $(cat b.out)"
    metric "blocked_wait_s.$file" "$(awk '/^locked/ { print $NF }' b.out)"
    ptool lock -n -x "$file" > /dev/null || fail "$file still locked after A and B exited"
  done
  # byte ranges: write locks on 0:100 and shared ones on 1000:100
  rm -f held release held2
  ptool lock -x -r 0:100 f sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' > a.out 2>&1 &
  a=$!
  ptool lock -s -r 1000:100 f sh -c 'touch held2; while [ ! -e release ]; do sleep 0.05; done' > a2.out 2>&1 &
  a2=$!
  wait_for held; wait_for held2
  ptool lock -n -x -r 100:100 f > /dev/null || fail "W 100:100 refused next to W 0:100"
  must_fail "Resource temporarily unavailable" ptool lock -n -x -r 99:2 f
  must_fail "Resource temporarily unavailable" ptool lock -n -s -r 50:1 f
  ptool lock -n -s -r 1000:10 f > /dev/null || fail "R 1000:10 refused beside a shared R 1000:100"
  must_fail "Resource temporarily unavailable" ptool lock -n -x -r 1050:1 f
  must_fail "Resource temporarily unavailable" ptool lock -n -x f
  ptool lock -n -x -r 2000:0 f > /dev/null || fail "W 2000:EOF refused (no lock there)"
  case "$(ptool lock -g -r 1090:20 f)" in "conflict R 1000:100 "*) ;; *) fail "F_GETLK 1090:20: $(ptool lock -g -r 1090:20 f), want conflict R 1000:100";; esac
  touch release; wait $a; wait $a2
  # flock(2) and OFD locks (the NFS client makes both whole-file or ranged POSIX locks on the server)
  rm -f held release
  ptool lock -k flock -x f sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' > a.out 2>&1 &
  a=$!
  wait_for held
  must_fail "Resource temporarily unavailable" ptool lock -k flock -n -x f
  must_fail "Resource temporarily unavailable" ptool lock -k flock -n -s f
  touch release; wait $a
  ptool lock -k flock -n -x f > /dev/null || fail "flock still held after its holder exited"
  rm -f held release
  ptool lock -k ofd -x -r 0:10 f sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' > a.out 2>&1 &
  a=$!
  wait_for held
  must_fail "Resource temporarily unavailable" ptool lock -k ofd -n -x -r 5:1 f
  ptool lock -k ofd -n -x -r 10:10 f > /dev/null || fail "OFD W 10:10 refused next to OFD W 0:10"
  touch release; wait $a
  metric lock_calls $(( $(opcount LOCK) - lock0 ))
  metric lockt_calls "$(opcount LOCKT)"
}

# NFSv3 locking through the server (a VM made with nfs3_locks: NLM, the
# guest's rpcbind and rpc.statd up): the mount has local_lock=none, so
# every lock goes to the server's NLM, which arbitrates between the two
# processes (lock owners) of this guest as between hosts.
sc_nlm() {
  grep -q " /mnt/$VERS nfs .*local_lock=none" /proc/mounts ||
    fail "locks stay in this guest: $(grep " /mnt/$VERS " /proc/mounts)"
  : > f
  rm -f held release
  ptool lock -x -r 0:100 f sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' > a.out 2>&1 &
  a=$!
  wait_for held
  must_fail "Resource temporarily unavailable" ptool lock -n -x -r 50:10 f
  must_fail "Resource temporarily unavailable" ptool lock -n -s -r 99:1 f
  ptool lock -n -x -r 100:100 f > /dev/null || fail "W 100:100 refused next to W 0:100"
  case "$(ptool lock -g -r 10:10 f)" in "conflict W 0:100 "*) ;; *) fail "F_GETLK 10:10: $(ptool lock -g -r 10:10 f), want conflict W 0:100";; esac
  touch release
  wait $a || fail "the holder failed: $(cat a.out)"
  ptool lock -n -x -r 0:100 f > /dev/null || fail "W 0:100 refused after the holder exited"
}

# NFSv4 open state: one file open read-only, append-only and read-write at
# once by one process (the client upgrades its open stateid), writes through
# two descriptors, another process opening it meanwhile, then the
# descriptors closed one by one (OPEN_DOWNGRADE, CLOSE).  Linux cannot ask
# for share deny modes (open(2) has no O_DENY*), so these are the share
# reservations a stock client makes: access READ/WRITE/BOTH, deny NONE.
sc_opens() {
  o0=$(opcount OPEN); d0=$(opcount OPEN_DOWNGRADE); c0=$(opcount CLOSE)
  printf 'abcdefgh' > f
  exec 3< f
  exec 4>> f
  exec 5<> f
  printf 'XY' >&5
  printf 'tail' >&4
  cat f > /tmp/opens.other
  exec 5>&-
  exec 4>&-
  got=$(cat <&3)
  exec 3<&-
  eq "read through the read-only descriptor" "$got" XYcdefghtail
  eq "read by another process meanwhile" "$(cat /tmp/opens.other)" XYcdefghtail
  metric opens $(( $(opcount OPEN) - o0 ))
  metric open_downgrades $(( $(opcount OPEN_DOWNGRADE) - d0 ))
  metric closes $(( $(opcount CLOSE) - c0 ))
  remount
  eq "after a remount" "$(cat f)" XYcdefghtail
}

# Two guests contend for one lock (run on two VMs at once, same TAG):
# `holder` takes it and keeps it until the contender says "release";
# `contender` checks that it cannot take it, then waits for it (blocking)
# while the holder lets go.  Over NFSv4.1 only the server can arbitrate.
sc_lockpeer() {
  role=$1; tag=$2
  d=/mnt/$VERS/locks-$tag; mkdir -p "$d"; cd "$d"
  case "$role" in
    holder)
      ptool lock -x lk sh -c 'touch held; i=0; while [ ! -e release ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done; sleep 1' > a.out 2>&1 ||
        fail "holder: $(cat a.out)"
      [ -e release ] || fail "holder: the contender never asked for the lock"
      cat a.out ;;
    contender)
      wait_for held 120
      must_fail "Resource temporarily unavailable" ptool lock -n -x lk
      must_fail "Resource temporarily unavailable" ptool lock -n -s lk
      ptool lock -t 60 -x lk > /tmp/b.out 2>&1 &
      b=$!
      sleep 1
      kill -0 $b 2>/dev/null || fail "did not wait for the other guest's lock: $(cat /tmp/b.out)"
      touch release
      wait $b || fail "never got the lock after the other guest released it: $(cat /tmp/b.out)"
      cat /tmp/b.out
      metric blocked_wait_s "$(awk '/^locked/ { print $NF }' /tmp/b.out)" ;;
    *) fail "role $role: want holder or contender" ;;
  esac
}

# Files on both sides of the inline threshold (64 KiB: below it a file
# lives in the metadata store, above it on OSD objects) and the moves
# between them: grow across it by appending and by writing past a hole,
# shrink below it, truncate to 0 and write again, overwrite in the middle.
# Every file is made the same way in /tmp (tmpfs) and compared after a remount.
sc_sizes() {
  for s in 1 4096 65535 65536 65537 1048577; do
    src=$(gen $s); cp "$src" "f.$s"; cp "$src" "/tmp/ref.f.$s"
  done
  src=$(gen 65536); s2=$(gen 4096); big=$(gen 3145728)
  for f in ./x /tmp/ref; do
    # grow by an append of one byte; by appends of 4 KiB pages
    cp "$src" "$f.grow1"; printf 'x' >> "$f.grow1"
    : > "$f.grow4k"; for i in $(seq 1 20); do cat "$s2" >> "$f.grow4k"; done
    # inline with a hole, then past the threshold with a hole
    truncate -s 50000 "$f.hole"; dd if="$s2" of="$f.hole" bs=1000 seek=40 count=1 conv=notrunc 2>/dev/null
    cp "$f.hole" "$f.holebig"; dd if="$s2" of="$f.holebig" bs=1000 seek=100 count=2 conv=notrunc 2>/dev/null
    # object-backed, shrunk below the threshold, then grown past it again
    cp "$big" "$f.shrink"; truncate -s 1000 "$f.shrink"; cat "$src" >> "$f.shrink"
    # truncated to 0 and written again, small
    cp "$big" "$f.zero"; truncate -s 0 "$f.zero"; printf '0123456789' >> "$f.zero"
    # overwrites in the middle: across the 1 MiB stripe unit, and of an inline file
    cp "$big" "$f.over"; dd if="$s2" of="$f.over" bs=1 seek=1046528 count=4096 conv=notrunc 2>/dev/null
    cp "$s2" "$f.overin"; printf 'MIDDLE' | dd of="$f.overin" bs=1 seek=2000 conv=notrunc 2>/dev/null
    # extended by truncate past the threshold (all zeros after 4 KiB)
    cp "$s2" "$f.extend"; truncate -s 200000 "$f.extend"
  done
  names="grow1 grow4k hole holebig shrink zero over overin extend"
  remount
  bad=0
  for s in 1 4096 65535 65536 65537 1048577; do check_file "f.$s" "/tmp/ref.f.$s" || bad=$((bad + 1)); done
  for n in $names; do check_file "x.$n" "/tmp/ref.$n" || bad=$((bad + 1)); done
  [ $bad -eq 0 ] || fail "$bad files did not read back as made"
  # blocks the server reports: inline files and object files alike
  metric used_bytes.hole $(( $(stat -c %b x.hole) * 512 ))
  metric used_bytes.extend $(( $(stat -c %b x.extend) * 512 ))
}

# Cross-protocol: files written over VERS (this step's mount) read back
# byte-identical over OTHER (a second mount of the same export in this
# guest), then a page overwritten over OTHER reads back right over VERS.
# Same inode numbers, sizes and sha256 on both sides.
sc_xproto() {
  other=$1; shift
  mount_nfs "$other" || fail "mounting $other failed"
  O=/mnt/$other/$PANDO_RUN/s$STEP-xproto
  for s in "$@"; do
    src=$(gen "$s")
    dd if="$src" of="f.$s" bs=1M 2>/dev/null || fail "writing f.$s over $VERS failed"
    metric "sha256.$s" "$(cat "$src.sha")"
  done
  # close(2) flushed them to the server; the other mount has never seen them
  [ -d "$O" ] || fail "$O (made over $VERS) is not visible over $other"
  bad=0
  for s in "$@"; do
    check_file "$O/f.$s" "/tmp/data.$s" || { echo "  (f.$s written over $VERS, read over $other)"; bad=$((bad + 1)); }
    [ "$(stat -c %i "f.$s")" = "$(stat -c %i "$O/f.$s")" ] || { echo "f.$s: inode $(stat -c %i "f.$s") over $VERS, $(stat -c %i "$O/f.$s") over $other"; bad=$((bad + 1)); }
  done
  [ $bad -eq 0 ] || fail "$bad files written over $VERS did not read back the same over $other"
  # the other way: one page of each overwritten over OTHER reads back over
  # VERS, whose page cache still holds the old data (close-to-open: the
  # open sees the new change attribute / mtime and drops it)
  p=$(gen 4096)
  for s in "$@"; do
    cp "/tmp/data.$s" "/tmp/ref.x.$s"
    off=$(( s > 8192 ? s / 2 : 0 ))
    for f in "$O/f.$s" "/tmp/ref.x.$s"; do
      dd if="$p" of="$f" bs=1 seek=$off conv=notrunc 2>/dev/null
    done
  done
  for s in "$@"; do
    got=$(sha "f.$s"); want=$(sha "/tmp/ref.x.$s")
    [ "$got" = "$want" ] || { echo "sha256 mismatch for f.$s: changed over $other ($want), read back over $VERS $got (size $(size_of "f.$s"), want $(size_of "/tmp/ref.x.$s"))"; bad=$((bad + 1)); }
    metric "sha256_back.$s" "$got"
  done
  [ $bad -eq 0 ] || fail "$bad files changed over $other did not read back the same over $VERS"
}

# Churn: N new files of SIZE bytes written (fsync) over this step's mount
# while another process keeps making object-backed files (100 KiB) over
# OTHER and removing them; then every new file must read back as written
# (from the server: caches dropped).  Removals hand objects to the
# manager's background reaper while new files get theirs (a pNFS writer's
# new file, or one that outgrows the inline threshold): the two must not meet.
sc_churn() {
  n=${1:-100}; other=${2:-v3}; size=${3:-4096}
  mount_nfs "$other" || fail "mounting $other failed"
  O=/mnt/$other/$PANDO_RUN/s$STEP-churn
  big=$(gen 102400); src=$(gen "$size")
  ( i=0; while [ ! -e stop ]; do
      cp "$big" "$O/b$i" && rm -f "$O/b$i" || echo "remover: round $i failed"
      i=$((i + 1))
    done; echo "$i" > removed.count ) &
  r=$!
  i=0
  while [ $i -lt "$n" ]; do
    dd if="$src" of="w$i" bs=64k conv=fsync 2>/tmp/dd.err || echo "writing w$i: $(cat /tmp/dd.err)"
    i=$((i + 1))
  done
  touch stop; wait $r
  metric removed "$(cat removed.count)"
  sync; echo 3 > /proc/sys/vm/drop_caches
  bad=0; i=0
  while [ $i -lt "$n" ]; do
    check_file "w$i" "$src" || bad=$((bad + 1))
    i=$((i + 1))
  done
  [ $bad -eq 0 ] || fail "$bad of $n files written during the churn did not read back"
}

# Not mounted-dir scenarios (see step): print /proc/self/mountstats; unmount.
sc_mountstats() { cat /proc/self/mountstats; }
sc_umount() { umount "/mnt/$VERS" || fail "umount /mnt/$VERS failed"; }
# Free-form shell, for one-off checks: step sh VERS 'commands'
sc_sh() { eval "$*"; }

# ---- the step runner ------------------------------------------------------------
step() {
  name=$1; vers=$2; shift 2
  STEP=$((STEP + 1))
  : > /tmp/metrics
  limit=$OUT_LIMIT
  say "step $STEP: $name $vers $*"
  t0=$(now)
  case "$name" in
    mountstats|umount)
      limit=200000
      ( set -e; VERS=$vers; "sc_$name" "$@" ) > /tmp/out 2>&1 ;;
    *)
      ( set -e
        mount_nfs "$vers"
        VERS=$vers; W=/mnt/$vers/$PANDO_RUN/s$STEP-$name
        mkdir -p "$W"; cd "$W"
        "sc_$name" "$@" ) > /tmp/out 2>&1 ;;
  esac
  rc=$?
  t1=$(now)
  if [ $rc -eq 0 ]; then st=pass; else st=fail; FAILED=$((FAILED + 1)); fi
  say "step $STEP: $name $vers: $st ($(elapsed "$t0" "$t1") s)"
  [ $rc -eq 0 ] || tail -n 20 /tmp/out > /dev/console
  emit "{\"event\":\"step\",\"n\":$STEP,\"scenario\":\"$name\",\"vers\":\"$vers\",\"args\":$(echo "$*" | json_str),\"status\":\"$st\",\"rc\":$rc,\"seconds\":$(elapsed "$t0" "$t1"),\"metrics\":$(metrics_json),\"output\":$(json_str "$limit" < /tmp/out)}"
}

finish() {
  for d in $(awk '$3 ~ /^nfs/ { print $2 }' /proc/mounts); do
    umount "$d" > /tmp/umount.out 2>&1 || say "umount $d: $(cat /tmp/umount.out)"
  done
  emit "{\"event\":\"done\",\"steps\":$STEP,\"failed\":$FAILED,\"uptime\":$(now)}"
  poweroff -f
}

pando_main() {
  emit "{\"event\":\"init\",\"kernel\":\"$(uname -r)\",\"uptime\":$(now)}"
  parse_params
  [ -z "$PANDO_HOSTNAME" ] || hostname "$PANDO_HOSTNAME"
  echo /bin/true > /proc/sys/kernel/modprobe
  load_modules
  net_up
  [ "$PANDO_NFS3_LOCKS" != 1 ] || nsm_up
  emit "{\"event\":\"ready\",\"kernel\":\"$(uname -r)\",\"client_id\":\"$(cat /sys/module/nfs/parameters/nfs4_unique_id)\",\"uptime\":$(now)}"
  if [ -f /pando/scenario.sh ]; then . /pando/scenario.sh; fi
  finish
}
