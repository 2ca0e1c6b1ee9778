#!/bin/sh
# Runner container entry point: give the worker the cgroup it needs, then run the command
# (the image runs `torchdrill-runner-entrypoint torchdrill runner worker`).
#
# The worker limits each job's memory and processes with cgroups (runner/cgroups.py). Docker and
# podman mount /sys/fs/cgroup read-only, and some set-ups mount only this container's own subtree
# while /proc/self/cgroup still names its full host path. As root with SYS_ADMIN (which
# bubblewrap needs anyway, see docker/README.md) we make the mounts writable and, where the paths
# disagree, start the worker in a cgroup namespace rooted at this container's cgroup, so they
# agree and the worker can only ever create cgroups below its own. On cgroup v2 the worker then
# moves itself into the leaf `<its cgroup>/worker` and enables memory, pids and cpu for the jobs'
# cgroups beside it (the kernel hands controllers only to children of a cgroup without
# processes). If any step fails, the worker's own check (`torchdrill runner isolation`) says why
# in one line and it refuses to start.
set -eu

if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup ]; then
    for mnt in /sys/fs/cgroup /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup/cpu; do
        if mountpoint -q "$mnt"; then  # this mount's flag only (the superblock stays as it is)
            mount -o remount,bind,rw "$mnt" 2>/dev/null || true
        fi
    done
    if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2 only
        top=/sys/fs/cgroup own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    else
        top=/sys/fs/cgroup/memory own=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
    fi
    if [ -n "$own" ] && [ ! -d "$top$own" ] && unshare --cgroup true 2>/dev/null; then
        exec unshare --cgroup "$@"  # own subtree mounted: make /proc/self/cgroup say "/"
    fi
fi
exec "$@"
