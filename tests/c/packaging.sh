#!/usr/bin/env bash
# tests/c/packaging.sh - the C library as a system library: `make install`
# into fresh prefixes, then what a C program sees of it.
#
#   1. make install with CARGO_TARGET_DIR set (its own target folder), into
#      a fresh PREFIX, and with DESTDIR and LIBDIR into a staging tree;
#   2. symbols: the installed static library and shared library define
#      only the ribbon_* functions the header declares (the Rust runtime's
#      symbols are local), the shared library has its versioned soname and
#      no panic or unwinding machinery;
#   3. a C program built through pkg-config (shared and static), and a
#      CMake project through find_package(ribbon_kernel) (shared and
#      static targets; a request for another minor version is refused);
#   4. the static library linked beside another Rust static library
#      (tests/c/other_rust_lib, with std) into one C program, in both
#      orders, each library answering;
#   5. make uninstall removes what make install put in the prefix.
# Needs (Debian): make, gcc, binutils, pkg-config, cmake; `.ci/run
# packaging` installs them. Exits non-zero on the first failure.
#
# Usage: bash tests/c/packaging.sh   (from anywhere)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=never
# A target folder of its own: `make` must find cargo's output there.
export CARGO_TARGET_DIR=$root/target/packaging
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS
step() { printf '\n== %s (t=%ss)\n' "$*" "$((SECONDS - start))"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
if [ "$major" = 0 ]; then soname=libribbon_kernel.so.0.$minor; else soname=libribbon_kernel.so.$major; fi

step "make install PREFIX=<fresh> (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
prefix=$work/prefix
make --no-print-directory install PREFIX="$prefix" >"$work/make.log" 2>&1 ||
    { cat "$work/make.log"; fail "make install"; }
tail -n 3 "$work/make.log"
lib=$prefix/lib
for f in include/ribbon_kernel.h lib/libribbon_kernel.a "lib/libribbon_kernel.so.$version" \
    "lib/$soname" lib/libribbon_kernel.so lib/pkgconfig/ribbon_kernel.pc \
    lib/cmake/ribbon_kernel/ribbon_kernelConfig.cmake \
    lib/cmake/ribbon_kernel/ribbon_kernelConfigVersion.cmake; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ "$(readlink "$lib/$soname")" = "libribbon_kernel.so.$version" ] || fail "$soname link"
[ "$(readlink "$lib/libribbon_kernel.so")" = "$soname" ] || fail "libribbon_kernel.so link"
find "$prefix" | sed "s|^$prefix|  PREFIX|" | sort

step "make install DESTDIR=<stage> PREFIX=/usr LIBDIR=/usr/lib/<multiarch>"
stage=$work/stage
make --no-print-directory install DESTDIR="$stage" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu \
    >"$work/make-destdir.log" 2>&1 || { cat "$work/make-destdir.log"; fail "make install DESTDIR"; }
for f in usr/include/ribbon_kernel.h usr/lib/x86_64-linux-gnu/libribbon_kernel.a \
    "usr/lib/x86_64-linux-gnu/$soname" usr/lib/x86_64-linux-gnu/pkgconfig/ribbon_kernel.pc \
    usr/lib/x86_64-linux-gnu/cmake/ribbon_kernel/ribbon_kernelConfig.cmake; do
    [ -e "$stage/$f" ] || fail "not staged: $f"
done
grep -qx 'libdir=/usr/lib/x86_64-linux-gnu' "$stage/usr/lib/x86_64-linux-gnu/pkgconfig/ribbon_kernel.pc" ||
    fail "the staged .pc file does not name LIBDIR"
echo "staged under DESTDIR, the .pc file naming /usr/lib/x86_64-linux-gnu"

step "symbols of the installed libraries"
# The functions the header declares (lines outside comments and macros).
grep -v '^ *\*\|^ */\*\|^#' include/ribbon_kernel.h | grep -o '\bribbon_[a-z0-9_]*(' | tr -d '(' |
    sort -u >"$work/declared"
[ "$(wc -l <"$work/declared")" -ge 40 ] || fail "too few declarations found in the header"
nm -g --defined-only "$lib/libribbon_kernel.a" | awk 'NF == 3 { print $3 }' | sort -u >"$work/static_globals"
if ! cmp -s "$work/declared" "$work/static_globals"; then
    diff "$work/declared" "$work/static_globals" | head -20
    fail "libribbon_kernel.a: its global symbols are not the header's functions"
fi
nm -u "$lib/libribbon_kernel.a" | awk 'NF == 2 { print $2 }' | sort -u >"$work/static_undefined"
if grep -vxE 'memcpy|memmove|memset|memcmp|bcmp' "$work/static_undefined"; then
    fail "libribbon_kernel.a needs more than mem* from the platform"
fi
echo "libribbon_kernel.a: $(wc -l <"$work/static_globals") global symbols, all ribbon_* (the header's" \
    "functions); undefined: $(tr '\n' ' ' <"$work/static_undefined")"
nm -D --defined-only "$lib/$soname" | awk 'NF == 3 { print $3 }' | sort -u >"$work/shared_globals"
if ! cmp -s "$work/declared" "$work/shared_globals"; then
    diff "$work/declared" "$work/shared_globals" | head -20
    fail "$soname: its exported symbols are not the header's functions"
fi
nm -D --undefined-only "$lib/$soname" | awk '{ print $NF }' | sed 's/@.*//' | sort -u >"$work/shared_undefined"
if grep -vxE 'memcpy|memmove|memset|memcmp|bcmp|__cxa_finalize|__gmon_start__|_ITM_(de)?registerTMCloneTable' \
    "$work/shared_undefined"; then
    fail "$soname needs more than mem* (and the C runtime's weak hooks)"
fi
readelf -d "$lib/$soname" | grep -q "Library soname: \[$soname\]" || fail "soname is not $soname"
# No panic machinery at all, not just none exported (the check
# tests/c_abi.rs makes of a linked C program), and no unwinder. The
# personality routine the precompiled core's unwind tables name is there,
# local and never called (src/ffi/mod.rs).
if nm -C "$lib/$soname" | grep -iE 'panic|rust_begin_unwind|_Unwind_'; then
    fail "$soname has panic or unwinding machinery"
fi
if nm "$lib/$soname" | grep -E ' [A-Z] rust_eh_personality$'; then
    fail "$soname: rust_eh_personality is global"
fi
echo "$soname: soname $soname, $(wc -l <"$work/shared_globals") exported symbols, all ribbon_*;" \
    "undefined: $(tr '\n' ' ' <"$work/shared_undefined"); no panic or unwinding symbols"

step "a C program through pkg-config"
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion ribbon_kernel)" = "$version" ] || fail "pkg-config --modversion"
warn=(-std=c99 -Wall -Wextra -Werror -pedantic -O2)
# shellcheck disable=SC2046
cc "${warn[@]}" "$here/packaging_app.c" -o "$work/app_pc" $(pkg-config --cflags --libs ribbon_kernel)
readelf -d "$work/app_pc" | grep -q "NEEDED.*\[$soname\]" || fail "the pkg-config program does not use $soname"
LD_LIBRARY_PATH=$lib "$work/app_pc" | tee "$work/app_pc.out"
grep -qx ok "$work/app_pc.out" || fail "the pkg-config program (shared library)"
# Static: the archive from the same libdir.
# shellcheck disable=SC2046
cc "${warn[@]}" "$here/packaging_app.c" -o "$work/app_pc_static" $(pkg-config --cflags ribbon_kernel) \
    "$(pkg-config --variable=libdir ribbon_kernel)/libribbon_kernel.a"
if readelf -d "$work/app_pc_static" | grep -q "NEEDED.*libribbon_kernel"; then fail "not static"; fi
"$work/app_pc_static" | grep -qx ok || fail "the pkg-config program (static library)"
echo "static: ok"
unset PKG_CONFIG_PATH

step "a CMake project through find_package(ribbon_kernel $major.$minor)"
cmake -S "$here/cmake_app" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DRIBBON_KERNEL_VERSION="$major.$minor" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; fail "cmake configure"; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "cmake build"; }
readelf -d "$work/cmake/app_default" | grep -q "NEEDED.*\[$soname\]" ||
    fail "ribbon_kernel::ribbon_kernel is not the shared library"
if readelf -d "$work/cmake/app_static" | grep -q "NEEDED.*libribbon_kernel"; then
    fail "ribbon_kernel::static is not static"
fi
# The build tree's RPATH finds the shared library.
"$work/cmake/app_default" | tee "$work/cmake_default.out"
grep -qx ok "$work/cmake_default.out" || fail "the CMake program (ribbon_kernel::ribbon_kernel)"
"$work/cmake/app_static" | grep -qx ok || fail "the CMake program (ribbon_kernel::static)"
echo "ribbon_kernel::static: ok"
# The staged tree, where no absolute path of the package points: the
# package finds its files relative to itself.
cmake -S "$here/cmake_app" -B "$work/cmake_stage" -DCMAKE_PREFIX_PATH="$stage/usr" \
    -DRIBBON_KERNEL_VERSION="$major.$minor" >"$work/cmake_stage.log" 2>&1 ||
    { cat "$work/cmake_stage.log"; fail "cmake configure against the staged tree"; }
cmake --build "$work/cmake_stage" >>"$work/cmake_stage.log" 2>&1 ||
    { cat "$work/cmake_stage.log"; fail "cmake build against the staged tree"; }
"$work/cmake_stage/app_static" | grep -qx ok || fail "the CMake program on the staged tree"
echo "the same project against the DESTDIR tree (moved package): ok"
# Another minor version (an ABI change for 0.x) is refused.
if cmake -S "$here/cmake_app" -B "$work/cmake_next" -DCMAKE_PREFIX_PATH="$prefix" \
    -DRIBBON_KERNEL_VERSION="$major.$((minor + 1))" >"$work/cmake_next.log" 2>&1; then
    fail "find_package(ribbon_kernel $major.$((minor + 1))) accepted version $version"
fi
grep -q "ribbon_kernelConfig.cmake, version: $version" "$work/cmake_next.log" ||
    { cat "$work/cmake_next.log"; fail "find_package refused $major.$((minor + 1)) for another reason"; }
echo "find_package(ribbon_kernel $major.$((minor + 1))): refused (version $version is installed)"

step "beside another Rust static library (tests/c/other_rust_lib, with std)"
other_dir=$CARGO_TARGET_DIR/other_rust_lib
cargo rustc --quiet --release --manifest-path "$here/other_rust_lib/Cargo.toml" --target-dir "$other_dir" \
    -- --print native-static-libs >"$work/other.log" 2>&1 || { cat "$work/other.log"; fail "other_rust_lib"; }
other=$other_dir/release/libother_rust_lib.a
# What std needs from the platform, as rustc printed it (empty when cargo
# found the library up to date: then the usual list).
native=$(sed -n 's/.*native-static-libs: //p' "$work/other.log")
native=${native:--lgcc_s -lutil -lrt -lpthread -lm -ldl -lc}
# The runtime symbols the two would both define, as cargo writes them.
# (readelf: nm skips the members that carry LLVM bitcode.)
readelf -sW "$other" 2>/dev/null | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" { print $8 }' |
    sort -u >"$work/other_globals"
echo "the other library defines $(wc -l <"$work/other_globals") global symbols, among them" \
    "$(grep -E 'rust_begin_unwind$|^rust_eh_personality$' "$work/other_globals" | tr '\n' ' ')"
for order in ribbon-first other-first; do
    if [ "$order" = ribbon-first ]; then libs=("$lib/libribbon_kernel.a" "$other"); else libs=("$other" "$lib/libribbon_kernel.a"); fi
    # shellcheck disable=SC2086
    cc "${warn[@]}" -DWITH_OTHER_RUST_LIB -I"$prefix/include" "$here/packaging_app.c" "${libs[@]}" $native \
        -o "$work/app_$order" 2>"$work/link_$order.log" || { cat "$work/link_$order.log"; fail "link, $order"; }
    "$work/app_$order" | tee "$work/app_$order.out" | sed "s/^/  $order: /"
    grep -qx ok "$work/app_$order.out" || fail "the two-library program, $order"
done
# The control: cargo's own archive clashes with the other one (what the
# relinking fixes); reported, not required.
raw=$CARGO_TARGET_DIR/release/libribbon_kernel.a
# shellcheck disable=SC2086
if cc -std=c99 -DWITH_OTHER_RUST_LIB -I"$prefix/include" "$here/packaging_app.c" "$raw" "$other" $native \
    -o "$work/app_raw" >"$work/link_raw.log" 2>&1; then
    echo "control: cargo's unprocessed archive links beside it too (this Rust release keeps them apart)"
else
    echo "control: cargo's unprocessed archive does not link beside it:" \
        "$(grep -o 'multiple definition of `[^'"'"']*' "$work/link_raw.log" | sort -u | head -3 | tr '\n' ' ')"
fi

step "make uninstall PREFIX=<fresh>"
make --no-print-directory -s uninstall PREFIX="$prefix"
left=$(find "$prefix" \( -type f -o -type l \) -name '*ribbon_kernel*' | sed "s|^$prefix|PREFIX|")
[ -z "$left" ] || fail "make uninstall left $left"
echo "nothing of ribbon_kernel left in the prefix"

step "tests/c/packaging.sh: all passed in $((SECONDS - start))s"
