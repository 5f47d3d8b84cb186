//! The napi edge: JS values in, core calls, JS values out. No policy decisions here.

mod binding_policy;
mod convert;
mod errors;
mod hashing;
mod hooks;
mod js;
mod source;
mod tooldefs;
mod value;
