//! The one napi `AsyncTask` of the addon: a boxed computation for the libuv pool plus the
//! conversion of its result to JS, instead of one task struct per async function.
//!
//! ```ignore
//! #[napi(ts_return_type = "Promise<Uint32Array>")]
//! pub fn graph_core_numbers(node_count: u32, src: Uint32Array, dst: Uint32Array)
//!   -> napi::Result<AsyncTask<Job<Vec<u32>, Uint32Array>>> {
//!   guard(|| {
//!     let input = EdgesInput::new(node_count, &src, &dst, None);
//!     Ok(Job::task(move || Ok::<_, GraphError>(kcore::core_numbers(&input.graph()?)), Uint32Array::new))
//!   })
//! }
//! ```
//!
//! `work` runs on a pool thread inside `guard` (a panic becomes a `NATIVE_PANIC` error); its
//! error type is any crate error with a code (`convert::NativeError`). `convert` runs on the
//! JS thread when the promise settles. Inputs the work needs are moved into its closure:
//! copy JS buffers first (`to_vec()`) unless the function documents that JS must leave them
//! alone until the promise settles.

use napi::bindgen_prelude::{AsyncTask, Env, Task, ToNapiValue, TypeName};

use crate::convert::NativeError;
use crate::error::{codes, err, guard};

type Work<O> = Box<dyn FnOnce() -> napi::Result<O> + Send>;
type Convert<O, J> = Box<dyn FnOnce(O) -> napi::Result<J> + Send>;

pub struct Job<O: Send + 'static, J> {
  work: Option<Work<O>>,
  convert: Option<Convert<O, J>>,
}

impl<O: Send + 'static, J: ToNapiValue + TypeName + 'static> Job<O, J> {
  /// A task whose result converts to JS without failing.
  pub fn task<E: NativeError>(
    work: impl FnOnce() -> Result<O, E> + Send + 'static,
    convert: impl FnOnce(O) -> J + Send + 'static,
  ) -> AsyncTask<Self> {
    Self::try_task(work, move |o| Ok(convert(o)))
  }

  /// A task whose conversion to JS may fail (e.g. a value JS numbers cannot hold).
  pub fn try_task<E: NativeError>(
    work: impl FnOnce() -> Result<O, E> + Send + 'static,
    convert: impl FnOnce(O) -> napi::Result<J> + Send + 'static,
  ) -> AsyncTask<Self> {
    AsyncTask::new(Job {
      work: Some(Box::new(move || work().map_err(NativeError::into_napi))),
      convert: Some(Box::new(convert)),
    })
  }
}

impl<O: Send + 'static, J: ToNapiValue + TypeName> Task for Job<O, J> {
  type Output = O;
  type JsValue = J;

  fn compute(&mut self) -> napi::Result<O> {
    let work = self
      .work
      .take()
      .ok_or_else(|| err(codes::INTERNAL, "native task ran twice"))?;
    guard(work)
  }

  fn resolve(&mut self, _env: Env, output: O) -> napi::Result<J> {
    let convert = self
      .convert
      .take()
      .ok_or_else(|| err(codes::INTERNAL, "native task resolved twice"))?;
    guard(|| convert(output))
  }
}
