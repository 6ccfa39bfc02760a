//! Errors crossing into JS. Every error carries a stable code (the JS `error.code`),
//! which `ts/native.ts` maps to an error class. Panics are caught here so a bug in
//! the native core becomes a JS exception instead of aborting the Node process.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Declares the code constants and `codes::ALL` from one list, so no code can be left out
/// of what `nativeErrorCodes()` reports.
macro_rules! error_codes {
  ($($name:ident = $code:literal,)*) => {
    /// Stable error codes. `NATIVE_CODES` in ts/native.ts mirrors them;
    /// tests/native/error-codes.test.ts compares the two through `nativeErrorCodes()`.
    pub mod codes {
      $(pub const $name: &str = $code;)*
      /// Every code above, in declaration order.
      pub const ALL: &[&str] = &[$($code),*];
    }
  };
}

error_codes! {
  INVALID_ARGUMENT = "NATIVE_INVALID_ARGUMENT",
  IO = "NATIVE_IO",
  CORRUPT_FILE = "NATIVE_CORRUPT_FILE",
  DIMENSION_MISMATCH = "NATIVE_DIMENSION_MISMATCH",
  CLOSED = "NATIVE_CLOSED",
  PANIC = "NATIVE_PANIC",
  INTERNAL = "NATIVE_INTERNAL",
}

/// Every error code the addon can put in front of a message, for the test that keeps
/// `NATIVE_CODES` in ts/native.ts equal to this list.
#[napi_derive::napi]
pub fn native_error_codes() -> Vec<String> {
  codes::ALL.iter().map(|c| (*c).to_owned()).collect()
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
        (*s).to_owned()
      } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
      } else {
        "unknown panic".to_owned()
      };
      Err(err(codes::PANIC, format!("internal error in native core: {msg}")))
    }
  }
}

/// Test hook, only in an addon built with the `testing` feature (never the installed one):
/// proves a panic surfaces as a JS error (tests/native/addon.test.ts).
#[cfg(feature = "testing")]
#[napi_derive::napi]
pub fn debug_panic(message: String) -> napi::Result<()> {
  guard(|| panic!("{message}"))
}
