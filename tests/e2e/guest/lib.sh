# Pando guest runtime: sourced by /init in every kernel-client VM (busybox ash),
# before the scenario catalogue (scenarios/*.sh, the sc_NAME functions).
# Here: output to the host, setup (modules, network, NSM), mounting, the
# helpers scenarios use, the step runner and pando_main.
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
#   PANDO_GSS        1: rpc.gssd runs in the guest (gss_up), for sec=krb5*
#                    mounts (PANDO_MOUNT_OPTS or a scenario's own mount).
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
# timing WHAT N T0 T1: metrics WHAT_s (seconds) and WHATs_per_s (N per second)
timing() {
  metric "${1}_s" "$(elapsed "$3" "$4")"
  metric "${1}s_per_s" "$(rate "$2" "$(elapsed "$3" "$4")")"
}

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

# Kerberos mounts: the kernel asks rpc.gssd, through rpc_pipefs, for each
# context; root's comes from /etc/krb5.keytab.  The binary, its libraries,
# the realm's krb5.conf and the keytab come from the host
# (tests/pando_testing/guest_gss.py).
gss_up() {
  mount -t rpc_pipefs rpc_pipefs /run/rpc_pipefs || fatal "mount rpc_pipefs failed"
  rpc.gssd -f -vvv -p /run/rpc_pipefs > /tmp/gssd.log 2>&1 &
  gssd=$!
  # gssd says nothing once it watches rpc_pipefs: give it that long, and
  # check that it did not exit.
  sleep 1
  kill -0 $gssd 2> /dev/null || fatal "rpc.gssd exited: $(cat /tmp/gssd.log)"
  say "Kerberos: rpc.gssd running"
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
  # busybox mount, told EACCES, mounts read-only instead, and a Kerberos
  # mount is told EACCES while rpc.gssd does not yet watch rpc_pipefs
  # (gss_up): a read-write mount was asked for, so it is asked again.
  for try in 1 2 3 4 5; do
    mount -t nfs -o "$opts" "$src" "/mnt/$v" || { echo "mount -t nfs -o $opts $src /mnt/$v failed"; return 1; }
    grep -q " /mnt/$v nfs4* rw," /proc/mounts && return 0
    say "mount $v came up read-only (try $try): again"
    umount "/mnt/$v" || return 1
    sleep 1
  done
  echo "mount -t nfs -o $opts $src /mnt/$v: read-only $try times"
  return 1
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
  [ "$PANDO_GSS" != 1 ] || gss_up
  emit "{\"event\":\"ready\",\"kernel\":\"$(uname -r)\",\"client_id\":\"$(cat /sys/module/nfs/parameters/nfs4_unique_id)\",\"uptime\":$(now)}"
  if [ -f /pando/scenario.sh ]; then . /pando/scenario.sh; fi
  finish
}
