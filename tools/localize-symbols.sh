#!/bin/sh
# tools/localize-symbols.sh IN.a OUT.a - the static library as a C program
# links it: one relocatable object whose only global symbols are the
# ribbon_* C API.
#
# The archive `cargo rustc --crate-type staticlib` writes holds the crate's
# objects and those of core and compiler_builtins, with every Rust symbol
# global: rust_begin_unwind, rust_eh_personality, core's functions. A C
# program that links it beside another Rust static library then fails with
# "multiple definition of rust_begin_unwind" (issue 40). This script links
# the members the ribbon_* functions need into one object (`ld -r`),
# makes every other symbol in it local (`objcopy --keep-global-symbols`),
# and archives that object alone. What the library needs from the platform
# (memcpy, memmove, memset, memcmp, bcmp; on Arm the __aeabi_mem*
# functions) stays undefined, for the C library to provide.
#
# Tools, for the archive's own target, whatever it is (the Makefile calls
# this for TARGET=thumbv7em-none-eabihf too; ELF targets only, others are
# copied unchanged with a warning):
#   ld -r:   $LD if set, else the Rust toolchain's rust-lld (every ELF
#            target), else GNU ld (the host's only).
#   objcopy: $OBJCOPY if set, else the toolchain's rust-objcopy (LLVM's,
#            every ELF target), else llvm-objcopy, else GNU objcopy for the
#            archive's machine (objcopy, arm-none-eabi-objcopy,
#            aarch64-linux-gnu-objcopy).
#   nm, ar:  $NM and $AR, default nm and ar (binutils; they read any ELF).
# Exits non-zero, writing nothing, if a tool is missing or the result has a
# global symbol other than ribbon_*.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 IN.a OUT.a" >&2
    exit 2
fi
in=$1
out=$2
NM=${NM:-nm}
AR=${AR:-ar}
[ -s "$in" ] || { echo "$0: no archive $in" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ELF objects only (Linux, bare metal): elsewhere (Mach-O, COFF) the
# archive is copied as cargo wrote it, with its Rust symbols global.
first=$("$AR" t "$in" | head -n 1)
if [ "$("$AR" p "$in" "$first" 2>/dev/null | head -c 4 | od -An -c | tr -d ' ')" != '177ELF' ]; then
    echo "$0: warning: $in is not ELF; copied as is, its Rust symbols still global" >&2
    mkdir -p "$(dirname "$out")"
    cp "$in" "$out"
    exit 0
fi

# The toolchain's LLVM tools (rust-lld ships with rustc; rust-objcopy
# needs the toolchain's libLLVM, which it does not find by itself).
rustc=${RUSTC:-rustc}
sysroot=$("$rustc" --print sysroot 2>/dev/null || true)
host=$("$rustc" -vV 2>/dev/null | sed -n 's/^host: //p' || true)
toolbin=$sysroot/lib/rustlib/$host/bin
rust_objcopy() { LD_LIBRARY_PATH="$sysroot/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$toolbin/rust-objcopy" "$@"; }

# The exported names: the archive's defined global ribbon_* symbols (nm
# warns about the LLVM bitcode some std objects carry; it still lists them).
"$NM" -g --defined-only "$in" 2>/dev/null | awk '$3 ~ /^ribbon_/ { print $3 }' | sort -u >"$tmp/exports"
if [ ! -s "$tmp/exports" ]; then
    echo "$0: no ribbon_* symbol in $in" >&2
    exit 1
fi
undefined=$(sed 's/^/-u /' "$tmp/exports")

# The platform's functions stay undefined: on bare-metal targets
# compiler_builtins defines weak memcpy, memset, __aeabi_memcpy and the
# like, each in a member of its own; those members are dropped from a copy
# of the archive so that ld does not pull them in below (and the C
# library's, often faster, versions serve the library as before).
platform="memcpy memmove memset memcmp bcmp"
for f in memcpy memmove memset memclr; do
    platform="$platform __aeabi_$f __aeabi_${f}4 __aeabi_${f}8"
done
cp "$in" "$tmp/in.a"
readelf -sW "$in" 2>/dev/null | awk -v names="$platform" '
    BEGIN { n = split(names, list, " "); for (i = 1; i <= n; i++) want[list[i]] = 1 }
    /^File: / { member = $2; sub(/^[^(]*\(/, "", member); sub(/\)$/, "", member); next }
    ($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" && ($8 in want) { print member }' |
    sort -u >"$tmp/platform_members"
# (ar d prints a warning for every LLVM bitcode member it passes.)
if [ -s "$tmp/platform_members" ]; then
    # shellcheck disable=SC2046
    "$AR" d "$tmp/in.a" $(cat "$tmp/platform_members") >"$tmp/ar.log" 2>&1 ||
        { cat "$tmp/ar.log" >&2; exit 1; }
fi

# One relocatable object of the members those names need (ld pulls an
# archive member for each undefined symbol it defines, repeatedly).
if [ -n "${LD:-}" ]; then
    # shellcheck disable=SC2086
    $LD -r -o "$tmp/ribbon_kernel.o" $undefined "$tmp/in.a"
elif [ -x "$toolbin/rust-lld" ]; then
    # shellcheck disable=SC2086
    "$toolbin/rust-lld" -flavor gnu -r -o "$tmp/ribbon_kernel.o" $undefined "$tmp/in.a"
else
    # shellcheck disable=SC2086
    ld -r -o "$tmp/ribbon_kernel.o" $undefined "$tmp/in.a"
fi

# The machine of the object, for GNU objcopy.
machine=$(readelf -h "$tmp/ribbon_kernel.o" 2>/dev/null | sed -n 's/^ *Machine: *//p')
objcopy_for() {
    case "$machine" in
    ARM) echo arm-none-eabi-objcopy ;;
    AArch64) echo aarch64-linux-gnu-objcopy ;;
    *) echo objcopy ;;
    esac
}
# Every other symbol local; the LLVM bitcode of the precompiled std objects
# (no linker reads it) dropped.
flags="--keep-global-symbols=$tmp/exports --remove-section=.llvmbc --remove-section=.llvmcmd"
if [ -n "${OBJCOPY:-}" ]; then
    # shellcheck disable=SC2086
    $OBJCOPY $flags "$tmp/ribbon_kernel.o" "$tmp/local.o"
elif [ -x "$toolbin/rust-objcopy" ] && rust_objcopy --version >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    rust_objcopy $flags "$tmp/ribbon_kernel.o" "$tmp/local.o"
elif command -v llvm-objcopy >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    llvm-objcopy $flags "$tmp/ribbon_kernel.o" "$tmp/local.o"
elif command -v "$(objcopy_for)" >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    "$(objcopy_for)" $flags "$tmp/ribbon_kernel.o" "$tmp/local.o"
else
    echo "$0: no objcopy for $machine objects: set OBJCOPY, or install llvm or $(objcopy_for)" >&2
    exit 1
fi

# Nothing global but the exports (undefined platform symbols aside).
"$NM" -g --defined-only "$tmp/local.o" | awk '$3 !~ /^ribbon_/ { print "  " $0 }' >"$tmp/stray"
if [ -s "$tmp/stray" ]; then
    echo "$0: global symbols other than ribbon_* left:" >&2
    head -20 "$tmp/stray" >&2
    exit 1
fi

mkdir -p "$(dirname "$out")"
rm -f "$out.tmp"
(cd "$tmp" && mv local.o ribbon_kernel.o)
"$AR" rcs "$out.tmp" "$tmp/ribbon_kernel.o"
mv "$out.tmp" "$out"
echo "$out: $(wc -l <"$tmp/exports") global symbols (ribbon_*), every other one local"
