//! The config file as written: TOML mirrored field for field, unknown keys
//! refused (toml's error names the key and its line). Nothing here is
//! checked beyond its TOML type; `Settings` parses the values. A key left
//! out is `None`, and `None` is left out when printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The config file, as written. Every CLI option has a key here, and
/// `--print-config` writes this same shape back with every key filled in.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub root: Option<PathBuf>,
    pub listen: Option<Vec<String>>,
    pub threads: Option<usize>,
    /// Connections placed by CPU, worker n kept on CPU n while they follow
    /// theirs (with one worker per CPU); on by default.
    pub cpu_affinity: Option<bool>,
    pub max_memory: Option<String>,
    pub max_file_in_memory: Option<String>,
    pub index_files: Option<Vec<String>>,
    pub serve_dotfiles: Option<bool>,
    /// "follow", "inside", "owner" or "never".
    pub symlinks: Option<String>,
    /// Older spelling: true is "follow", false "inside".
    #[serde(skip_serializing)]
    pub follow_outside_symlinks: Option<bool>,
    pub sendfile: Option<bool>,
    /// HTTP/2 (ALPN h2 and cleartext with prior knowledge); on by default.
    pub http2: Option<bool>,
    /// HTTP/3 on the UDP port of every HTTPS address; on by default.
    pub http3: Option<bool>,
    /// The congestion control of loopback listeners ("system": the
    /// system's); "cubic" by default.
    pub loopback_congestion: Option<String>,
    pub listing: Option<bool>,
    pub clean_urls: Option<bool>,
    pub fallback: Option<String>,
    pub not_found_page: Option<String>,
    pub cors: Option<String>,
    pub watch: Option<bool>,
    /// Where built variants are kept across restarts ("off": nowhere).
    pub cache_dir: Option<String>,
    pub cache_max_size: Option<String>,
    pub quiet: Option<bool>,
    /// The admin listener's address (`/metrics`, `/healthz`, …); absent: off.
    pub admin: Option<String>,
    /// The user to run as once the listeners are bound.
    pub user: Option<String>,
    /// Confine the process with Landlock (default true).
    pub sandbox: Option<bool>,
    #[serde(default)]
    pub log: FileLog,
    #[serde(default)]
    pub compression: FileCompression,
    #[serde(default)]
    pub dictionaries: FileDictionaries,
    #[serde(default)]
    pub limits: FileLimits,
    #[serde(default)]
    pub tls: FileTls,
    #[serde(default)]
    pub acme: FileAcme,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<FileHeaders>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<FileRedirect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<FileHost>,
}

/// One `[[hosts]]` virtual host: the names it answers for and its own root;
/// the options it does not set are the top level's.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileHost {
    pub names: Vec<String>,
    pub root: PathBuf,
    pub listing: Option<bool>,
    pub clean_urls: Option<bool>,
    pub fallback: Option<String>,
    pub not_found_page: Option<String>,
    /// This host's certificate, chosen by SNI.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

/// The `[tls]` table.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileTls {
    pub listen: Option<Vec<String>>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub self_signed: Option<bool>,
    pub redirect_https: Option<bool>,
    /// `Strict-Transport-Security` max-age; absent: not sent.
    pub hsts: Option<String>,
}

/// The `[acme]` table: certificates from an ACME CA.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileAcme {
    pub enabled: Option<bool>,
    pub domains: Option<Vec<String>>,
    pub email: Option<String>,
    pub directory: Option<String>,
    pub staging: Option<bool>,
    pub ca_root: Option<PathBuf>,
    pub dir: Option<PathBuf>,
    /// "tls-alpn-01" or "http-01".
    pub challenge: Option<String>,
}

/// The `[log]` table.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileLog {
    /// Access log file, or `-` for stdout; absent: no access log.
    pub access: Option<String>,
    /// `combined` or `json`.
    pub format: Option<String>,
    /// The server's own messages as JSON lines.
    pub json: Option<bool>,
}

/// The `[compression]` table.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileCompression {
    /// Codings built at load, preferred first; `[]` turns building off.
    pub codings: Option<Vec<String>>,
    pub min_size: Option<String>,
}

/// The `[dictionaries]` table: compression dictionaries (RFC 9842).
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileDictionaries {
    /// Offer dictionaries and send deltas (default true).
    pub enabled: Option<bool>,
    /// Earlier versions kept per URL pattern.
    pub keep_versions: Option<usize>,
    /// Bytes of earlier versions kept per root.
    pub keep_size: Option<String>,
}

/// A `[[headers]]` rule's `dictionary`: `false`, or a `match` pattern.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum FileDictionary {
    Switch(bool),
    Match(String),
}

/// The `[limits]` table.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimits {
    pub header_timeout: Option<String>,
    pub idle_timeout: Option<String>,
    pub send_timeout: Option<String>,
    pub drain_timeout: Option<String>,
    pub max_connections: Option<usize>,
    pub max_head_bytes: Option<String>,
    pub max_target_bytes: Option<String>,
    pub max_discard_body: Option<String>,
    pub quic_retry_above: Option<usize>,
}

/// One `[[headers]]` rule.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileHeaders {
    pub glob: String,
    pub cache_control: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
    /// `false`: never a dictionary; a string: the `match` pattern to offer.
    pub dictionary: Option<FileDictionary>,
}

/// One `[[redirects]]` rule.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileRedirect {
    pub from: String,
    pub to: String,
    #[serde(default = "default_redirect_status")]
    pub status: u16,
}

fn default_redirect_status() -> u16 {
    301
}

pub(super) fn read_file(path: &Path) -> anyhow::Result<ConfigFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config {}", path.display()))?;
    // toml's error names the line, column and the unknown or mistyped key.
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
