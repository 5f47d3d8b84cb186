//! The napi edge: JS values in, calls down, JS values out; no policy decisions here. One
//! `binding_*` file per JS class it exposes. What runs on, or for, the JS thread itself (the
//! port, the executor, the in-process hand-over, the batch of finished calls) is `jsthread`.

mod binding_config;
mod binding_policy;
mod binding_port;
mod binding_snapshot;
mod binding_source;
mod calls;
mod cassette;
mod connector;
mod convert;
mod entry;
mod environment;
mod errors;
mod hash_text;
mod hashing;
mod hooks;
mod js;
mod jsthread;
mod memory;
mod oauth;
mod pipe;
mod source_hooks;
mod tooldefs;
mod tracing;
mod value;
