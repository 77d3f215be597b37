//! Configuration in two stages (ripgrep's low/high args): [`File`] mirrors the
//! TOML exactly and rejects unknown keys; [`Settings`] merges it with the CLI
//! and holds only parsed values (`SocketAddr`, `Duration`, byte counts), which
//! are split into the option structs the library crates take.

mod units;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::Deserialize;
use tachyon_http::request::HeadLimits;
use tachyon_server::Limits;
use tachyon_snapshot::LoadOptions;

use crate::cli::Args;
pub use units::{parse_duration, parse_size};

/// The config file, as written. Every CLI option has a key here.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub root: Option<PathBuf>,
    pub listen: Option<Vec<String>>,
    pub threads: Option<usize>,
    pub max_memory: Option<String>,
    pub max_file_in_memory: Option<String>,
    pub index_files: Option<Vec<String>>,
    pub serve_dotfiles: Option<bool>,
    pub follow_outside_symlinks: Option<bool>,
    pub quiet: Option<bool>,
    #[serde(default)]
    pub limits: FileLimits,
}

/// The `[limits]` table.
#[derive(Debug, Default, Deserialize)]
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
}

/// The effective configuration: every value parsed and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub root: PathBuf,
    pub listen: Vec<SocketAddr>,
    pub threads: usize,
    pub load: LoadOptions,
    pub limits: Limits,
    pub quiet: bool,
}

impl Settings {
    /// Defaults, then the config file, then the command line.
    pub fn from_args(args: &Args) -> anyhow::Result<Settings> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => File::default(),
        };
        let defaults_load = LoadOptions::default();
        let defaults_limits = Limits::default();
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
        let load = LoadOptions {
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
        };
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
        };
        if limits.max_connections == 0 {
            bail!("limits.max_connections: must be at least 1");
        }
        Ok(Settings {
            root,
            listen,
            threads,
            load,
            limits,
            quiet: args.quiet || file.quiet.unwrap_or(false),
        })
    }

    /// The effective configuration, in the config file's own format.
    pub fn to_toml(&self) -> String {
        let quote_list = |items: &[String]| {
            items
                .iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let listen: Vec<String> = self.listen.iter().map(ToString::to_string).collect();
        let l = &self.limits;
        format!(
            "root = {root:?}\nlisten = [{listen}]\nthreads = {threads}\nmax_memory = \"{mm}\"\nmax_file_in_memory = \"{mf}\"\n\
             index_files = [{index}]\nserve_dotfiles = {dot}\nfollow_outside_symlinks = {sym}\nquiet = {quiet}\n\n[limits]\n\
             header_timeout = \"{ht}s\"\nidle_timeout = \"{it}s\"\nsend_timeout = \"{st}s\"\ndrain_timeout = \"{dt}s\"\n\
             max_connections = {mc}\nmax_head_bytes = \"{mh}\"\nmax_target_bytes = \"{mt}\"\nmax_discard_body = \"{md}\"\n",
            root = self.root.display().to_string(),
            listen = quote_list(&listen),
            threads = self.threads,
            mm = self.load.max_memory,
            mf = self.load.max_file_in_memory,
            index = quote_list(&self.load.index_files),
            dot = self.load.serve_dotfiles,
            sym = self.load.follow_outside_symlinks,
            quiet = self.quiet,
            ht = l.header_timeout.as_secs_f64(),
            it = l.idle_timeout.as_secs_f64(),
            st = l.send_timeout.as_secs_f64(),
            dt = l.drain_timeout.as_secs_f64(),
            mc = l.max_connections,
            mh = l.head.max_head_bytes,
            mt = l.head.max_target_bytes,
            md = l.max_discard_body,
        )
    }
}

fn read_file(path: &Path) -> anyhow::Result<File> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config {}", path.display()))?;
    // toml's error names the line, column and the unknown or mistyped key.
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
