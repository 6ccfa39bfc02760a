//! Conversions shared by the binding modules: crate errors to coded napi errors, the
//! closable handle behind every native class, exact integers between JS numbers and `i64`,
//! and JS string arrays to one UTF-8 buffer and back. Nothing here knows an algorithm.

use std::convert::Infallible;
use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::sys;
use noderag_graph::GraphError;
use noderag_store::{StoreError, Strings};
use noderag_text::TextError;

use crate::error::{codes, err};

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// An error that knows its stable code (`bindings/src/error.rs`), so any crate's error can
/// leave an entry point or a `Job` as `"<CODE>: <message>"`.
pub trait NativeError {
  fn into_napi(self) -> napi::Error;
}

impl NativeError for napi::Error {
  fn into_napi(self) -> napi::Error {
    self
  }
}

impl NativeError for Infallible {
  fn into_napi(self) -> napi::Error {
    match self {}
  }
}

impl NativeError for GraphError {
  fn into_napi(self) -> napi::Error {
    match self {
      GraphError::InvalidArgument(msg) => err(codes::INVALID_ARGUMENT, msg),
    }
  }
}

impl NativeError for StoreError {
  fn into_napi(self) -> napi::Error {
    let code = match &self {
      StoreError::NotFound { .. } | StoreError::Io { .. } => codes::IO,
      StoreError::Corrupt { .. }
      | StoreError::MissingColumn { .. }
      | StoreError::WrongColumnType { .. }
      | StoreError::Unsupported { .. } => codes::CORRUPT_FILE,
      StoreError::DimensionMismatch { .. } => codes::DIMENSION_MISMATCH,
      StoreError::InvalidTable { .. } => codes::INVALID_ARGUMENT,
    };
    err(code, self)
  }
}

impl NativeError for TextError {
  fn into_napi(self) -> napi::Error {
    err(codes::INVALID_ARGUMENT, self)
  }
}

// ---------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------

/// The state of a native class with `close()`: shared with running calls through an `Arc`
/// (a call keeps it alive until it returns), `None` once closed.
pub struct Handle<T> {
  inner: RwLock<Option<Arc<T>>>,
  /// What a call after `close()` says (NATIVE_CLOSED), e.g. "the search graph is closed".
  closed_message: &'static str,
}

impl<T> Handle<T> {
  pub fn new(value: T, closed_message: &'static str) -> Self {
    Handle {
      inner: RwLock::new(Some(Arc::new(value))),
      closed_message,
    }
  }

  /// The value, or NATIVE_CLOSED.
  pub fn get(&self) -> napi::Result<Arc<T>> {
    let g = self.inner.read().map_err(|_| self.poisoned())?;
    g.as_ref()
      .cloned()
      .ok_or_else(|| err(codes::CLOSED, self.closed_message))
  }

  /// Drops this handle's reference (running calls keep theirs). Idempotent.
  pub fn close(&self) -> napi::Result<()> {
    *self.inner.write().map_err(|_| self.poisoned())? = None;
    Ok(())
  }

  pub fn is_closed(&self) -> bool {
    self.inner.read().map_or(true, |g| g.is_none())
  }

  fn poisoned(&self) -> napi::Error {
    err(
      codes::INTERNAL,
      format!("lock poisoned ({})", self.closed_message),
    )
  }
}

// ---------------------------------------------------------------------------------------
// Exact integers
// ---------------------------------------------------------------------------------------

/// Largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// JS numbers → `i64`: every present value must be a safe integer; a null row (validity 0)
/// becomes 0. `Err(i)`: the index of the first value that is not.
pub fn exact_i64s(values: &[f64], validity: Option<&[u8]>) -> Result<Vec<i64>, usize> {
  let mut out = Vec::with_capacity(values.len());
  for (i, &x) in values.iter().enumerate() {
    let present = validity.is_none_or(|v| v.get(i).is_none_or(|&b| b != 0));
    if !present {
      out.push(0);
      continue;
    }
    if x.fract() != 0.0 || !x.is_finite() || x.abs() > MAX_SAFE_INTEGER as f64 {
      return Err(i);
    }
    out.push(x as i64);
  }
  Ok(out)
}

/// `i64` → JS numbers, refusing a value beyond ±(2^53 − 1). `Err(i)`: the index of the first.
pub fn exact_f64s(values: &[i64]) -> Result<Vec<f64>, usize> {
  match values
    .iter()
    .position(|v| v.unsigned_abs() > MAX_SAFE_INTEGER as u64)
  {
    Some(i) => Err(i),
    None => Ok(values.iter().map(|&v| v as f64).collect()),
  }
}

// ---------------------------------------------------------------------------------------
// String arrays
// ---------------------------------------------------------------------------------------

/// A JS `(string | null)[]` converted straight into one UTF-8 buffer plus offsets
/// (no `String` per value), and back.
pub struct JsStrings(pub Strings);

impl TypeName for JsStrings {
  fn type_name() -> &'static str {
    "Array<string | null>"
  }
  fn value_type() -> ValueType {
    ValueType::Object
  }
}

impl ValidateNapiValue for JsStrings {}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
  if status == sys::Status::napi_ok {
    Ok(())
  } else {
    Err(err(
      codes::INVALID_ARGUMENT,
      format!("{what} (napi status {status})"),
    ))
  }
}

// SAFETY (every `unsafe` block of the two impls below): napi passes `env` and `value` for
// this call on the JS thread; the out-pointers are locals (or the reserved tail of
// `out.bytes`, with its length given) that outlive each call.
impl FromNapiValue for JsStrings {
  unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
    let mut is_array = false;
    check(
      unsafe { sys::napi_is_array(env, value, &mut is_array) },
      "cannot inspect strings",
    )?;
    if !is_array {
      return Err(err(
        codes::INVALID_ARGUMENT,
        "strings must be an array of strings or nulls",
      ));
    }
    let mut len = 0u32;
    check(
      unsafe { sys::napi_get_array_length(env, value, &mut len) },
      "cannot read the strings array",
    )?;
    let mut out = Strings::with_capacity(len as usize, len as usize * 16);
    for i in 0..len {
      let mut item = std::ptr::null_mut();
      check(
        unsafe { sys::napi_get_element(env, value, i, &mut item) },
        "cannot read a string element",
      )?;
      let mut ty = 0;
      check(
        unsafe { sys::napi_typeof(env, item, &mut ty) },
        "cannot inspect a string element",
      )?;
      match ty {
        sys::ValueType::napi_null | sys::ValueType::napi_undefined => out.push_null(),
        sys::ValueType::napi_string => {
          let mut n = 0usize;
          check(
            unsafe { sys::napi_get_value_string_utf8(env, item, std::ptr::null_mut(), 0, &mut n) },
            "cannot measure a string",
          )?;
          // napi writes a NUL terminator after the bytes: reserve one more, keep `n`.
          let start = out.bytes.len();
          out.bytes.reserve(n + 1);
          let mut written = 0usize;
          check(
            unsafe {
              sys::napi_get_value_string_utf8(
                env,
                item,
                out.bytes.as_mut_ptr().add(start).cast(),
                n + 1,
                &mut written,
              )
            },
            "cannot copy a string",
          )?;
          // SAFETY: napi wrote `written` (== n) initialised bytes at `start`.
          unsafe { out.bytes.set_len(start + written) };
          out.offsets.push(out.bytes.len());
          if let Some(v) = &mut out.validity {
            v.push(1);
          }
        }
        _ => {
          return Err(err(
            codes::INVALID_ARGUMENT,
            format!("strings[{i}] is neither a string nor null"),
          ));
        }
      }
    }
    Ok(JsStrings(out))
  }
}

impl ToNapiValue for JsStrings {
  unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    let s = val.0;
    let mut arr = std::ptr::null_mut();
    check(
      unsafe { sys::napi_create_array_with_length(env, s.len(), &mut arr) },
      "cannot create an array",
    )?;
    let mut null = std::ptr::null_mut();
    check(unsafe { sys::napi_get_null(env, &mut null) }, "cannot get null")?;
    for i in 0..s.len() {
      let item = match s.get_bytes(i) {
        None => null,
        Some(b) => {
          let mut js = std::ptr::null_mut();
          check(
            unsafe { sys::napi_create_string_utf8(env, b.as_ptr().cast(), b.len() as isize, &mut js) },
            "cannot create a string",
          )?;
          js
        }
      };
      check(
        unsafe { sys::napi_set_element(env, arr, i as u32, item) },
        "cannot fill an array",
      )?;
    }
    Ok(arr)
  }
}
