#!/bin/sh
# faketime_case.sh OFFSET COMMAND [ARG...] - runs COMMAND under the
# faketime wrapper with the clock moved by OFFSET (+365d, -365d): how
# ctest runs the cli.ahead1y / cli.behind1y cases (tests/CMakeLists.txt).
#
# The wrapper names its semaphore and shared memory after its pid and
# refuses to start when those names exist.  A process killed before it
# removed its pair (a case past its ctest timeout, or a libfaketime
# preloaded by hand into a shell, which leaves with _exit()) leaves one
# behind, and a later wrapper given the same pid would fail.  The names of
# this shell's own pid can belong to no live process, so they are removed
# first, and the wrapper takes this pid over by exec.
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh faketime_case.sh OFFSET COMMAND [ARG...]" >&2
    exit 2
fi
rm -f "/dev/shm/faketime_shm_$$" "/dev/shm/sem.faketime_sem_$$"
offset=$1
shift
exec faketime -f "$offset" "$@"
