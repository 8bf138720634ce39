#!/usr/bin/env bash
# tests/embedded/run.sh - the C ABI in freestanding images, and the stack
# each entry point needs.
#
#   1. builds the static library for the host, thumbv7em-none-eabihf and
#      x86_64-unknown-none;
#   2. objdump: no FPU/SIMD instruction in the code the two freestanding
#      archives give a C program (and, as a control, SSE in the hosted one);
#   3. Cortex-M4 under QEMU (mps2-an386): firmware_test.c, a query-only
#      image (its .text size is reported), and two deliberately failing
#      images that must exit non-zero (a failed check, a HardFault);
#   4. bare x86_64 (no libc, static, raw syscalls): firmware_test.c and
#      the query-only image, plus the deliberate failures;
#   5. the archives `make static TARGET=...` installs (relinked: only
#      ribbon_* global): their symbols, and the firmware test on both;
#   6. hosted x86_64: peak stack per entry point for each SIMD backend.
# Prints the stack tables and .text sizes at the end; exits non-zero if
# anything fails. Needs (Debian): gcc, binutils, gcc-arm-none-eabi,
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
for tool in cargo rustup gcc objdump nm awk arm-none-eabi-gcc arm-none-eabi-size arm-none-eabi-objdump \
    arm-none-eabi-nm qemu-system-arm timeout; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if command -v rustup >/dev/null 2>&1; then
    for target in thumbv7em-none-eabihf x86_64-unknown-none; do
        rustup target list --installed | grep -qx "$target" || missing+=("rust target $target")
    done
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]}" >&2
    echo "install: apt-get install gcc binutils gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm" >&2
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

# ---- No FPU/SIMD instructions in the freestanding archives ----
# Kernels and interrupt handlers that must not touch FPU/SIMD registers need
# code without such instructions. The hosted x86_64 archive has them even in
# the scalar backend: the compiler copies, zeroes and vectorizes with SSE2,
# part of the x86_64 baseline. x86_64-unknown-none is soft-float. The check,
# with fpu_insns.awk on objdump's disassembly:
#   a. fpu_insns.awk flags the lines it must and no others;
#   b. control: it finds SSE in the hosted archive's own objects;
#   c. each freestanding archive: none in the library's own objects, and
#      none in an image linked from the archive alone with every ribbon_*
#      function kept (--gc-sections), i.e. all the archive code a C program
#      can get. x86_64-unknown-none: none in the whole archive either,
#      apart from compiler-rt's complex multiply/divide and float negation
#      helpers, which nothing in it calls. thumbv7em: the archive's libm,
#      float parsing and formatting use VFP; nothing reaches them.
step "no FPU/SIMD instructions in the freestanding archives (objdump)"
disasm() { # $1 = x86 or arm, $2 = object, archive or image
    local dis=objdump
    [ "$1" = arm ] && dis=arm-none-eabi-objdump
    "$dis" -d -C --no-show-raw-insn "$2"
}
# Prints member<TAB>function<TAB>instruction for each instruction that
# touches FPU/SIMD registers; arguments as disasm's.
fpu_insns() { disasm "$1" "$2" | awk -v arch="$1" -f "$here/fpu_insns.awk"; }
# $1 = arch, $2 = flag (every line must be flagged) or pass (none may be),
# the rest: instructions as objdump prints them.
fpu_selftest() {
    local arch=$1 want=$2 got
    shift 2
    got=$(printf '%s\n' "$@" | awk '{ printf "%8x:\t%s\n", NR, $0 }' |
        awk -v arch="$arch" -f "$here/fpu_insns.awk" | wc -l)
    if { [ "$want" = flag ] && [ "$got" -ne $# ]; } || { [ "$want" = pass ] && [ "$got" -ne 0 ]; }; then
        echo "ERROR: fpu_insns.awk (arch=$arch) flagged $got of these $# lines; it must $want each:" >&2
        printf '  %s\n' "$@" >&2
        exit 1
    fi
}
# fpu_insns' hits by origin: the crate of each archive member, or
# compiler-rt for its C objects.
fpu_origins() {
    awk -F'\t' '{ o = $1; if (o ~ /^[0-9a-f]+-[^.]*\.o$/) o = "compiler-rt"; else sub(/-[0-9a-f]+\..*/, "", o); n[o]++ }
        END { for (o in n) print n[o], o }' "$1" |
        sort -k1,1nr | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }'
}
fpu_selftest x86 flag 'movups %xmm0,(%rdi)' 'movaps 0x10(%rsp),%xmm1' 'pxor   %xmm2,%xmm2' \
    'movdqu (%rsi),%xmm3' 'vmovdqu64 %zmm0,(%rdi)' 'vpxor  %ymm1,%ymm1,%ymm1' 'vzeroupper' \
    'kmovw  %k1,%eax' 'movq   %mm0,%rax' 'emms' 'fldz' 'fstpl  (%rax)' 'fxch   %st(1)' \
    'ldmxcsr (%rsp)' 'fxsave (%rdi)' 'xsaveopt (%rdi)' 'data16 cs movaps %xmm0,%xmm1'
fpu_selftest x86 pass 'mov    %rdi,%rax' 'movq   %rax,%rbx' 'movsq  %ds:(%rsi),%es:(%rdi)' \
    'rep stos %rax,%es:(%rdi)' 'popcnt %rdi,%rax' 'push   %rbx' 'call   40 <fldz_xmm0>' \
    'cs nopw 0x0(%rax,%rax,1)' 'verw   %ax' 'movzbl (%rdi),%eax    # 1234 <st>'
fpu_selftest arm flag $'vldr\td0, [r0]' $'vstr\ts1, [sp, #4]' $'vmov\tr0, r1, d0' $'vpush\t{d8-d15}' \
    $'vmrs\tAPSR_nzcv, fpscr' $'vmoveq.f32\ts0, s1' $'vldmia\tr0!, {s0-s3}' $'mcr\t10, 7, r0, cr8, cr0, {0}'
fpu_selftest arm pass $'ldr\tr0, [r1, #4]' $'push\t{r4, r5, r6, lr}' $'add.w\tr3, r3, #1' \
    $'bl\t8000 <vldr_d0_s1>' $'beq.w\td8 <f+0xd8>' $'cbz\tr0, d14 <f(s0)+0xd14>' \
    $'ldrd\tr2, r3, [sp, #8]' $'umull\tr0, r1, r2, r3' $'ldr\tr3, [pc, #12]\t@ (8010 <s0>)' \
    $'mcr\t15, 0, r0, cr7, cr5, {4}'
echo "fpu_insns.awk: flags the x86 and Arm FPU/SIMD instructions of its self-test, and no others"

# b. The control.
fpu_insns x86 "$lib_host" >"$out/fpu_host.txt"
host_own=$(awk -F'\t' '$1 ~ /^ribbon_kernel-/' "$out/fpu_host.txt" | wc -l)
echo "control: the hosted x86_64 archive ($lib_host):"
echo "  $(wc -l <"$out/fpu_host.txt") SSE/AVX instructions" \
    "in $(cut -f2 "$out/fpu_host.txt" | sort -u | wc -l) functions ($(fpu_origins "$out/fpu_host.txt"))"
echo "  among them (scalar backend, planning, C entry points; instructions per function):"
awk -F'\t' '$1 ~ /^ribbon_kernel-/ && $2 ~ /^ribbon_[a-z0-9_]+$|::arch::scalar::|::plan::Plan::/ { n[$2]++ }
    END { for (f in n) printf "    %5d  %s\n", n[f], f }' "$out/fpu_host.txt" | sort -k2
echo "  ribbon_contains: $(awk -F'\t' '$2 == "ribbon_contains"' "$out/fpu_host.txt" | wc -l) in its own body;" \
    "it calls the backend's query (ribbon_kernel::arch::scalar::contains for the scalar one)"
echo "  e.g. ribbon_plan_init:"
awk -F'\t' '$2 == "ribbon_plan_init" && n++ < 3 { print "    " $3 }' "$out/fpu_host.txt"
if [ "$host_own" -eq 0 ]; then
    echo "ERROR: no SSE instruction found in the hosted archive's own objects: the detector is broken" >&2
    exit 1
fi

# c. The freestanding archives. $1 = arch, $2 = archive, $3 = name, the
# rest: the compiler driver that links the image.
fpu_free() {
    local arch=$1 lib=$2 name=$3 nm=nm
    shift 3
    [ "$arch" = arm ] && nm=arm-none-eabi-nm
    fpu_insns "$arch" "$lib" >"$out/fpu_$name.txt"
    local own exports keep=() s linked img
    own=$(awk -F'\t' '$1 ~ /^ribbon_kernel-/' "$out/fpu_$name.txt" | wc -l)
    exports=$("$nm" -g --defined-only "$lib" 2>/dev/null | awk '$2 == "T" && $3 ~ /^ribbon_/ { print $3 }' | sort -u)
    for s in $exports; do keep+=("-Wl,--undefined=$s"); done
    # The archive's code only: what it leaves undefined (mem*) is the platform's.
    "$@" -nostdlib -Wl,--gc-sections -Wl,-e,ribbon_version -Wl,--unresolved-symbols=ignore-all "${keep[@]}" \
        -o "$out/fpu_$name.elf" "$lib" -lgcc
    fpu_insns "$arch" "$out/fpu_$name.elf" >"$out/fpu_$name.elf.txt"
    img=$(wc -l <"$out/fpu_$name.elf.txt")
    linked=$("$nm" -g --defined-only "$out/fpu_$name.elf" | awk '$3 ~ /^ribbon_/ { print $3 }' | sort -u | wc -l)
    echo "$name archive: $(wc -l <"$out/fpu_$name.txt") FPU/SIMD instructions in the whole archive" \
        "($(fpu_origins "$out/fpu_$name.txt")), $own in the library's own objects;"
    echo "  image linked from it with all $linked ribbon_* functions ($(disasm "$arch" "$out/fpu_$name.elf" |
        awk '/^[0-9a-f]+ <.*>:$/ { n++ } END { print n + 0 }') functions): $img"
    if [ "$own" -ne 0 ] || [ "$img" -ne 0 ] || [ -z "$exports" ] || [ "$linked" -ne "$(echo "$exports" | wc -l)" ]; then
        echo "ERROR: $name: FPU/SIMD instructions in the library's code, or not every entry point linked:" >&2
        awk -F'\t' '$1 ~ /^ribbon_kernel-/' "$out/fpu_$name.txt" | sed -n 1,10p >&2
        sed -n 1,10p "$out/fpu_$name.elf.txt" >&2
        exit 1
    fi
}
fpu_free x86 "$lib_x86" x86_64-unknown-none gcc -static -no-pie
fpu_free arm "$lib_arm" thumbv7em-none-eabihf \
    arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
# x86_64-unknown-none: the whole archive, apart from compiler-rt's complex
# arithmetic and float negation (C built with SSE; nothing in the archive
# calls it, and the image above has none of it).
awk -F'\t' '!($1 ~ /^[0-9a-f]+-[^.]*\.o$/ && $2 ~ /^__(mul|div)[sd]c3$|^__neg[sd]f2$/)' \
    "$out/fpu_x86_64-unknown-none.txt" >"$out/fpu_x86_64-unknown-none.rest.txt"
if [ -s "$out/fpu_x86_64-unknown-none.rest.txt" ]; then
    echo "ERROR: SSE/AVX/x87 instructions in the x86_64-unknown-none archive:" >&2
    sed -n 1,20p "$out/fpu_x86_64-unknown-none.rest.txt" >&2
    exit 1
fi
echo "x86_64-unknown-none archive: all of them in compiler-rt's __mulsc3, __muldc3, __divsc3, __divdc3," \
    "__negsf2, __negdf2 (not in the image)"

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
# A kernel-style image must not touch FPU/SIMD registers: the soft-float
# archive and -mgeneral-regs-only C code should give none.
fpu_insns x86 "$out/fw_x86" >"$out/fpu_fw_x86.txt"
if [ -s "$out/fpu_fw_x86.txt" ]; then
    echo "ERROR: the bare x86_64 image uses FPU/SIMD registers:" >&2
    sed -n 1,10p "$out/fpu_fw_x86.txt" >&2
    exit 1
fi
echo "no SSE/AVX/x87 instruction in the bare x86_64 image"
expect_failure fail_check_x86 "$out/fail_check_x86"
expect_failure fail_trap_x86 "$out/fail_trap_x86"
run_image query_x86 "$out/query_x86"
run_image fw_x86 "$out/fw_x86"

text_of() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }

# ---- The archives `make TARGET=...` installs ----
# The same archives relinked by tools/localize-symbols.sh (only ribbon_*
# global, so that they link beside other Rust static libraries): nothing
# else defined, nothing but mem* needed, and the firmware test passes on
# them too (the images above, and the sizes below, use cargo's archives).
step "the archives make installs (make static TARGET=...): symbols, firmware test"
for target in thumbv7em-none-eabihf x86_64-unknown-none; do
    make --no-print-directory -s -C "$root" static TARGET="$target" CARGO="cargo --quiet"
done
inst_arm=$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/c/libribbon_kernel.a
inst_x86=$CARGO_TARGET_DIR/x86_64-unknown-none/release/c/libribbon_kernel.a
for pair in "arm-none-eabi-nm $inst_arm" "nm $inst_x86"; do
    read -r tool lib <<<"$pair"
    others=$("$tool" -g --defined-only "$lib" | awk 'NF == 3 && $3 !~ /^ribbon_/ { print $3 }')
    needs=$("$tool" -u "$lib" | awk 'NF == 2 { print $2 }' |
        grep -vxE 'memcpy|memmove|memset|memcmp|bcmp|__aeabi_mem(cpy|move|set|clr)[48]?' || true)
    if [ -n "$others" ] || [ -n "$needs" ]; then
        echo "ERROR: $lib defines $others; needs $needs" >&2
        exit 1
    fi
    echo "$lib: $("$tool" -g --defined-only "$lib" | awk 'NF == 3' | wc -l) global symbols, all ribbon_*;" \
        "needs $("$tool" -u "$lib" | awk 'NF == 2 { print $2 }' | tr '\n' ' ')"
done
lib_arm=$inst_arm arm_image fw_arm_installed "${warn[@]}" -DFW_EXPECT_SCALAR=1 "$here/firmware_test.c"
lib_x86=$inst_x86 x86_image fw_x86_installed "${warn[@]}" -DFW_EXPECT_SCALAR=1 "$here/firmware_test.c"
run_image fw_arm_installed "${qemu[@]}" "$out/fw_arm_installed.elf" | tail -n 2
run_image fw_x86_installed "$out/fw_x86_installed" | tail -n 2
echo "Cortex-M4 firmware_test .text: $(text_of "$out/fw_arm_installed.elf") bytes from the installed archive," \
    "$(text_of "$out/fw_arm.elf") from cargo's"

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
