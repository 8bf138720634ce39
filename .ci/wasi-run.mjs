#!/usr/bin/env node
// Cargo runner for wasm32-wasip1 (`.cargo/config.toml`): runs a WASI
// program (a test binary, an example) under Node's built-in `node:wasi`.
//
//   .ci/wasi-run.mjs PROGRAM.wasm [ARGS...]
//
// - ARGS go to the program as they are (libtest's `--nocapture`, filters).
// - The program sees the whole environment, as natively: the tests read
//   RIBBON_REQUIRE_BACKENDS, libtest reads RUST_TEST_THREADS and the like.
// - The crate root is preopened under its own absolute path: tests read
//   files through `env!("CARGO_MANIFEST_DIR")`, an absolute path baked in
//   at compile time. So is the current directory (cargo runs tests in the
//   package root), and relative paths resolve against it.
// - The exit code is the program's (libtest's 101 on failure; a trap, such
//   as a panic under panic=abort, exits 134 like SIGABRT would natively).
// - Node's ExperimentalWarning for WASI is dropped; other warnings stay.
//
// Tested with Node 20.20 and with Debian 12's nodejs (18.20).

import { readFile } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { setFlagsFromString } from "node:v8";

// Node 20 calls its WASI functions from wasm through V8's fast API calls,
// which can crash the process: a fast call that allocates may start a
// garbage collection it must not (nodejs/node#46777, #53087). The full
// report example died with SIGSEGV at its end under Node 20.20 this way.
// Plain calls cost nothing measurable here. Set before any wasm is
// compiled.
setFlagsFromString("--no-turbo-fast-api-calls");

const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
    const type = typeof rest[0] === "string" ? rest[0] : rest[0]?.type;
    if (type === "ExperimentalWarning" && String(warning).includes("WASI")) return;
    return emitWarning.call(process, warning, ...rest);
};

const [program, ...args] = process.argv.slice(2);
if (!program) {
    console.error("usage: wasi-run.mjs PROGRAM.wasm [ARGS...]");
    process.exit(2);
}

// After the warning filter: loading the module emits the warning.
const { WASI } = await import("node:wasi");

// The crate root (this script's parent folder) and the current directory
// under their own absolute paths, and the current directory as "." too:
// relative paths then resolve as they would natively (the program's
// getcwd() still says "/").
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cwd = process.cwd();
const preopens = { ".": cwd };
for (const dir of [root, realpathSync(root), cwd]) preopens[dir] = dir;

const wasi = new WASI({
    version: "preview1",
    args: [program, ...args],
    // The whole environment, as a native test binary sees it.
    env: process.env,
    preopens,
    returnOnExit: true,
});

let code;
try {
    const module = await WebAssembly.compile(await readFile(program));
    const instance = await WebAssembly.instantiate(module, {
        wasi_snapshot_preview1: wasi.wasiImport,
    });
    code = wasi.start(instance);
} catch (error) {
    // A trap: `unreachable` is how panic=abort (and `std::process::abort`)
    // ends a wasm program. Report it as an abort, not as success. Rust has
    // printed the panic message already; the wasm stack adds nothing.
    console.error(`wasi-run: ${program}: ${error}`);
    code = 134;
}
process.exitCode = code;
