//! Errors crossing into JS. Every error carries a stable code (the JS `error.code`),
//! which `ts/native.ts` maps to an error class. Panics are caught here so a bug in
//! the native core becomes a JS exception instead of aborting the Node process.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Stable error codes. Keep in sync with `NATIVE_CODES` in ts/native.ts.
pub mod codes {
  pub const INVALID_ARGUMENT: &str = "NATIVE_INVALID_ARGUMENT";
  pub const IO: &str = "NATIVE_IO";
  pub const CORRUPT_FILE: &str = "NATIVE_CORRUPT_FILE";
  pub const DIMENSION_MISMATCH: &str = "NATIVE_DIMENSION_MISMATCH";
  pub const CLOSED: &str = "NATIVE_CLOSED";
  pub const PANIC: &str = "NATIVE_PANIC";
  pub const INTERNAL: &str = "NATIVE_INTERNAL";
}

/// napi-rs 3 cannot return a custom status type from `#[napi]` functions, so the code
/// travels as a fixed prefix of the message: `"<CODE>: <message>"`. `ts/native.ts`
/// splits it off into `error.code` and picks the error class; JS never sees the prefix.
/// (Signatures of `#[napi]` functions must spell `napi::Result<T>`: the .d.ts generator
/// does not see through type aliases.)
pub fn err(code: &'static str, message: impl std::fmt::Display) -> napi::Error {
  napi::Error::new(napi::Status::GenericFailure, format!("{code}: {message}"))
}

/// Runs `f`, turning a panic into a `NATIVE_PANIC` error instead of unwinding into Node.
pub fn guard<T>(f: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
  match catch_unwind(AssertUnwindSafe(f)) {
    Ok(r) => r,
    Err(payload) => {
      let msg = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
      } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
      } else {
        "unknown panic".to_string()
      };
      Err(err(codes::PANIC, format!("internal error in native core: {msg}")))
    }
  }
}

/// Test hook: proves a panic surfaces as a JS error (see tests/native/addon.test.ts).
#[napi_derive::napi]
pub fn debug_panic(message: String) -> napi::Result<()> {
  guard(|| panic!("{message}"))
}
