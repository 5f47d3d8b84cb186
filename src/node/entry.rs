//! Entries the JS side calls once per tool call or per reply, as plain N-API functions.
//!
//! A method of a napi-rs class pays about 0.2 us a call before its body runs (measured on
//! `takeCompletions()`, 0.31 us against 0.16 for a free function with a string argument): it
//! unwraps `this`, checks its type tag (a private-property lookup), and registers and releases
//! a borrow of it in a map behind a global mutex. A function made here carries what it serves
//! in its own data pointer, so a call is `napi_get_cb_info` and the body. What it serves is held
//! until V8 collects the function (its finalizer), so a call never outlives it.

use super::js;
use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, Error, JsError, Status};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// The most arguments an entry reads; the ones a caller left out are `undefined`.
const MAX_ARGS: usize = 5;

/// An entry's arguments, `undefined` past the ones given.
pub(super) type Args = [js::Val; MAX_ARGS];

/// What an entry runs: its env and its arguments in, its return value out.
pub(super) type Body = dyn Fn(js::Env, &Args) -> napi::Result<js::Val> + 'static;

/// A JS function named `name` that runs `body` on each call.
pub(super) fn entry<'env>(
    env: &'env Env,
    name: &str,
    body: Box<Body>,
) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    // A thin pointer to the boxed closure: the function's data.
    let data = Box::into_raw(Box::new(body)).cast::<c_void>();
    let mut function = ptr::null_mut();
    let made = js::check(
        raw,
        // SAFETY: the env of the napi call this runs in, on its thread; the name's bytes and
        // length are a `&str`'s; `data` is the box made above, read only by `called` while the
        // function lives; `function` is a local the call writes.
        unsafe {
            sys::napi_create_function(
                raw,
                name.as_ptr().cast(),
                name.len() as isize,
                Some(called),
                data,
                &mut function,
            )
        },
        "entry function",
    )
    .and_then(|()| {
        js::check(
            raw,
            // SAFETY: live env and the function just made; `data` is the box above, handed to
            // `release` once, when V8 collects the function (no call of it can run then).
            unsafe {
                sys::napi_add_finalizer(
                    raw,
                    function,
                    data,
                    Some(release),
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            },
            "entry finalizer",
        )
    });
    if let Err(e) = made {
        // SAFETY: `data` is the box made above; without a finalizer nothing else frees it,
        // and a function without one is never handed out.
        drop(unsafe { Box::from_raw(data.cast::<Box<Body>>()) });
        return Err(e);
    }
    // SAFETY: `function` is a value just made on `env`, the env of the call this runs in;
    // the `Unknown` is bound to its lifetime.
    Ok(unsafe { Unknown::from_raw_unchecked(raw, function) })
}

/// An entry's N-API callback: its body, with a failure thrown (never unwound) into JS.
unsafe extern "C" fn called(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = MAX_ARGS;
    let mut argv = [ptr::null_mut(); MAX_ARGS];
    let mut data = ptr::null_mut();
    // SAFETY: N-API calls this on the JS thread with its live env and callback info; `argv`
    // holds `argc` slots (N-API fills the ones past the arguments given with `undefined`), and
    // `data` is a local.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        throw(
            env,
            Error::new(Status::GenericFailure, "mcp: entry called without its data"),
        );
        return ptr::null_mut();
    }
    // SAFETY: `data` is the `Box<Body>` `entry` made for this function, freed only by its
    // finalizer, after V8 collected the function: never during a call of it.
    let body = unsafe { &*data.cast::<Box<Body>>() };
    match catch_unwind(AssertUnwindSafe(|| body(env, &argv))) {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => {
            throw(env, e);
            ptr::null_mut()
        }
        Err(_) => {
            throw(
                env,
                Error::new(
                    Status::GenericFailure,
                    "mcp: internal error in a native entry",
                ),
            );
            ptr::null_mut()
        }
    }
}

/// Throws `e` into JS, unless an exception is pending already (a JS call in the body threw).
fn throw(env: sys::napi_env, e: Error) {
    let mut pending = false;
    // SAFETY: the live env of the callback this runs in; `pending` is a local.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if !pending {
        // SAFETY: the live env of the callback this runs in, on its thread.
        unsafe { JsError::from(e).throw_into(env) };
    }
}

/// The finalizer of an entry: frees what its body holds.
unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box `entry` made for the collected function; N-API runs a
    // finalizer once.
    drop(unsafe { Box::from_raw(data.cast::<Box<Body>>()) });
}
