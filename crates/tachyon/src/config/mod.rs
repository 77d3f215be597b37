//! Configuration in two stages (ripgrep's low/high args): [`File`] mirrors the
//! TOML exactly and rejects unknown keys; [`Settings`] merges it with the CLI
//! and holds only parsed values (`SocketAddr`, `Duration`, byte counts), which
//! are split into the option structs the library crates take.

mod units;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tachyon_http::encoding::Coding;
use tachyon_http::request::HeadLimits;
use tachyon_server::Limits;
use tachyon_snapshot::{Compression, HeaderRule, LoadOptions, RedirectRule};

use crate::cli::Args;
pub use units::{format_duration, format_size, parse_duration, parse_size};

/// The config file, as written. Every CLI option has a key here, and
/// `--print-config` writes this same shape back with every key filled in.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct File {
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

/// A virtual host, checked: its names, root and complete load options.
#[derive(Debug, Clone)]
pub struct VirtualHost {
    pub names: Vec<String>,
    pub root: PathBuf,
    pub load: LoadOptions,
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

/// The effective configuration: every value parsed and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub root: PathBuf,
    pub listen: Vec<SocketAddr>,
    pub threads: usize,
    pub load: LoadOptions,
    /// Virtual hosts; requests naming none of them get `root`.
    pub hosts: Vec<VirtualHost>,
    pub limits: Limits,
    /// Reload when files under the root change.
    pub watch: bool,
    pub quiet: bool,
    /// The rules as configured, for `--print-config`.
    cors: Option<String>,
    headers: Vec<FileHeaders>,
    redirects: Vec<FileRedirect>,
    file_hosts: Vec<FileHost>,
    /// No root was given and the current directory has no index file, so
    /// it is listed (like `python3 -m http.server`).
    pub listing_by_default: bool,
}

impl Settings {
    /// Defaults, then the config file, then the command line.
    pub fn from_args(args: &Args) -> anyhow::Result<Settings> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => File::default(),
        };
        Settings::from_parts(args, file)
    }

    /// Like [`Settings::from_args`] with the config file's text given
    /// (`name` is how errors refer to it).
    pub fn from_config_text(args: &Args, name: &str, text: &str) -> anyhow::Result<Settings> {
        let file = toml::from_str(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        Settings::from_parts(args, file)
    }

    fn from_parts(args: &Args, file: File) -> anyhow::Result<Settings> {
        let defaults_load = LoadOptions::default();
        let defaults_limits = Limits::default();
        let root_given = args.root.is_some() || file.root.is_some();
        let root = args
            .root
            .clone()
            .or(file.root.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let listen_raw = if !args.listen.is_empty() {
            args.listen.clone()
        } else {
            file.listen
                .clone()
                .unwrap_or_else(|| vec!["0.0.0.0:8080".to_string()])
        };
        let listen = listen_raw
            .iter()
            .map(|a| {
                a.parse::<SocketAddr>().with_context(|| {
                    format!("listen: {a:?} is not an address like 127.0.0.1:8080 or [::]:8080")
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if listen.is_empty() {
            bail!("listen: at least one address is needed");
        }
        let threads = args
            .threads
            .or(file.threads)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if threads == 0 || threads > 1024 {
            bail!("threads: {threads} is out of range (1 to 1024)");
        }
        let size = |cli: &Option<String>,
                    file: &Option<String>,
                    key: &str,
                    default: u64|
         -> anyhow::Result<u64> {
            match cli.as_ref().or(file.as_ref()) {
                Some(text) => parse_size(text).with_context(|| format!("{key}: {text:?}")),
                None => Ok(default),
            }
        };
        let duration = |cli: &Option<String>,
                        file: &Option<String>,
                        key: &str,
                        default: Duration|
         -> anyhow::Result<Duration> {
            match cli.as_ref().or(file.as_ref()) {
                Some(text) => {
                    parse_duration(text).with_context(|| format!("limits.{key}: {text:?}"))
                }
                None => Ok(default),
            }
        };
        let index_files = if !args.index.is_empty() {
            args.index.clone()
        } else {
            file.index_files
                .clone()
                .unwrap_or(defaults_load.index_files.clone())
        };
        let mut load = LoadOptions {
            max_memory: size(
                &args.max_memory,
                &file.max_memory,
                "max_memory",
                defaults_load.max_memory,
            )?,
            max_file_in_memory: size(
                &args.max_file_in_memory,
                &file.max_file_in_memory,
                "max_file_in_memory",
                defaults_load.max_file_in_memory,
            )?,
            index_files,
            serve_dotfiles: args.dotfiles || file.serve_dotfiles.unwrap_or(false),
            follow_outside_symlinks: args.follow_outside_symlinks
                || file.follow_outside_symlinks.unwrap_or(false),
            compression: compression(args, &file.compression)?,
            header_rules: Vec::new(),
            listing: args.listing || file.listing.unwrap_or(false),
            clean_urls: args.clean_urls || file.clean_urls.unwrap_or(false),
            fallback: site_path(
                args.fallback.as_ref().or(file.fallback.as_ref()),
                "fallback",
            )?,
            not_found_page: site_path(
                args.not_found_page
                    .as_ref()
                    .or(file.not_found_page.as_ref()),
                "not_found_page",
            )?,
            redirects: Vec::new(),
            settle: defaults_load.settle,
            sendfile: args.sendfile || file.sendfile.unwrap_or(false),
        };
        // `tachyon` alone, in a directory without an index page, lists it
        // rather than answering 404 at `/`; a root someone chose is listed
        // only when asked.
        let listing_by_default = !root_given
            && !args.listing
            && file.listing.is_none()
            && !load
                .index_files
                .iter()
                .any(|name| root.join(name).is_file());
        if listing_by_default {
            load.listing = true;
        }
        let cors = args.cors.clone().or(file.cors.clone());
        if let Some(origin) = &cors {
            let headers = [("Access-Control-Allow-Origin".to_string(), origin.clone())];
            load.header_rules.push(
                HeaderRule::new("**", None, &headers)
                    .with_context(|| format!("cors: {origin:?}"))?,
            );
        }
        for (i, rule) in file.headers.iter().enumerate() {
            let headers: Vec<(String, String)> = rule
                .set
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            load.header_rules.push(
                HeaderRule::new(&rule.glob, rule.cache_control.as_deref(), &headers)
                    .with_context(|| format!("headers[{i}] (glob {:?})", rule.glob))?,
            );
        }
        for (i, rule) in file.redirects.iter().enumerate() {
            load.redirects.push(
                RedirectRule::new(&rule.from, &rule.to, rule.status)
                    .with_context(|| format!("redirects[{i}] (from {:?})", rule.from))?,
            );
        }
        let mut hosts = Vec::new();
        for (i, host) in file.hosts.iter().enumerate() {
            let at = || format!("hosts[{i}]");
            if host.names.is_empty() {
                bail!("{}.names: a virtual host needs at least one name", at());
            }
            for name in &host.names {
                if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace() || b == b'/') {
                    bail!("{}.names: {name:?} is not a host name", at());
                }
            }
            let mut options = load.clone();
            options.listing = host.listing.unwrap_or(load.listing && !listing_by_default);
            if let Some(clean) = host.clean_urls {
                options.clean_urls = clean;
            }
            if host.fallback.is_some() {
                options.fallback =
                    site_path(host.fallback.as_ref(), &format!("{}.fallback", at()))?;
            }
            if host.not_found_page.is_some() {
                options.not_found_page = site_path(
                    host.not_found_page.as_ref(),
                    &format!("{}.not_found_page", at()),
                )?;
            }
            hosts.push(VirtualHost {
                names: host.names.clone(),
                root: host.root.clone(),
                load: options,
            });
        }
        let fl = &file.limits;
        let head = HeadLimits {
            max_head_bytes: size(
                &args.max_head_bytes,
                &fl.max_head_bytes,
                "limits.max_head_bytes",
                defaults_limits.head.max_head_bytes as u64,
            )? as usize,
            max_target_bytes: size(
                &None,
                &fl.max_target_bytes,
                "limits.max_target_bytes",
                defaults_limits.head.max_target_bytes as u64,
            )? as usize,
        };
        if head.max_head_bytes < 256 {
            bail!(
                "limits.max_head_bytes: {} is too small to hold a request (at least 256)",
                head.max_head_bytes
            );
        }
        let limits = Limits {
            head,
            header_timeout: duration(
                &args.header_timeout,
                &fl.header_timeout,
                "header_timeout",
                defaults_limits.header_timeout,
            )?,
            idle_timeout: duration(
                &args.idle_timeout,
                &fl.idle_timeout,
                "idle_timeout",
                defaults_limits.idle_timeout,
            )?,
            send_timeout: duration(
                &args.send_timeout,
                &fl.send_timeout,
                "send_timeout",
                defaults_limits.send_timeout,
            )?,
            drain_timeout: duration(
                &args.drain_timeout,
                &fl.drain_timeout,
                "drain_timeout",
                defaults_limits.drain_timeout,
            )?,
            max_connections: args
                .max_connections
                .or(fl.max_connections)
                .unwrap_or(defaults_limits.max_connections),
            max_discard_body: size(
                &None,
                &fl.max_discard_body,
                "limits.max_discard_body",
                defaults_limits.max_discard_body,
            )?,
            max_queued_output: defaults_limits.max_queued_output,
        };
        if limits.max_connections == 0 {
            bail!("limits.max_connections: must be at least 1");
        }
        Ok(Settings {
            root,
            listen,
            threads,
            load,
            hosts,
            limits,
            watch: !args.no_watch && file.watch.unwrap_or(true),
            quiet: args.quiet || file.quiet.unwrap_or(false),
            cors,
            headers: file.headers.clone(),
            redirects: file.redirects.clone(),
            file_hosts: file.hosts.clone(),
            listing_by_default,
        })
    }

    /// The effective configuration, in the config file's own format, with
    /// every key present.
    pub fn to_toml(&self) -> String {
        let l = &self.limits;
        let file = File {
            root: Some(self.root.clone()),
            listen: Some(self.listen.iter().map(ToString::to_string).collect()),
            threads: Some(self.threads),
            max_memory: Some(format_size(self.load.max_memory)),
            max_file_in_memory: Some(format_size(self.load.max_file_in_memory)),
            index_files: Some(self.load.index_files.clone()),
            serve_dotfiles: Some(self.load.serve_dotfiles),
            follow_outside_symlinks: Some(self.load.follow_outside_symlinks),
            sendfile: Some(self.load.sendfile),
            listing: Some(self.load.listing),
            clean_urls: Some(self.load.clean_urls),
            fallback: self.load.fallback.clone(),
            not_found_page: self.load.not_found_page.clone(),
            cors: self.cors.clone(),
            watch: Some(self.watch),
            quiet: Some(self.quiet),
            compression: FileCompression {
                codings: Some(
                    self.load
                        .compression
                        .codings
                        .iter()
                        .map(|c| c.token().to_string())
                        .collect(),
                ),
                min_size: Some(format_size(self.load.compression.min_size)),
            },
            limits: FileLimits {
                header_timeout: Some(format_duration(l.header_timeout)),
                idle_timeout: Some(format_duration(l.idle_timeout)),
                send_timeout: Some(format_duration(l.send_timeout)),
                drain_timeout: Some(format_duration(l.drain_timeout)),
                max_connections: Some(l.max_connections),
                max_head_bytes: Some(format_size(l.head.max_head_bytes as u64)),
                max_target_bytes: Some(format_size(l.head.max_target_bytes as u64)),
                max_discard_body: Some(format_size(l.max_discard_body)),
            },
            headers: self.headers.clone(),
            redirects: self.redirects.clone(),
            hosts: self.file_hosts.clone(),
        };
        toml::to_string(&file)
            .unwrap_or_else(|e| format!("# cannot print the configuration: {e}\n"))
    }
}

/// The `[compression]` table and `--no-compress`.
fn compression(args: &Args, file: &FileCompression) -> anyhow::Result<Compression> {
    let defaults = Compression::default();
    let codings = match (&file.codings, args.no_compress) {
        (_, true) => Vec::new(),
        (None, false) => defaults.codings,
        (Some(names), false) => names
            .iter()
            .map(|name| {
                Coding::from_token(name.as_bytes()).with_context(|| {
                    format!(
                        "compression.codings: {name:?} is not one of \"br\", \"zstd\", \"gzip\""
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    let min_size = match &file.min_size {
        Some(text) => {
            parse_size(text).with_context(|| format!("compression.min_size: {text:?}"))?
        }
        None => defaults.min_size,
    };
    Ok(Compression { codings, min_size })
}

/// A site path option (`/index.html`): must start with `/`.
fn site_path(value: Option<&String>, key: &str) -> anyhow::Result<Option<String>> {
    match value {
        None => Ok(None),
        Some(p) if p.starts_with('/') => Ok(Some(p.clone())),
        Some(p) => bail!("{key}: {p:?} must be a site path starting with /"),
    }
}

fn read_file(path: &Path) -> anyhow::Result<File> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config {}", path.display()))?;
    // toml's error names the line, column and the unknown or mistyped key.
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
