# Guest scenarios, locks and open state: byte-range, flock and OFD locks
# between processes of one guest (NFSv4.x) and through NLM (NFSv3), between
# two guests; OPEN upgrades and downgrades.
# Sourced by /init after lib.sh.  Each sc_NAME is run by lib.sh's step in a
# subshell with `set -e`, cwd a fresh directory on the mount ($W), $VERS the
# NFS version; the helpers (gen, check_file, remount, metric, fail, ...) are lib.sh's.

# Whole-file locks on FILE: an exclusive lock held by A, B can take
# neither kind and F_GETLK sees it; B blocks until A lets go.
locks_whole_file() {
  file=$1
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
}

# Byte ranges: write locks on 0:100 and shared ones on 1000:100.
locks_ranges() {
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
}

# flock(2) and OFD locks (the NFS client makes both whole-file or ranged
# POSIX locks on the server).
locks_flock_ofd() {
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
}

# Byte-range and whole-file locks between two processes of this guest
# (ptool lock).  Over NFSv4.1 the server arbitrates: both processes are
# lock owners of one client, and the LOCK count in mountstats proves the
# requests reached it.  (NFSv3 mounts use nolock: locks stay in the client.)
sc_locks() {
  : > f
  src=$(gen 1048577); dd if="$src" of=big bs=1M 2>/dev/null
  lock0=$(opcount LOCK)
  for file in f big; do locks_whole_file "$file"; done
  locks_ranges
  locks_flock_ofd
  metric lock_calls $(( $(opcount LOCK) - lock0 ))
  metric lockt_calls "$(opcount LOCKT)"
}

# Lock stateids made and ended fast: PROCS processes, each on its own file,
# open, lock, unlock and close it ROUNDS times.  Over NFSv4.1 every unlock
# ends a lock stateid the client frees with FREE_STATEID while the file's
# CLOSE (which deletes the same state) is on its way: the server must
# answer both, whichever comes first, and stay up.
sc_lockchurn() {
  procs=${1:-4}; rounds=${2:-300}
  f0=$(opcount FREE_STATEID); c0=$(opcount CLOSE)
  pids=""
  for i in $(seq 1 "$procs"); do
    ptool churn "$rounds" "c$i" > "c$i.out" 2>&1 &
    pids="$pids $!"
  done
  for p in $pids; do wait "$p" || fail "a churner failed: $(cat c*.out)"; done
  metric free_stateids $(( $(opcount FREE_STATEID) - f0 ))
  metric closes $(( $(opcount CLOSE) - c0 ))
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
