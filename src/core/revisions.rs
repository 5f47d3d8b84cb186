//! The protocol revisions this client speaks and its name for itself: one list, asked by the
//! client's opening and envelope and by the OAuth requests a transport makes.

/// The modern revision this client speaks.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision `initialize` asks for (and the OAuth metadata requests name).
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// Every legacy revision `initialize` accepts back.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The client's version, as `clientInfo` reports it: the TypeScript original's `Client` says
/// `{ name: 'rulvar', version: '1.0.0' }`, and a server (or a test of the original) that logs or
/// keys on the client it sees sees the same one, whatever this package's own version is.
pub const CLIENT_VERSION: &str = "1.0.0";

/// `protocol`: which era the connection opens in. `Auto` opens with the 2025 handshake and
/// falls forward to 2026-07-28 when the server refuses it; a pin speaks only its revision.
/// Here, beside the revisions, so that what reads a pin (the config, a cassette) needs no
/// other part of the core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Protocol {
    Auto,
    Legacy,
    Modern,
}
