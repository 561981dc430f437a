# Guest scenarios, file data: what is written reads back (after a remount,
# over the other protocol, from another guest), sizes on both sides of the
# inline threshold, timed I/O.
# Sourced by /init after lib.sh.  Each sc_NAME is run by lib.sh's step in a
# subshell with `set -e`, cwd a fresh directory on the mount ($W), $VERS the
# NFS version; the helpers (gen, check_file, remount, metric, fail, ...) are lib.sh's.

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

# Write SIZE bytes, sync, drop the page cache, read back: on one mount (no
# remount), so its mountstats show both the WRITEs and the READs.
sc_io() {
  src=$(gen "${1:-1048577}")
  dd if="$src" of=f bs=1M 2>/dev/null || fail "write failed"
  sync; echo 3 > /proc/sys/vm/drop_caches
  check_file f "$src" || fail "read back after dropping caches"
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
