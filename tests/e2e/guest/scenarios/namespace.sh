# Guest scenarios, names and attributes: renames, links, symlinks, trees,
# ownership and modes, directory permissions, set-gid, big directories, a
# timed metadata storm.
# Sourced by /init after lib.sh.  Each sc_NAME is run by lib.sh's step in a
# subshell with `set -e`, cwd a fresh directory on the mount ($W), $VERS the
# NFS version; the helpers (gen, check_file, remount, metric, fail, ...) are lib.sh's.

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

# A listing of the tree under . : path, type, links, size (and the target of symlinks)
tree_attrs() {
  find . | sort | while read -r p; do
    if [ -L "$p" ]; then echo "$p link $(stat -c %h "$p") -> $(readlink "$p")"
    elif [ -d "$p" ]; then echo "$p dir $(stat -c %h "$p")"
    else echo "$p $(stat -c '%F %h %s' "$p")"; fi
  done
}

# mkdir -p; rename over a file and over an empty directory; the errors
# rename(2) and rmdir must give; renames within and across directories.
ns_renames() {
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
}

# Hard links: one inode, counts go up and down, data shared; directory
# link counts.
ns_links() {
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
}

# Symlinks: relative, absolute and dangling, to a directory, and one whose
# target is $1 (a long one).
ns_symlinks() {
  ln -s h2 sl
  eq "readlink sl" "$(readlink sl)" h2
  eq "cat through sl" "$(cat sl)" "$(cat h2)"
  ln -s /nowhere/at/all dangling
  [ -L dangling ] && [ ! -e dangling ] || fail "dangling symlink: $(ls -l dangling)"
  ln -s a/c2 dl
  [ -d dl/d/e ] || fail "symlink to a directory does not resolve: $(ls -l dl)"
  long=$(head -c 1000 /dev/zero | tr '\0' 'x')
  ln -s "$1" longlink
  eq "readlink of a 1000-byte target" "$(readlink longlink)" "$1"
  eq "size of a symlink" "$(stat -c %s longlink)" 1000
  mv sl sl2; rm dangling
  [ -f h2 ] || fail "removing a symlink removed its target"
}

# Unlink of an open (inline, small) file: the client silly-renames it;
# reads and writes through the descriptor go on, and it goes at close.
ns_unlink_open() {
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
}

# POSIX namespace work: mkdir -p, rename over a file and over an empty
# directory, the errors rename(2), rmdir and link must give, hard links and
# link counts, symlinks, unlink of an open file; what the server kept is
# checked again after a remount.
sc_namespace() {
  long=$(head -c 1000 /dev/zero | tr '\0' 'x')
  ns_renames
  ns_links
  ns_symlinks "$long"
  ns_unlink_open
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

# N empty files PREFIX0 .. PREFIX<N-1>, timed (metrics create_s, creates_per_s).
create_empty() {
  t0=$(now); i=0
  while [ $i -lt "$2" ]; do : > "$1$i"; i=$((i + 1)); done
  timing create "$2" "$t0" "$(now)"
}

# N entries in one directory: created, counted with an unsorted readdir
# (`ls -f | wc -l`; busybox ls has no -f, ptool ls is the same readdir loop)
# after a remount, every name exactly once, then removed.
sc_bigdir() {
  n=${1:-10000}
  create_empty e "$n"
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
  t0=$(now); find . -name 'e*' -type f -exec rm -f {} +
  timing unlink "$n" "$t0" "$(now)"
  remount
  [ -z "$(ls -A)" ] || fail "entries left after removing them all: $(ls -A | head)"
}

# Create N empty files, stat them (after a remount: each is a LOOKUP), list,
# unlink; timings as metrics.
sc_metastorm() {
  n=${1:-200}
  create_empty f "$n"
  remount
  t0=$(now); i=0
  while [ $i -lt "$n" ]; do [ -e "f$i" ] || fail "f$i missing after remount"; i=$((i + 1)); done
  timing stat "$n" "$t0" "$(now)"
  t0=$(now); count=$(ls | wc -l); t1=$(now)
  metric readdir_s "$(elapsed "$t0" "$t1")"
  [ "$count" = "$n" ] || fail "ls shows $count entries, want $n"
  t0=$(now); rm -f f*
  timing unlink "$n" "$t0" "$(now)"
  remount
  [ -z "$(ls -A)" ] || fail "files left after unlink: $(ls -A | head)"
}
