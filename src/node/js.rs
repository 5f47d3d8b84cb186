//! Thin, checked wrappers over the N-API calls the conversions need.
//!
//! Raw `sys` calls keep the value walk cheap (no intermediate wrapper objects) and make every
//! failure, including a throwing getter, an ordinary `Err` instead of a panic.
//!
//! Every function here takes the `napi_env` of the N-API call it runs in (its callers pass
//! `Env::raw()` of the `#[napi]` function or callback they are in, on the JS thread that called
//! it) and handles made in that call (arguments, or values made by these functions during it),
//! which stay valid until it returns or until the handle scope they were made in closes. The
//! SAFETY comments below rest on that: the env is live and used on its own thread, the handles
//! are live, and every out-pointer is a local of the function. N-API checks the kind of each
//! value itself (a wrong one is an error status, never undefined behaviour).

use napi::sys;
use napi::{Error, Result, Status};
use std::ptr;

pub type Env = sys::napi_env;
pub type Val = sys::napi_value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Symbol,
    Object,
    Function,
    External,
    BigInt,
}

/// Turns an N-API status into a Result; a pending JS exception stays pending.
pub fn check(env: Env, status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    let mut pending = false;
    // SAFETY: the caller's live env, on its thread; `pending` is a local the call writes.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if pending {
        return Err(Error::new(Status::PendingException, what.to_owned()));
    }
    Err(Error::new(Status::GenericFailure, format!("{what} failed")))
}

pub fn kind(env: Env, v: Val) -> Result<Kind> {
    let mut t = 0;
    // SAFETY: live env and handle (module doc); `t` is a local the call writes.
    check(env, unsafe { sys::napi_typeof(env, v, &mut t) }, "typeof")?;
    Ok(match t {
        sys::ValueType::napi_undefined => Kind::Undefined,
        sys::ValueType::napi_null => Kind::Null,
        sys::ValueType::napi_boolean => Kind::Boolean,
        sys::ValueType::napi_number => Kind::Number,
        sys::ValueType::napi_string => Kind::String,
        sys::ValueType::napi_symbol => Kind::Symbol,
        sys::ValueType::napi_function => Kind::Function,
        sys::ValueType::napi_external => Kind::External,
        sys::ValueType::napi_bigint => Kind::BigInt,
        _ => Kind::Object,
    })
}

pub fn number(env: Env, v: Val) -> Result<f64> {
    let mut out = 0.0;
    check(
        env,
        // SAFETY: live env and handle; `out` is a local (a non-number is an error status).
        unsafe { sys::napi_get_value_double(env, v, &mut out) },
        "number",
    )?;
    Ok(out)
}

/// A number that is a whole `u32` (an index, a handle's number); `None` for any other number
/// (negative, fractional, NaN, too large).
pub fn whole(env: Env, v: Val) -> Result<Option<u32>> {
    let n = number(env, v)?;
    Ok((n >= 0.0 && n <= f64::from(u32::MAX) && n.fract() == 0.0).then_some(n as u32))
}

pub fn boolean(env: Env, v: Val) -> Result<bool> {
    let mut out = false;
    check(
        env,
        // SAFETY: live env and handle; `out` is a local (a non-boolean is an error status).
        unsafe { sys::napi_get_value_bool(env, v, &mut out) },
        "boolean",
    )?;
    Ok(out)
}

pub fn string(env: Env, v: Val) -> Result<String> {
    // Most strings (keys, short values) fit a small buffer: one call instead of two. V8 never
    // splits a character, so a truncated copy fills the buffer to within 3 bytes of its end;
    // anything shorter than that is the whole string.
    let mut small = [0u8; 256];
    let mut written = 0usize;
    check(
        env,
        // SAFETY: live env and handle; the buffer is `small`, and its length is the size given,
        // within which N-API writes the bytes and their NUL; `written` is a local.
        unsafe {
            sys::napi_get_value_string_utf8(
                env,
                v,
                small.as_mut_ptr().cast(),
                small.len(),
                &mut written,
            )
        },
        "string",
    )?;
    if written < small.len() - 4 {
        // N-API writes valid UTF-8 (lone surrogates already replaced).
        return Ok(match std::str::from_utf8(&small[..written]) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(&small[..written]).into_owned(),
        });
    }
    let mut len = 0usize;
    check(
        env,
        // SAFETY: live env and handle; a null buffer asks for the length only, into the local.
        unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) },
        "string length",
    )?;
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    check(
        env,
        // SAFETY: live env and handle; `buf` holds `len + 1` bytes, the size given (the string
        // and its NUL); `written` is a local.
        unsafe {
            sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), len + 1, &mut written)
        },
        "string",
    )?;
    buf.truncate(written);
    // N-API already replaced lone surrogates, so the bytes are valid UTF-8.
    Ok(String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Runs `f` on the bytes of Uint8Array `v` (a Node `Buffer` is one), read in place. `f` must
/// not run JS, which could detach the array's buffer while it reads.
pub fn with_bytes<T>(env: Env, v: Val, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
    let mut kind = 0;
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    check(
        env,
        // SAFETY: live env and handle (a value that is not a typed array is an error status);
        // every out-pointer is a local the call writes.
        unsafe {
            sys::napi_get_typedarray_info(
                env,
                v,
                &mut kind,
                &mut length,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        },
        "bytes",
    )?;
    if kind != sys::TypedarrayType::uint8_array {
        return Err(Error::new(
            Status::InvalidArg,
            "not a Uint8Array".to_owned(),
        ));
    }
    let bytes = if length == 0 || data.is_null() {
        &[][..]
    } else {
        // SAFETY: N-API hands back the array's first element (its offset applied) and its
        // length in elements, bytes for a Uint8Array; the buffer stays attached while `f`
        // runs, which runs no JS (the contract above), within this call.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) }
    };
    Ok(f(bytes))
}

/// Runs `f` in its own handle scope: the handles it creates are released when it returns, so
/// a walk over a large value keeps a small set of live handles (V8 scans them at every GC).
/// `f` must not return a handle it created.
pub fn scoped<T>(env: Env, f: impl FnOnce() -> T) -> Result<T> {
    let mut scope = ptr::null_mut();
    check(
        env,
        // SAFETY: the caller's live env, on its thread; `scope` is a local the call writes.
        unsafe { sys::napi_open_handle_scope(env, &mut scope) },
        "handle scope",
    )?;
    let out = f();
    // SAFETY: `scope` was opened just above on this env and is closed once, as the innermost
    // one: scopes `f` opens are closed before it returns (this function is how they are
    // opened). The handles made in it die here, which is why `f` must not return one.
    unsafe { sys::napi_close_handle_scope(env, scope) };
    Ok(out)
}

pub fn is_array(env: Env, v: Val) -> Result<bool> {
    let mut out = false;
    check(
        env,
        // SAFETY: live env and handle; `out` is a local the call writes.
        unsafe { sys::napi_is_array(env, v, &mut out) },
        "isArray",
    )?;
    Ok(out)
}

pub fn array_len(env: Env, v: Val) -> Result<u32> {
    let mut out = 0u32;
    check(
        env,
        // SAFETY: live env and handle; `out` is a local (a non-array is an error status).
        unsafe { sys::napi_get_array_length(env, v, &mut out) },
        "array length",
    )?;
    Ok(out)
}

pub fn element(env: Env, v: Val, i: u32) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env and handle; `out` is a local the call writes.
        unsafe { sys::napi_get_element(env, v, i, &mut out) },
        "array element",
    )?;
    Ok(out)
}

/// Own enumerable string keys, in `Object.keys` order.
pub fn own_keys(env: Env, v: Val) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env and handle; the mode, filter and conversion are N-API's constants;
        // `out` is a local the call writes.
        unsafe {
            sys::napi_get_all_property_names(
                env,
                v,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut out,
            )
        },
        "Object.keys",
    )?;
    Ok(out)
}

pub fn property(env: Env, obj: Val, key: Val) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env and handles; `out` is a local (a getter that throws is an error
        // status with the exception pending).
        unsafe { sys::napi_get_property(env, obj, key, &mut out) },
        "property read",
    )?;
    Ok(out)
}

pub fn named(env: Env, obj: Val, key: &str) -> Result<Val> {
    let key = create_string(env, key)?;
    property(env, obj, key)
}

pub fn create_string(env: Env, s: &str) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; N-API reads exactly `s.len()` bytes from `s`, which are valid UTF-8
        // (a `&str`), and a `str`'s length fits `isize`; `out` is a local.
        unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out) },
        "string creation",
    )?;
    Ok(out)
}

/// Like `create_string`, but text that is all ASCII is copied as Latin-1, which V8 takes
/// without decoding: the common case for JSON, on the path of every finished call.
pub fn create_text(env: Env, s: &str) -> Result<Val> {
    if !s.is_ascii() {
        return create_string(env, s);
    }
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; N-API reads exactly `s.len()` bytes from `s`, all ASCII (checked
        // above), which Latin-1 reads as the same characters; `out` is a local.
        unsafe {
            sys::napi_create_string_latin1(env, s.as_ptr().cast(), s.len() as isize, &mut out)
        },
        "string creation",
    )?;
    Ok(out)
}

pub fn create_number(env: Env, n: f64) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; `out` is a local the call writes.
        unsafe { sys::napi_create_double(env, n, &mut out) },
        "number creation",
    )?;
    Ok(out)
}

pub fn create_bool(env: Env, b: bool) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; `out` is a local the call writes.
        unsafe { sys::napi_get_boolean(env, b, &mut out) },
        "boolean",
    )?;
    Ok(out)
}

pub fn null(env: Env) -> Result<Val> {
    let mut out = ptr::null_mut();
    // SAFETY: live env; `out` is a local the call writes.
    check(env, unsafe { sys::napi_get_null(env, &mut out) }, "null")?;
    Ok(out)
}

pub fn undefined(env: Env) -> Result<Val> {
    let mut out = ptr::null_mut();
    // SAFETY: live env; `out` is a local the call writes.
    check(
        env,
        unsafe { sys::napi_get_undefined(env, &mut out) },
        "undefined",
    )?;
    Ok(out)
}

pub fn create_object(env: Env) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; `out` is a local the call writes.
        unsafe { sys::napi_create_object(env, &mut out) },
        "object creation",
    )?;
    Ok(out)
}

pub fn create_array(env: Env, len: usize) -> Result<Val> {
    let mut out = ptr::null_mut();
    check(
        env,
        // SAFETY: live env; `out` is a local the call writes.
        unsafe { sys::napi_create_array_with_length(env, len, &mut out) },
        "array creation",
    )?;
    Ok(out)
}

pub fn set_element(env: Env, arr: Val, i: u32, v: Val) -> Result<()> {
    check(
        env,
        // SAFETY: live env and handles (a non-object `arr` is an error status).
        unsafe { sys::napi_set_element(env, arr, i, v) },
        "array write",
    )
}

/// Sets an own enumerable data property. `__proto__` is defined, not assigned, so a member of
/// that name stays data instead of replacing the object's prototype.
pub fn set_member(env: Env, obj: Val, key: &str, v: Val) -> Result<()> {
    let name = create_string(env, key)?;
    if key == "__proto__" {
        let descriptor = sys::napi_property_descriptor {
            utf8name: ptr::null(),
            name,
            method: None,
            getter: None,
            setter: None,
            value: v,
            attributes: sys::PropertyAttributes::writable
                | sys::PropertyAttributes::enumerable
                | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        return check(
            env,
            // SAFETY: live env and handles; `descriptor` is one local descriptor (the count
            // given), named by the `name` handle with a null `utf8name`, holding `v`, with no
            // callbacks and so no `data` read.
            unsafe { sys::napi_define_properties(env, obj, 1, &descriptor) },
            "property definition",
        );
    }
    check(
        env,
        // SAFETY: live env and handles (a non-object `obj` is an error status).
        unsafe { sys::napi_set_property(env, obj, name, v) },
        "property write",
    )
}
