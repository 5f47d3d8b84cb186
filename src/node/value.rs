//! A JS value handed back from Rust as is (already built with N-API calls).

use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::sys;

pub struct JsAny(pub sys::napi_value);

impl ToNapiValue for JsAny {
    /// SAFETY: a `JsAny` holds a value made on the env of the call that returns it (the
    /// exports that make one build it with that call's `Env::raw()`), and napi-rs converts a
    /// return value with that same env before the call's scope closes: the handle is handed
    /// back as it is, still live, and nothing is dereferenced here.
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl TypeName for JsAny {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}
