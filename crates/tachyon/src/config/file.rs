//! The config file as written: TOML mirrored field for field, unknown keys
//! refused (toml's error names the key and its line). Nothing here is
//! checked beyond its TOML type; `Settings` parses the values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The config file, as written. Every CLI option has a key here, and
/// `--print-config` writes this same shape back with every key filled in.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_file_in_memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serve_dotfiles: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_outside_symlinks: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sendfile: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_urls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_found_page: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cors: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet: Option<bool>,
    #[serde(default)]
    pub compression: FileCompression,
    #[serde(default)]
    pub limits: FileLimits,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<FileHeaders>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<FileRedirect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<FileHost>,
}

/// One `[[hosts]]` virtual host: the names it answers for and its own root;
/// the options it does not set are the top level's.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileHost {
    pub names: Vec<String>,
    pub root: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_urls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_found_page: Option<String>,
}

/// The `[compression]` table.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileCompression {
    /// Codings built at load, preferred first; `[]` turns building off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codings: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_size: Option<String>,
}

/// The `[limits]` table.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_head_bytes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_target_bytes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_discard_body: Option<String>,
}

/// One `[[headers]]` rule.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileHeaders {
    pub glob: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
}

/// One `[[redirects]]` rule.
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
