#!/bin/sh
# find_package.sh - the installed CMake package, from a consumer's side:
# find_package(planctl MAJOR.MINOR) works and defines both targets and
# planctl_VERSION without touching the caller's variables; a newer minor
# (before 1.0) or major version is refused; a config that cannot find a
# dependency says so instead of failing later.
#
# Environment as for install_prefix.sh, plus PLANCTL_WORK.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LC_ALL=C
export LC_ALL

work=$PLANCTL_WORK/find_package
rm -rf "$work"
mkdir -p "$work/ok" "$work/newer" "$work/nodeps"
major=${PLANCTL_VERSION%%.*}
rest=${PLANCTL_VERSION#*.}
minor=${rest%%.*}

cat >"$work/ok/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES C)
set(SQLITE3_LIBRARIES "the caller's")
find_package(planctl $major.$minor REQUIRED)
foreach(t planctl::planctl planctl::planctl_static)
    if(NOT TARGET \${t})
        message(FATAL_ERROR "\${t} is not defined")
    endif()
endforeach()
get_target_property(type planctl::planctl TYPE)
if(NOT type STREQUAL "SHARED_LIBRARY")
    message(FATAL_ERROR "planctl::planctl is \${type}, not SHARED_LIBRARY")
endif()
get_target_property(type planctl::planctl_static TYPE)
if(NOT type STREQUAL "STATIC_LIBRARY")
    message(FATAL_ERROR "planctl::planctl_static is \${type}")
endif()
# libuv is part of planctl's interface (the embedder runs the loop it
# passes), SQLite and jansson are not: only the static target needs them.
get_target_property(libs planctl::planctl INTERFACE_LINK_LIBRARIES)
if(NOT libs STREQUAL "PkgConfig::LIBUV")
    message(FATAL_ERROR "planctl::planctl links \${libs}, not PkgConfig::LIBUV")
endif()
if(NOT planctl_VERSION STREQUAL "$PLANCTL_VERSION")
    message(FATAL_ERROR "planctl_VERSION is \${planctl_VERSION}")
endif()
if(NOT SQLITE3_LIBRARIES STREQUAL "the caller's")
    message(FATAL_ERROR "find_package(planctl) changed SQLITE3_LIBRARIES")
endif()
message(STATUS "planctl \${planctl_VERSION} found")
CMAKE
"$CMAKE" -S "$work/ok" -B "$work/ok/build" -DCMAKE_PREFIX_PATH="$PLANCTL_PREFIX" \
    >"$work/ok.log" 2>&1 || { cat "$work/ok.log"; fail "find_package($major.$minor) failed"; }
grep -q "planctl $PLANCTL_VERSION found" "$work/ok.log" || fail "no success message"

if [ "$major" -eq 0 ]; then
    newer=$major.$((minor + 1))
else
    newer=$((major + 1)).0
fi
cat >"$work/newer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES C)
find_package(planctl $newer REQUIRED)
CMAKE
if "$CMAKE" -S "$work/newer" -B "$work/newer/build" \
    -DCMAKE_PREFIX_PATH="$PLANCTL_PREFIX" >"$work/newer.log" 2>&1; then
    fail "find_package(planctl $newer) accepted version $PLANCTL_VERSION"
fi
grep -q "$PLANCTL_VERSION" "$work/newer.log" ||
    { cat "$work/newer.log"; fail "the refusal does not name the version found"; }

# A dependency pkg-config cannot find: planctl is NOT found, with a reason.
cat >"$work/nodeps/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES C)
find_package(planctl)
if(planctl_FOUND)
    message(FATAL_ERROR "found planctl without its dependencies")
endif()
message(STATUS "not found, as expected: \${planctl_NOT_FOUND_MESSAGE}")
CMAKE
mkdir "$work/nodeps/empty"
PKG_CONFIG_LIBDIR=$work/nodeps/empty PKG_CONFIG_PATH='' \
    "$CMAKE" -S "$work/nodeps" -B "$work/nodeps/build" \
    -DCMAKE_PREFIX_PATH="$PLANCTL_PREFIX" >"$work/nodeps.log" 2>&1 ||
    { cat "$work/nodeps.log"; fail "find_package without dependencies errored"; }
grep -q "not found, as expected: planctl needs sqlite3" "$work/nodeps.log" ||
    { cat "$work/nodeps.log"; fail "no reason given for the missing dependency"; }
echo "find_package.sh: $major.$minor found, $newer refused, missing dependencies reported"
