#!/usr/bin/env bash
# tests/kernel/run.sh - the C static library inside a running Linux kernel.
#
# Builds the x86_64-unknown-none archive (soft-float, no red zone, kernel
# code model) relinked for a kernel module, an out-of-tree module (Kbuild,
# ktest.c and the portable firmware test) against Debian's
# linux-headers-amd64, boots Debian's kernel under qemu-system-x86_64 (KVM
# when /dev/kvm is usable, software emulation otherwise) with a busybox
# initramfs that loads the module, and reads the kernel log back. Fails on
# any failed check, oops, BUG, WARNING or stack-protector report, or a
# missing final PASS line.
#
#   bash tests/kernel/run.sh            the test
#   bash tests/kernel/run.sh --inject   the module drops one member from a
#                                       filter and still expects it: this
#                                       run must FAIL (CI checks that it does)
#
# Installs what it needs (Debian packages, the rustup target). Output in
# $CARGO_TARGET_DIR/kernel (default target/kernel): the module, the
# initramfs, the kernel log (kernel.log).
set -euo pipefail

inject=0
case "${1:-}" in
--inject) inject=1 ;;
"") ;;
*)
    echo "usage: $0 [--inject]" >&2
    exit 2
    ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
out=$target_dir/kernel
mkdir -p "$out"
start=$SECONDS
step() { echo; echo "== $* (t=$((SECONDS - start))s)"; }

# ---- What it needs ----
step "packages: Debian's kernel headers and image, QEMU, busybox"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx insmod || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
ls -d /usr/src/linux-headers-*-amd64 >/dev/null 2>&1 || need+=(linux-headers-amd64)
if [ ${#need[@]} -gt 0 ]; then
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
# The newest installed headers name the kernel; its image comes from the
# package of the same name, unpacked here (not installed: no initramfs
# generation, nothing in /boot).
kver=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1 | sed 's|.*/linux-headers-||')
kbuild=/usr/src/linux-headers-$kver
vmlinuz=/boot/vmlinuz-$kver
if [ ! -r "$vmlinuz" ]; then
    vmlinuz=$out/image/boot/vmlinuz-$kver
    if [ ! -r "$vmlinuz" ]; then
        rm -rf "$out/image" "$out/deb"
        mkdir -p "$out/deb"
        (cd "$out/deb" && apt-get download -q "linux-image-$kver" >/dev/null 2>&1 ||
            { $sudo apt-get update -q >/dev/null && apt-get download -q "linux-image-$kver" >/dev/null; })
        dpkg-deb -x "$out"/deb/linux-image-"$kver"_*.deb "$out/image"
    fi
fi
echo "kernel $kver: headers $kbuild, image $vmlinuz"
rustup target list --installed | grep -qx x86_64-unknown-none || rustup target add x86_64-unknown-none

# ---- The library, as a module links it ----
step "the x86_64-unknown-none archive, relinked for a kernel module"
# Static relocations and direct calls (relro-level=off: no calls through a
# GOT, which the module loader cannot relocate); the target itself brings
# the kernel code model, no red zone and soft-float.
(cd "$root" && CARGO_TARGET_DIR=$target_dir/kernel-cargo \
    RUSTFLAGS="-C relocation-model=static -C relro-level=off" \
    cargo rustc --quiet --release --lib --no-default-features --features staticlib \
    --crate-type staticlib --target x86_64-unknown-none)
raw=$target_dir/kernel-cargo/x86_64-unknown-none/release/libribbon_kernel.a
obj=$out/ribbon_kernel.o
# Only what the ribbon_* functions reach (core's formatting and the rest go:
# they would need relocations a module cannot have), then every symbol but
# the API local, so that nothing clashes with the kernel's own.
roots=$(readelf -sW "$raw" | awk '$5 == "GLOBAL" && $7 != "UND" && $8 ~ /^ribbon_/ { print "-u", $8 }' | sort -u)
# shellcheck disable=SC2086
ld -r --gc-sections $roots -o "$obj.full" --whole-archive "$raw"
objcopy -w --keep-global-symbol='ribbon_*' --strip-debug \
    --remove-section=.llvmbc --remove-section=.llvmcmd "$obj.full" "$obj"
rm -f "$obj.full"
# What a module loader relocates on x86_64, and what the kernel exports.
relocs=$(readelf -rW "$obj" | awk '$3 ~ /^R_X86_64_/ { print $3 }' | sort -u | tr '\n' ' ')
bad_relocs=$(echo "$relocs" | tr ' ' '\n' | grep -vxE 'R_X86_64_(64|32S|PC32|PLT32)|' || true)
undefined=$(readelf -sW "$obj" | awk '$7 == "UND" && $8 != "" { print $8 }' | sort -u | tr '\n' ' ')
bad_undefined=$(echo "$undefined" | tr ' ' '\n' | grep -vxE 'memcpy|memmove|memset|memcmp|bcmp|' || true)
globals=$(readelf -sW "$obj" | awk '$5 == "GLOBAL" && $7 != "UND" { n++ } END { print n + 0 }')
simd=$(objdump -d --no-show-raw-insn "$obj" | grep -cE '%[xyz]mm[0-9]|%st\(|\bf(ld|st)' || true)
echo "ribbon_kernel.o: $(stat -c %s "$obj") bytes, $globals global symbols (ribbon_*)," \
    "relocations: $relocs; needs: $undefined; SSE/AVX/x87 instructions: $simd"
if [ -n "$bad_relocs" ] || [ -n "$bad_undefined" ] || [ "$simd" != 0 ]; then
    echo "ERROR: not linkable into a module: relocations '$bad_relocs', symbols '$bad_undefined', $simd vector instructions" >&2
    exit 1
fi

# ---- The module ----
step "the module against $kbuild"
mod=$out/module
rm -rf "$mod"
mkdir -p "$mod/include"
cp "$here/Kbuild" "$here/ktest.c" "$mod/"
cp -r "$here/compat" "$mod/"
cp "$root/include/ribbon_kernel.h" "$mod/include/"
cp "$root/tests/embedded/firmware_test.c" "$root/tests/embedded/platform.h" \
    "$root/tests/embedded/splitmix.h" "$root/tests/embedded/stack_probe.h" "$mod/"
cp "$obj" "$mod/ribbon_kernel.o_shipped"
# modpost reads each object's .cmd file (symbol versions); kbuild writes
# none for a shipped object.
echo "cmd_$mod/ribbon_kernel.o := cp $mod/ribbon_kernel.o_shipped $mod/ribbon_kernel.o" >"$mod/.ribbon_kernel.o.cmd"
# No -j: kbuild output stays in order; the module is three files.
make -s -C "$kbuild" M="$mod" KTEST_INJECT=$inject modules 2>&1 | tee "$out/build.log"
if grep -qiE 'warning|error' "$out/build.log"; then
    echo "ERROR: the module build warned (above)" >&2
    exit 1
fi
ls -l "$mod/ribbon_ktest.ko"

# ---- The initramfs: busybox, the module, an init that loads it ----
step "initramfs"
rd=$out/initramfs
rm -rf "$rd"
mkdir -p "$rd/bin" "$rd/proc" "$rd/sys" "$rd/dev"
cp /bin/busybox "$rd/bin/busybox"
for tool in sh mount insmod echo poweroff sleep cat; do
    ln -s busybox "$rd/bin/$tool"
done
cp "$mod/ribbon_ktest.ko" "$rd/"
cat >"$rd/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "ribbon_init: loading ribbon_ktest.ko"
insmod /ribbon_ktest.ko
echo "ribbon_init: insmod exited $?"
poweroff -f
EOF
chmod +x "$rd/init"
(cd "$rd" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"

# ---- Boot ----
log=$out/kernel.log
# Boots with the given vCPU count and accelerator options and waits for
# the guest to power off. Gives up with status 2 when a "probe" boot has
# not run the initramfs's init within 20 s (some nested KVMs accept a
# guest and never boot it: this project's VMs offer a /dev/kvm whose CPUID
# lacks SSE3, and the kernel stops after "Probing EDD"), and with status 4
# when the console has been silent for 120 s (a software-emulated boot
# once hung in early network setup with two vCPUs; the caller boots again).
boot() {
    local probe=$1 cpus=$2
    shift 2
    rm -f "$log"
    timeout 900 qemu-system-x86_64 "$@" -m 1024 -smp "$cpus" -nographic -no-reboot \
        -kernel "$vmlinuz" -initrd "$out/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 oops=panic loglevel=7" </dev/null >"$log" 2>&1 &
    local qemu=$! waited=0 size=0 quiet=0 now
    while kill -0 "$qemu" 2>/dev/null; do
        if [ "$probe" = probe ] && ! grep -q 'ribbon_init: loading' "$log" 2>/dev/null &&
            [ $waited -ge 20 ]; then
            kill "$qemu" 2>/dev/null || true
            wait "$qemu" 2>/dev/null || true
            return 2
        fi
        now=$(stat -c %s "$log" 2>/dev/null || echo 0)
        if [ "$now" = "$size" ]; then quiet=$((quiet + 1)); else quiet=0; size=$now; fi
        if [ $quiet -ge 120 ]; then
            echo "the console has been silent for 120 s; stopping this boot"
            kill "$qemu" 2>/dev/null || true
            wait "$qemu" 2>/dev/null || true
            return 4
        fi
        sleep 1
        waited=$((waited + 1))
    done
    wait "$qemu"
}
set +e
how="software emulation"
qemu_status=2
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    step "boot $kver under qemu-system-x86_64 with KVM"
    boot probe 2 -enable-kvm -cpu host,-arch-capabilities
    qemu_status=$?
    how="KVM"
    if [ $qemu_status = 2 ]; then
        echo "KVM did not boot the kernel within 20 s (the log ends: $(tail -c 300 "$log" | tr -d '\r' | tail -2 | tr '\n' ' '))"
    fi
fi
if [ $qemu_status = 2 ] || [ $qemu_status = 4 ]; then
    how="software emulation (TCG): in-kernel timings measure the emulator"
    step "boot $kver under qemu-system-x86_64, $how"
    # One vCPU: the test needs no second one, and emulating one is steadier.
    boot wait 1 -cpu max
    qemu_status=$?
    if [ $qemu_status = 4 ]; then
        step "boot again, $how"
        boot wait 1 -cpu max
        qemu_status=$?
    fi
fi
set -e
tr -d '\r' <"$log" >"$log.txt" && mv "$log.txt" "$log"
echo "booted with $how; qemu exited $qemu_status"

# ---- Verdict ----
step "the kernel log ($log)"
grep -E 'ribbon_ktest: (ok|FAIL|skip|time|PASS|library)|ribbon_init' "$log" | sed 's/^\[ *[0-9.]*\] //' |
    grep -vE 'ribbon_ktest: ok ' || true
echo "($(grep -c 'ribbon_ktest: ok ' "$log" || true) checks passed, lines not shown)"
problems=$(grep -E 'ribbon_ktest: FAIL|Oops|BUG:|WARNING:|Call Trace|general protection|stack-protector|Kernel panic|kernel BUG|segfault|unable to handle' "$log" || true)
verdict=pass
if [ -n "$problems" ]; then
    verdict=fail
    echo "the kernel log reports:" >&2
    echo "$problems" | head -20 >&2
fi
if ! grep -q 'ribbon_ktest: PASS' "$log"; then
    verdict=fail
    echo "no 'ribbon_ktest: PASS' line (qemu exited $qemu_status); the log ends:" >&2
    tail -15 "$log" >&2
fi
if [ "$inject" = 1 ]; then
    if [ "$verdict" = fail ] && grep -q 'ribbon_ktest: FAIL .*members found' "$log"; then
        echo "the injected false negative was caught: this run fails, as it must"
        exit 1
    fi
    echo "ERROR: the injected false negative went unnoticed" >&2
    exit 3
fi
[ "$verdict" = pass ] || exit 1
echo "kernel module test: all passed in $((SECONDS - start))s"
