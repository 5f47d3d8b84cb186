//! A stdio server's confinement, as the host declared it (`sandbox`): which directories it may
//! read and write, which TCP ports it may connect to, and what happens where the system cannot
//! enforce a right. Pure policy: the transport applies it (`transport::process::sandbox`).
//! Part of the source's identity: its canonical form enters the toolset lock and the authority
//! hash, so loosening it is a visible change.

use serde_json::{json, Value};

/// What the server may reach over the network.
#[derive(Debug, Clone, PartialEq)]
pub enum Net {
    /// No TCP connect or bind.
    Deny,
    /// Unconfined.
    Allow,
    /// TCP connect to these only, no bind.
    Connect(Vec<Endpoint>),
}

/// One `host:port` a server may connect to. The host is recorded but Linux confines by port
/// alone: a host other than `*` is a right the system cannot enforce (`OnUnsupported`).
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OnUnsupported {
    /// The connect fails, typed, naming what cannot be enforced.
    Refuse,
    /// The server starts with what can be enforced; the host is told once.
    Warn,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub net: Net,
    pub on_unsupported: OnUnsupported,
    pub limits: Limits,
}

/// Resource limits (`sandbox.limits`), each absent unless declared: set with `setrlimit` in the
/// child, so they bound the server and what it starts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Limits {
    /// `openFiles`: descriptors open at once (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// `addressSpaceMb`: virtual memory, in MiB (`RLIMIT_AS`). V8 reserves gigabytes of address
    /// space up front, so a Node server needs a generous one.
    pub address_space_mb: Option<u64>,
}

/// What a confined server may always read (the system's runtime: libraries, certificates, name
/// resolution, the dynamic loader's cache, the harmless devices), besides the command's own
/// install tree. Never the home directory, `/proc` (another process's environment is there),
/// `/etc` as a whole, or `/dev` as a whole (a server run as root could read a disk's blocks
/// and so every file).
pub const DEFAULT_READ: [&str; 23] = [
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What a confined server may always write: the null device.
pub const DEFAULT_WRITE: [&str; 1] = ["/dev/null"];

impl Sandbox {
    /// The policy's canonical form: the source's identity (the lock) and the authority hash.
    pub fn identity(&self) -> Value {
        let net = match &self.net {
            Net::Deny => json!("deny"),
            Net::Allow => json!("allow"),
            Net::Connect(to) => {
                let mut to: Vec<String> = to
                    .iter()
                    .map(|e| format!("{}:{}", e.host, e.port))
                    .collect();
                to.sort();
                json!({ "connect": to })
            }
        };
        let sorted = |paths: &[String]| {
            let mut p = paths.to_vec();
            p.sort();
            p
        };
        let mut id = json!({ "fs": { "read": sorted(&self.read), "write": sorted(&self.write) }, "net": net });
        // Present only when declared: a policy without limits keeps the identity it had.
        if let Some(n) = self.limits.open_files {
            id["limits"]["openFiles"] = json!(n);
        }
        if let Some(n) = self.limits.address_space_mb {
            id["limits"]["addressSpaceMb"] = json!(n);
        }
        id
    }

    /// The identity's digest (SHA-256 of its JCS text): what a ToolDef of the source carries
    /// into the authority hash.
    pub fn digest(&self) -> String {
        super::hash::sha256_hex(&super::jcs::serialize(&self.identity()))
    }

    /// The policy in a line, for an error that says a sandbox was in force.
    pub fn describe(&self) -> String {
        let net = match &self.net {
            Net::Deny => "no network".to_owned(),
            Net::Allow => "any network".to_owned(),
            Net::Connect(to) => {
                let to: Vec<String> = to
                    .iter()
                    .map(|e| format!("{}:{}", e.host, e.port))
                    .collect();
                format!("TCP connect to {}", to.join(", "))
            }
        };
        let list = |p: &[String]| match p.is_empty() {
            true => "nothing".to_owned(),
            false => p.join(", "),
        };
        format!(
            "reads {} (and the system's runtime), writes {}, {net}",
            list(&self.read),
            list(&self.write)
        )
    }

    /// The rights asked for that no platform enforces as asked (a host narrower than `*`).
    pub fn beyond_any_platform(&self) -> Vec<String> {
        match &self.net {
            Net::Connect(to) => to
                .iter()
                .filter(|e| e.host != "*")
                .map(|e| {
                    format!(
                        "connect to host '{}' (TCP is confined by port only: '*:{}')",
                        e.host, e.port
                    )
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_canonical_and_loosening_changes_it() {
        let policy = |read: &[&str], net: Net| Sandbox {
            read: read.iter().map(|s| s.to_string()).collect(),
            write: vec![],
            net,
            on_unsupported: OnUnsupported::Refuse,
            limits: Limits::default(),
        };
        let a = policy(&["/b", "/a"], Net::Deny);
        let b = policy(&["/a", "/b"], Net::Deny);
        assert_eq!(a.identity(), b.identity());
        assert_ne!(
            a.identity(),
            policy(&["/a", "/b", "/c"], Net::Deny).identity()
        );
        assert_ne!(a.identity(), policy(&["/a", "/b"], Net::Allow).identity());
        let to = |host: &str| {
            Net::Connect(vec![Endpoint {
                host: host.into(),
                port: 5432,
            }])
        };
        assert!(policy(&[], to("*")).beyond_any_platform().is_empty());
        let mut limited = a.clone();
        limited.limits.open_files = Some(64);
        assert_eq!(limited.identity()["limits"], json!({ "openFiles": 64 }));
        assert_ne!(limited.identity(), a.identity());
        assert_eq!(policy(&[], to("127.0.0.1")).beyond_any_platform().len(), 1);
    }
}
