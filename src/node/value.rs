//! A JS value handed back from Rust as is (already built with N-API calls).

use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::sys;

pub struct JsAny(pub sys::napi_value);

impl ToNapiValue for JsAny {
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
