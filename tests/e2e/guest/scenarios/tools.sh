# Guest scenarios, the step runner's utility steps: mountstats and umount
# (run outside a step directory, see step in lib.sh) and free-form shell.
# Sourced by /init after lib.sh.  Each sc_NAME is run by lib.sh's step in a
# subshell with `set -e`, cwd a fresh directory on the mount ($W), $VERS the
# NFS version; the helpers (gen, check_file, remount, metric, fail, ...) are lib.sh's.

# Not mounted-dir scenarios (see step): print /proc/self/mountstats; unmount.
sc_mountstats() { cat /proc/self/mountstats; }
sc_umount() { umount "/mnt/$VERS" || fail "umount /mnt/$VERS failed"; }
# Free-form shell, for one-off checks: step sh VERS 'commands'
sc_sh() { eval "$*"; }
