# tests/embedded/fpu_insns.awk - finds the instructions that touch FPU or
# SIMD registers in `objdump -d --no-show-raw-insn` output.
#
#   objdump -d --no-show-raw-insn lib.a | awk -v arch=x86 -f fpu_insns.awk
#   arm-none-eabi-objdump -d --no-show-raw-insn lib.a | awk -v arch=arm -f fpu_insns.awk
#
# Prints one line per such instruction: member<TAB>function<TAB>instruction
# ("-" where objdump named no archive member or function).
#
# arch=x86 (AT&T syntax): an operand in %xmm/%ymm/%zmm, an AVX-512 mask
# register (%k0-%k7), an MMX register (%mm0-%mm7) or the x87 stack (%st,
# %st(i)); any x87 mnemonic (f...); the ones that touch that state without
# naming such a register (ldmxcsr, stmxcsr, fxsave, fxrstor, xsave*,
# xrstor*, emms, vzeroupper, vzeroall); by name the SSE moves and logic
# (movups, movaps, movdqa, movdqu, pxor, por, pand, xorps, ...); and every
# VEX/EVEX mnemonic (v..., but not verr/verw or the VMX vm... ones).
# arch=arm (UAL): any v... mnemonic (VFP and NEON: vldr, vstr, vmov, vpush,
# vmrs, ...), an operand s0-s31, d0-d31, q0-q15, fpscr, fpexc, and
# coprocessor instructions on p10/p11 (the VFP coprocessors).
# Plain awk (Debian's mawk): no \b, no gawk extensions.
BEGIN {
    if (arch != "x86" && arch != "arm") {
        print "fpu_insns.awk: pass -v arch=x86 or -v arch=arm" >"/dev/stderr"
        exit 2
    }
    x86_prefix = "^(rep|repz|repe|repnz|repne|lock|data16|data32|addr32|cs|ds|es|fs|gs|ss|notrack|bnd" \
        "|rex(\\.[WRXB]+)?|xacquire|xrelease)$"
    x86_reg = "%([xyz]mm[0-9]|mm[0-7]|k[0-7]|st([^a-z0-9]|$))"
    x86_state = "^v?(ld|st)mxcsr$|^fx(save|rstor)(64)?$|^xsave|^xrstor|^f?emms$|^vzero(upper|all)$"
    x86_sse = "^(mov(ap|up)[sd]|movdq[au]|movnt(dq|p[sd])|p(xor|or|and|andn)|(xor|and|andn|or)p[sd])$"
    x86_not_avx = "^ver[rw]$|^vm(call|launch|resume|read|write|xon|xoff|clear|ptrld|ptrst|func|load|save|run" \
        "|mcall|gexit)$"
    arm_reg = "(^|[^a-z0-9_])([sd]([0-9]|[12][0-9]|3[01])|q([0-9]|1[0-5])|fpscr|fpexc|fpsid|mvfr[012])([^a-z0-9_]|$)"
}

# "member.o:     file format ..." starts each archive member.
/^[^ \t].*:[ \t]+file format / { member = $0; sub(/:[ \t]+file format .*/, "", member); fn = "-"; next }
# "0000000000000000 <symbol>:"
/^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); next }
# "   1234:\tmnemonic operands" (Arm: a tab before the operands too; a
# long x86 instruction continued on the next line has no text there).
/^ *[0-9a-f]+:\t/ {
    insn = $0
    sub(/^ *[0-9a-f]+:\t/, "", insn)
    if (arch == "x86") sub(/[ \t]*#.*/, "", insn)   # objdump's comment
    else sub(/[ \t]*[@;].*/, "", insn)
    n = split(insn, tok, " ")
    i = 1
    if (arch == "x86")
        while (i <= n && tok[i] ~ x86_prefix) i++
    if (i > n) next
    mnem = tok[i]
    ops = ""
    for (j = i + 1; j <= n; j++) ops = ops " " tok[j]
    sub(/[ ,]*[0-9a-f]+ *<.*$/, "", ops)   # a branch target: "d8 <f+0xd8>"
    hit = 0
    if (arch == "x86") {
        if (ops ~ x86_reg) hit = 1
        else if (mnem ~ /^f[a-z0-9]+$/) hit = 1   # x87: no other AT&T mnemonic starts with f
        else if (mnem ~ x86_state || mnem ~ x86_sse) hit = 1
        else if (mnem ~ /^v/ && mnem !~ x86_not_avx) hit = 1
    } else {
        if (mnem ~ /^v/ || ops ~ arm_reg) hit = 1
        else if (mnem ~ /^(mcr|mrc|mcrr|mrrc|ldc|stc|cdp)/ && ops ~ /^ *p?1[01],/) hit = 1
    }
    if (hit) printf "%s\t%s\t%s\n", (member == "" ? "-" : member), fn, insn
}
