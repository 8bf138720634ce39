#!/usr/bin/env bash
# tests/embedded/run.sh - the C ABI in freestanding images, and the stack
# each entry point needs.
#
#   1. builds the static library for the host, thumbv7em-none-eabihf and
#      x86_64-unknown-none;
#   2. Cortex-M4 under QEMU (mps2-an386): firmware_test.c, a query-only
#      image (its .text size is reported), and two deliberately failing
#      images that must exit non-zero (a failed check, a HardFault);
#   3. bare x86_64 (no libc, static, raw syscalls): firmware_test.c and
#      the query-only image, plus the deliberate failures;
#   4. hosted x86_64: peak stack per entry point for each SIMD backend.
# Prints the stack tables and .text sizes at the end; exits non-zero if
# anything fails. Needs (Debian): gcc, gcc-arm-none-eabi,
# binutils-arm-none-eabi, qemu-system-arm; rustup targets
# thumbv7em-none-eabihf and x86_64-unknown-none.
#
# Usage: bash tests/embedded/run.sh   (from anywhere)
# Build outputs go to $CARGO_TARGET_DIR (default target/embedded) and
# its fw/ folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/embedded}
export CARGO_TERM_COLOR=never
out=$CARGO_TARGET_DIR/fw
start=$SECONDS
step() { printf '\n== %s (t=%ss)\n' "$*" "$((SECONDS - start))"; }

# ---- Tools ----
missing=()
for tool in cargo rustup gcc objdump arm-none-eabi-gcc arm-none-eabi-size arm-none-eabi-objdump qemu-system-arm timeout; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if command -v rustup >/dev/null 2>&1; then
    for target in thumbv7em-none-eabihf x86_64-unknown-none; do
        rustup target list --installed | grep -qx "$target" || missing+=("rust target $target")
    done
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]}" >&2
    echo "install: apt-get install gcc gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm" >&2
    echo "         rustup target add thumbv7em-none-eabihf x86_64-unknown-none" >&2
    exit 2
fi

# ---- The three archives ----
# Feature `staticlib`: capi plus the static library's panic handler.
features=staticlib
step "static libraries (--features $features)"
cd "$root"
cargo rustc --quiet --release --lib --no-default-features --features "$features" --crate-type staticlib
for target in thumbv7em-none-eabihf x86_64-unknown-none; do
    cargo rustc --quiet --release --lib --no-default-features --features "$features" --crate-type staticlib \
        --target "$target"
done
lib_host=$CARGO_TARGET_DIR/release/libribbon_kernel.a
lib_arm=$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/libribbon_kernel.a
lib_x86=$CARGO_TARGET_DIR/x86_64-unknown-none/release/libribbon_kernel.a
ls -l "$lib_host" "$lib_arm" "$lib_x86"

rm -rf "$out"
mkdir -p "$out"
inc=(-I"$root/include" -I"$here" -I"$out")
warn=(-std=c99 -Wall -Wextra -Werror -pedantic)
freestanding=(-O2 -g -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns
    -ffunction-sections -fdata-sections -fno-stack-protector)

# The query-only image's filter, built by the host library.
gcc -O2 "${warn[@]}" "${inc[@]}" -o "$out/gen_query_filter" "$here/gen_query_filter.c" "$lib_host"
"$out/gen_query_filter" >"$out/query_filter.h"

# Runs an image; $1 = log name, the rest the command. Echoes the output,
# keeps it in $out/<name>.log, and returns the command's status.
run_image() {
    local name=$1 status=0
    shift
    timeout 900 "$@" </dev/null >"$out/$name.log" 2>&1 || status=$?
    cat "$out/$name.log"
    echo "[$name: exit status $status]"
    return $status
}

# Runs an image that must fail; $1 = log name.
expect_failure() {
    local name=$1 status=0
    shift
    run_image "$name" "$@" || status=$?
    if [ "$status" -eq 0 ]; then
        echo "ERROR: $name exited 0; a failure would not reach the exit status" >&2
        exit 1
    fi
    echo "[$name: failed as intended, exit status $status]"
}

# ---- Cortex-M4 under QEMU ----
step "Cortex-M4 (thumbv7em-none-eabihf) under qemu-system-arm -M mps2-an386"
arm=(arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 "${freestanding[@]}"
    "${inc[@]}" -nostdlib -T "$here/cortex_m4/mps2_an386.ld" -Wl,--gc-sections -Wl,-z,noexecstack)
# QEMU writes the semihosting console (SYS_WRITE0) to its stderr, and exits
# with the status the image passes to SYS_EXIT_EXTENDED.
qemu=(qemu-system-arm -M mps2-an386 -nographic -semihosting-config enable=on,target=native -kernel)
arm_image() { # $1 = output name, the rest: extra flags and sources
    local name=$1
    shift
    "${arm[@]}" -Wl,-Map="$out/$name.map" -o "$out/$name.elf" \
        "$here/cortex_m4/startup.c" "$here/mem.c" "$@" "$lib_arm" -lgcc
}
arm_image fw_arm "${warn[@]}" -DFW_EXPECT_SCALAR=1 "$here/firmware_test.c"
arm_image query_arm "${warn[@]}" "$here/query_only.c"
arm_image fail_check_arm "${warn[@]}" -DFW_INJECT_FAILURE=1 "$here/firmware_test.c"
arm_image fail_trap_arm "${warn[@]}" -DFW_INJECT_FAILURE=2 "$here/firmware_test.c"

expect_failure fail_check_arm "${qemu[@]}" "$out/fail_check_arm.elf"
expect_failure fail_trap_arm "${qemu[@]}" "$out/fail_trap_arm.elf"
grep -q "HardFault" "$out/fail_trap_arm.log" || { echo "ERROR: the HardFault handler did not report" >&2; exit 1; }
run_image query_arm "${qemu[@]}" "$out/query_arm.elf"
arm_started=$SECONDS
run_image fw_arm "${qemu[@]}" "$out/fw_arm.elf"
arm_seconds=$((SECONDS - arm_started))

# ---- Bare x86_64 ----
step "bare x86_64 (x86_64-unknown-none archive, no libc, static)"
x86=(gcc "${freestanding[@]}" "${inc[@]}" -nostdlib -static -fno-pie -no-pie -mno-red-zone -mgeneral-regs-only
    -maccumulate-outgoing-args -Wl,--gc-sections -Wl,--build-id=none)
x86_image() { # $1 = output name, the rest: extra flags and sources
    local name=$1
    shift
    "${x86[@]}" -o "$out/$name" "$here/x86_64_bare/start.c" "$here/mem.c" "$@" "$lib_x86" -lgcc
}
x86_image fw_x86 "${warn[@]}" -DFW_EXPECT_SCALAR=1 "$here/firmware_test.c"
x86_image query_x86 "${warn[@]}" "$here/query_only.c"
x86_image fail_check_x86 "${warn[@]}" -DFW_INJECT_FAILURE=1 "$here/firmware_test.c"
x86_image fail_trap_x86 "${warn[@]}" -DFW_INJECT_FAILURE=2 "$here/firmware_test.c"
# A kernel-style image must not touch SSE/AVX registers: the soft-float
# archive and -mgeneral-regs-only C code should give none.
if objdump -d --no-show-raw-insn "$out/fw_x86" | grep -Eq '%[xyz]mm[0-9]'; then
    echo "ERROR: the bare x86_64 image uses vector registers:" >&2
    objdump -d --no-show-raw-insn "$out/fw_x86" | grep -E '%[xyz]mm[0-9]' | head >&2
    exit 1
fi
echo "no SSE/AVX register in the bare x86_64 image"
expect_failure fail_check_x86 "$out/fail_check_x86"
expect_failure fail_trap_x86 "$out/fail_trap_x86"
run_image query_x86 "$out/query_x86"
run_image fw_x86 "$out/fw_x86"

# ---- Hosted x86_64, per backend ----
step "hosted x86_64: peak stack per backend"
gcc -O2 -g "${warn[@]}" -maccumulate-outgoing-args -mno-red-zone "${inc[@]}" -o "$out/stack_hosted" \
    "$here/stack_hosted.c" "$lib_host"
run_image stack_hosted "$out/stack_hosted"

# ---- Summary ----
step "summary"
# .text of an image split by origin, from the linker map: the Rust archive,
# libgcc, and our C (tests, start-up, mem*).
text_split() {
    awk '
    function hex(s,    i, v) {
        s = tolower(s); sub(/^0x/, "", s); v = 0
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v
    }
    function add(size, file) {
        if (file ~ /libribbon_kernel\.a/) lib += hex(size); else if (file ~ /libgcc\.a/) gcc += hex(size); else own += hex(size)
    }
    /^Linker script and memory map/ { on = 1; next }
    !on { next }
    /^\.[A-Za-z_]/ { out = $1 }
    out != ".text" { next }
    pend && NF >= 3 && $1 ~ /^0x/ { pend = 0; add($2, $3); next }
    /^ \.text/ { if (NF == 1) pend = 1; else if (NF >= 4) add($3, $4); next }
    END { printf "library %d, libgcc %d, test and start-up code %d", lib, gcc, own }' "$1"
}
text_of() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
echo "Cortex-M4 .text (arm-none-eabi-size -A; .rodata and the vector table not included):"
echo "  firmware_test image: $(text_of "$out/fw_arm.elf") bytes ($(text_split "$out/fw_arm.map"))"
echo "  query-only image:    $(text_of "$out/query_arm.elf") bytes ($(text_split "$out/query_arm.map"))"
echo "arm-none-eabi-size (Berkeley: text includes .rodata, e.g. the embedded filter):"
arm-none-eabi-size "$out/fw_arm.elf" "$out/query_arm.elf"
echo
for log in fw_arm fw_x86 stack_hosted; do
    awk '/^###/ { print; print ""; prev = $0; next } /^\|/ { print; prev = $0; next } prev ~ /^\|/ { print "" } { prev = $0 }' \
        "$out/$log.log"
done
echo "firmware_test took ${arm_seconds}s under QEMU"
echo "tests/embedded: all passed in $((SECONDS - start))s"
