//! A Rust static library with std (tests/c/packaging.sh): what another
//! Rust team hands a C program. Its archive defines the same Rust runtime
//! symbols as any other Rust static library (`rust_begin_unwind`,
//! `rust_eh_personality`, core's functions).

use std::panic;

/// 42, computed through std: formatting, a `Vec`, and a caught panic
/// (which needs the unwinder and the personality routine).
#[unsafe(no_mangle)]
pub extern "C" fn other_answer() -> u32 {
    let digits: Vec<u32> = format!("{}", 6 * 7)
        .chars()
        .filter_map(|c| c.to_digit(10))
        .collect();
    // Quietly: no message from the default hook.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let caught = panic::catch_unwind(|| -> u32 {
        if digits.len() == 2 {
            panic!("unwinds");
        }
        0
    });
    panic::set_hook(hook);
    match caught {
        Err(_) => digits[0] * 10 + digits[1],
        Ok(_) => 0,
    }
}
