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

# ---- mounting -----------------------------------------------------------------
is_mounted() { grep -q " /mnt/$1 nfs" /proc/mounts; }

mount_nfs() {  # VERS
  v=$1
  is_mounted "$v" && return 0
  mkdir -p "/mnt/$v"
  case "$v" in
    v3) opts="vers=3,proto=tcp,addr=$S,port=$P,mountport=$MP,mountproto=tcp,nolock"
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
  src=$(gen 1048577)
  dd if="$src" of=f bs=1M 2>/dev/null; sync
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
  emit "{\"event\":\"ready\",\"kernel\":\"$(uname -r)\",\"client_id\":\"$(cat /sys/module/nfs/parameters/nfs4_unique_id)\",\"uptime\":$(now)}"
  if [ -f /pando/scenario.sh ]; then . /pando/scenario.sh; fi
  finish
}
