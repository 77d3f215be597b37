//! Configuration in two stages (ripgrep's low/high args): `ConfigFile` mirrors the
//! TOML exactly and rejects unknown keys; [`Settings`] merges it with the CLI
//! and holds only parsed values (`SocketAddr`, `Duration`, byte counts), which
//! are split into the option structs the library crates take.

mod file;
mod merge;
mod units;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tachyon_server::access::{Format, Target};
use tachyon_server::Limits;
use tachyon_snapshot::LoadOptions;

use crate::cli::Args;
use file::{
    ConfigFile, FileAcme, FileCompression, FileDictionaries, FileHeaders, FileHost, FileLimits,
    FileLog, FileRedirect, FileTls,
};
pub use merge::{DEFAULT_HTTPS, DEFAULT_LISTEN};
pub use units::{format_duration, format_size, parse_duration, parse_size};

/// A virtual host, checked: its names, root, complete load options and
/// its own certificate, if it has one.
#[derive(Debug, Clone)]
pub struct VirtualHost {
    pub names: Vec<String>,
    pub root: PathBuf,
    pub load: LoadOptions,
    pub tls: Option<KeyFiles>,
}

/// A certificate chain and its private key, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Where the certificate for names no virtual host claims comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    Files(KeyFiles),
    /// Made at start for localhost (`--tls-self-signed`).
    SelfSigned,
    /// None: only the virtual hosts' names get a handshake.
    VirtualHostsOnly,
    /// Ordered from an ACME CA (`--acme`) and kept in these files, which
    /// do not exist until the first order succeeds.
    Acme(KeyFiles),
}

/// How the CA validates that the names are ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Challenge {
    /// TLS-ALPN-01 (RFC 8737): inside a TLS handshake on port 443.
    TlsAlpn01,
    /// HTTP-01 (RFC 8555 §8.3): a token on a plain listener on port 80.
    Http01,
}

impl Challenge {
    pub fn name(self) -> &'static str {
        match self {
            Challenge::TlsAlpn01 => "tls-alpn-01",
            Challenge::Http01 => "http-01",
        }
    }
}

/// Automatic certificates, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeSettings {
    /// Every name of the one certificate ordered, lowercase.
    pub domains: Vec<String>,
    pub email: Option<String>,
    pub directory: String,
    pub ca_root: Option<PathBuf>,
    pub dir: PathBuf,
    pub challenge: Challenge,
}

impl AcmeSettings {
    /// The folder of the certificate for these names (named by the first).
    pub fn certificate_dir(&self) -> PathBuf {
        self.dir.join(&self.domains[0])
    }

    /// The certificate file: its chain, then its key, in one file that one
    /// rename replaces (a reload never pairs a new key with an old chain).
    pub fn files(&self) -> KeyFiles {
        let file = self.certificate_dir().join("certificate.pem");
        KeyFiles {
            cert: file.clone(),
            key: file,
        }
    }
}

/// HTTPS, checked.
#[derive(Debug, Clone)]
pub struct TlsSettings {
    pub listen: Vec<SocketAddr>,
    pub identity: Identity,
    /// Plain listeners answer with a 308 to the HTTPS URL.
    pub redirect_https: bool,
    /// `Strict-Transport-Security: max-age`, when sent.
    pub hsts: Option<Duration>,
}

/// Logging, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// Where access log lines go; `None`: no access log.
    pub access: Option<Target>,
    pub format: Format,
    /// The server's own messages as JSON lines.
    pub json: bool,
}

/// The effective configuration: every value parsed and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub root: PathBuf,
    pub listen: Vec<SocketAddr>,
    pub threads: usize,
    /// Connections placed by CPU, worker n kept on CPU n while they follow
    /// theirs, when the workers are one per CPU
    /// (`tachyon_server::ListenOptions::by_cpu`).
    pub cpu_affinity: bool,
    /// The congestion control of loopback listeners; `None`: the system's.
    pub loopback_congestion: Option<String>,
    pub load: LoadOptions,
    /// Virtual hosts; requests naming none of them get `root`.
    pub hosts: Vec<VirtualHost>,
    pub limits: Limits,
    /// HTTPS, when a certificate is configured.
    pub tls: Option<TlsSettings>,
    /// Certificates ordered from an ACME CA (`--acme`).
    pub acme: Option<AcmeSettings>,
    pub log: LogSettings,
    /// The admin listener's address, when on.
    pub admin: Option<SocketAddr>,
    /// The user to switch to once the listeners are bound.
    pub user: Option<String>,
    /// Confine the process with Landlock once configured.
    pub sandbox: bool,
    /// The config file read at start (a successor started by a binary
    /// upgrade reads it again, so the sandbox lets it be read).
    pub config_file: Option<PathBuf>,
    /// Where built variants are kept across restarts, and how much.
    pub cache_dir: Option<PathBuf>,
    pub cache_max_size: u64,
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
    /// These settings with every root's variants deferred: a build takes
    /// the variants already known (in memory or in the cache folder) and
    /// leaves the rest pending, for the background build.
    pub fn deferring_variants(&self) -> Settings {
        let mut deferred = self.clone();
        deferred.load.compression.deferred = true;
        for host in &mut deferred.hosts {
            host.load.compression.deferred = true;
        }
        deferred
    }

    /// Defaults, then the config file, then the command line.
    pub fn from_args(args: &Args) -> anyhow::Result<Settings> {
        let file = match &args.config {
            Some(path) => file::read_file(path)?,
            None => ConfigFile::default(),
        };
        Settings::from_parts(args, file)
    }

    /// Like [`Settings::from_args`] with the config file's text given
    /// (`name` is how errors refer to it).
    pub fn from_config_text(args: &Args, name: &str, text: &str) -> anyhow::Result<Settings> {
        let file = toml::from_str(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        Settings::from_parts(args, file)
    }

    /// Merges each concern: the command line over the file over the default.
    fn from_parts(args: &Args, file: ConfigFile) -> anyhow::Result<Settings> {
        let root_given = args.root.is_some() || file.root.is_some();
        let root = args
            .root
            .clone()
            .or(file.root.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let mut load = merge::load_options(args, &file)?;
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
        load.listing |= listing_by_default;
        let cors = args.cors.clone().or(file.cors.clone());
        load.header_rules = merge::header_rules(cors.as_deref(), &file.headers)?;
        load.redirects = merge::redirects(&file.redirects)?;
        let hosts = merge::virtual_hosts(&file.hosts, &load, listing_by_default)?;
        let (cache_dir, cache_max_size) = merge::cache(args, &file)?;
        let acme = merge::acme(args, &file.acme, &hosts)?;
        Ok(Settings {
            listen: merge::listen(args, &file)?,
            threads: merge::threads(args, &file)?,
            cpu_affinity: !args.no_cpu_affinity && file.cpu_affinity.unwrap_or(true),
            loopback_congestion: merge::loopback_congestion(args, &file)?,
            tls: merge::tls(args, &file.tls, &hosts, acme.as_ref())?,
            acme,
            log: merge::log(args, &file.log)?,
            admin: merge::admin(args, &file)?,
            user: args.user.clone().or(file.user.clone()),
            sandbox: !args.no_sandbox && file.sandbox.unwrap_or(true),
            cache_dir,
            cache_max_size,
            config_file: args.config.clone(),
            hosts,
            limits: merge::limits(args, &file)?,
            root,
            load,
            watch: !args.no_watch && file.watch.unwrap_or(true),
            quiet: args.quiet || file.quiet.unwrap_or(false),
            cors,
            headers: file.headers,
            redirects: file.redirects,
            file_hosts: file.hosts,
            listing_by_default,
        })
    }

    /// The effective configuration, in the config file's own format, with
    /// every key present.
    pub fn to_toml(&self) -> String {
        let load = &self.load;
        let file = ConfigFile {
            root: Some(self.root.clone()),
            listen: Some(self.listen.iter().map(ToString::to_string).collect()),
            threads: Some(self.threads),
            cpu_affinity: Some(self.cpu_affinity),
            max_memory: Some(format_size(load.max_memory)),
            max_file_in_memory: Some(format_size(load.max_file_in_memory)),
            index_files: Some(load.index_files.clone()),
            serve_dotfiles: Some(load.serve_dotfiles),
            symlinks: Some(load.symlinks.name().to_string()),
            follow_outside_symlinks: None,
            sendfile: Some(load.sendfile),
            http2: Some(self.limits.h2.is_some()),
            http3: Some(self.limits.h3.is_some()),
            loopback_congestion: Some(
                self.loopback_congestion
                    .clone()
                    .unwrap_or_else(|| "system".to_string()),
            ),
            listing: Some(load.listing),
            clean_urls: Some(load.clean_urls),
            fallback: load.fallback.clone(),
            not_found_page: load.not_found_page.clone(),
            cors: self.cors.clone(),
            watch: Some(self.watch),
            cache_dir: Some(
                self.cache_dir
                    .as_ref()
                    .map_or("off".to_string(), |d| d.display().to_string()),
            ),
            cache_max_size: Some(format_size(self.cache_max_size)),
            quiet: Some(self.quiet),
            admin: self.admin.map(|a| a.to_string()),
            user: self.user.clone(),
            sandbox: Some(self.sandbox),
            log: log_section(&self.log),
            compression: compression_section(load),
            dictionaries: FileDictionaries {
                enabled: Some(load.dictionaries.enabled),
                keep_versions: Some(load.dictionaries.keep_versions),
                keep_size: Some(format_size(load.dictionaries.keep_bytes)),
            },
            limits: limits_section(&self.limits),
            tls: self.tls.as_ref().map_or_else(FileTls::default, tls_section),
            acme: self
                .acme
                .as_ref()
                .map_or_else(FileAcme::default, acme_section),
            headers: self.headers.clone(),
            redirects: self.redirects.clone(),
            hosts: self.file_hosts.clone(),
        };
        toml::to_string(&file)
            .unwrap_or_else(|e| format!("# cannot print the configuration: {e}\n"))
    }
}

/// `[log]` as [`Settings::to_toml`] prints it.
fn log_section(log: &LogSettings) -> FileLog {
    let format = match log.format {
        Format::Combined => "combined",
        Format::Json => "json",
    };
    FileLog {
        access: log.access.as_ref().map(|t| match t {
            Target::Stdout => "-".to_string(),
            Target::File(path) => path.display().to_string(),
        }),
        format: Some(format.to_string()),
        json: Some(log.json),
    }
}

/// `[compression]` as [`Settings::to_toml`] prints it.
fn compression_section(load: &LoadOptions) -> FileCompression {
    let compression = &load.compression;
    FileCompression {
        codings: Some(
            compression
                .codings
                .iter()
                .map(|c| c.token().to_string())
                .collect(),
        ),
        min_size: Some(format_size(compression.min_size)),
    }
}

/// `[limits]` as [`Settings::to_toml`] prints it.
fn limits_section(l: &Limits) -> FileLimits {
    FileLimits {
        header_timeout: Some(format_duration(l.header_timeout)),
        idle_timeout: Some(format_duration(l.idle_timeout)),
        send_timeout: Some(format_duration(l.send_timeout)),
        drain_timeout: Some(format_duration(l.drain_timeout)),
        max_connections: Some(l.max_connections),
        max_head_bytes: Some(format_size(l.head.max_head_bytes as u64)),
        max_target_bytes: Some(format_size(l.head.max_target_bytes as u64)),
        max_discard_body: Some(format_size(l.max_discard_body)),
        quic_retry_above: l.h3.as_ref().map(|h3| h3.retry_above),
    }
}

/// `[tls]` as [`Settings::to_toml`] prints it: the certificate files only
/// when they are given ones, not ACME's.
fn tls_section(tls: &TlsSettings) -> FileTls {
    let files = match &tls.identity {
        Identity::Files(files) => Some(files),
        _ => None,
    };
    FileTls {
        listen: Some(tls.listen.iter().map(ToString::to_string).collect()),
        cert: files.map(|f| f.cert.clone()),
        key: files.map(|f| f.key.clone()),
        self_signed: Some(tls.identity == Identity::SelfSigned),
        redirect_https: Some(tls.redirect_https),
        hsts: tls.hsts.map(format_duration),
    }
}

/// `[acme]` as [`Settings::to_toml`] prints it; `staging` is folded into
/// the directory it chose.
fn acme_section(acme: &AcmeSettings) -> FileAcme {
    FileAcme {
        enabled: Some(true),
        domains: Some(acme.domains.clone()),
        email: acme.email.clone(),
        directory: Some(acme.directory.clone()),
        staging: None,
        ca_root: acme.ca_root.clone(),
        dir: Some(acme.dir.clone()),
        challenge: Some(acme.challenge.name().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::{CommandFactory, Parser};

    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("tachyon").chain(list.iter().copied())).unwrap()
    }

    fn settings(cli: &[&str], toml: &str) -> Settings {
        Settings::from_config_text(&args(cli), "test.toml", toml).unwrap()
    }

    #[test]
    fn the_command_line_beats_the_file_which_beats_the_default() {
        let defaults = settings(&["/srv"], "");
        assert_eq!(defaults.load.max_memory, 512 << 20);
        assert_eq!(defaults.limits.header_timeout, Duration::from_secs(10));
        assert_eq!(defaults.listen, vec![DEFAULT_LISTEN.parse().unwrap()]);

        let file = "max_memory = \"1MiB\"\nlisten = [\"127.0.0.1:1\"]\n\
                    [limits]\nheader_timeout = \"3s\"\n";
        let from_file = settings(&["/srv"], file);
        assert_eq!(from_file.load.max_memory, 1 << 20);
        assert_eq!(from_file.limits.header_timeout, Duration::from_secs(3));
        assert_eq!(from_file.listen, vec!["127.0.0.1:1".parse().unwrap()]);

        let cli = [
            "/srv",
            "--max-memory",
            "2MiB",
            "--header-timeout",
            "4s",
            "-l",
            "127.0.0.1:2",
        ];
        let from_cli = settings(&cli, file);
        assert_eq!(from_cli.load.max_memory, 2 << 20);
        assert_eq!(from_cli.limits.header_timeout, Duration::from_secs(4));
        assert_eq!(from_cli.listen, vec!["127.0.0.1:2".parse().unwrap()]);
    }

    #[test]
    fn errors_name_the_key_as_the_file_spells_it() {
        let error = |cli: &[&str], toml: &str| {
            format!(
                "{:#}",
                Settings::from_config_text(&args(cli), "t.toml", toml).unwrap_err()
            )
        };
        assert!(error(&["--max-memory", "lots"], "").starts_with("max_memory: \"lots\""));
        assert!(error(&["--idle-timeout", "soon"], "").starts_with("limits.idle_timeout:"));
        assert!(error(&[], "[limits]\nmax_head_bytes = \"1\"")
            .starts_with("limits.max_head_bytes: 1 is too small"));
        assert!(error(&[], "[[hosts]]\nnames = []\nroot = \"/x\"").starts_with("hosts[0].names:"));
        assert!(error(&[], "[compression]\ncodings = [\"lzma\"]")
            .starts_with("compression.codings: \"lzma\""));
        assert!(
            error(&[], "[[headers]]\nglob = \"*.js\"\ndictionary = true")
                .starts_with("headers[0] (glob \"*.js\"): dictionary = true")
        );
        assert!(error(
            &[],
            "[[headers]]\nglob = \"*.js\"\ndictionary = \"app.*.js\""
        )
        .contains("dictionary match \"app.*.js\""));
        assert!(error(&[], "[dictionaries]\nkeep_size = \"lots\"")
            .starts_with("dictionaries.keep_size"));
    }

    #[test]
    fn dictionaries_are_on_by_default_and_turned_off_by_the_flag_or_the_table() {
        let on = Settings::from_config_text(&args(&[]), "t.toml", "").unwrap();
        assert!(on.load.dictionaries.enabled);
        assert_eq!(on.load.dictionaries.keep_versions, 3);
        let flag = Settings::from_config_text(&args(&["--no-dictionaries"]), "t.toml", "").unwrap();
        assert!(!flag.load.dictionaries.enabled);
        let table = "[dictionaries]\nenabled = false\nkeep_versions = 5\nkeep_size = \"8MiB\"";
        let file = Settings::from_config_text(&args(&[]), "t.toml", table).unwrap();
        assert!(!file.load.dictionaries.enabled);
        assert_eq!(file.load.dictionaries.keep_versions, 5);
        assert_eq!(file.load.dictionaries.keep_bytes, 8 << 20);
        let rules = "[[headers]]\nglob = \"legacy/*.js\"\ndictionary = false\n\n\
                     [[headers]]\nglob = \"js/*.js\"\ndictionary = \"/js/app.*.js\"";
        let ruled = Settings::from_config_text(&args(&[]), "t.toml", rules).unwrap();
        assert_eq!(ruled.load.header_rules.len(), 2);
    }

    /// The `[default: …]` in each option's help, as `--help` shows it.
    fn help_default(long: &str) -> String {
        let command = Args::command();
        let arg = command
            .get_arguments()
            .find(|a| a.get_long() == Some(long))
            .unwrap_or_else(|| panic!("no --{long}"));
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        let start = help
            .find("[default: ")
            .unwrap_or_else(|| panic!("--{long} help names no default: {help}"));
        help[start + 10..help.len() - 1].to_string()
    }

    #[test]
    fn the_help_text_states_the_real_defaults() {
        let load = LoadOptions::default();
        let limits = Limits::default();
        let cases = [
            ("listen", DEFAULT_LISTEN.to_string()),
            ("max-memory", format_size(load.max_memory)),
            ("max-file-in-memory", format_size(load.max_file_in_memory)),
            ("index", load.index_files.join(", ")),
            ("header-timeout", format_duration(limits.header_timeout)),
            ("idle-timeout", format_duration(limits.idle_timeout)),
            ("send-timeout", format_duration(limits.send_timeout)),
            ("drain-timeout", format_duration(limits.drain_timeout)),
            ("max-connections", limits.max_connections.to_string()),
            (
                "quic-retry-above",
                tachyon_server::H3Limits::default().retry_above.to_string(),
            ),
            (
                "max-head-bytes",
                format_size(limits.head.max_head_bytes as u64),
            ),
        ];
        for (long, expected) in cases {
            assert_eq!(help_default(long), expected, "--{long}");
        }
    }

    #[test]
    fn the_example_file_states_the_real_defaults() {
        let example = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tachyon.example.toml"
        ));
        let documented = settings(&[], example);
        let defaults = settings(&["."], "");
        assert_eq!(documented.listen, defaults.listen);
        let (d, e) = (&defaults.load, &documented.load);
        assert_eq!(e.max_memory, d.max_memory);
        assert_eq!(e.max_file_in_memory, d.max_file_in_memory);
        assert_eq!(e.index_files, d.index_files);
        assert_eq!(e.sendfile, d.sendfile);
        assert_eq!(e.compression.codings, d.compression.codings);
        assert_eq!(e.compression.min_size, d.compression.min_size);
        let (d, e) = (&defaults.limits, &documented.limits);
        assert_eq!(e.header_timeout, d.header_timeout);
        assert_eq!(e.idle_timeout, d.idle_timeout);
        assert_eq!(e.send_timeout, d.send_timeout);
        assert_eq!(e.drain_timeout, d.drain_timeout);
        assert_eq!(e.max_connections, d.max_connections);
        assert_eq!(e.head.max_head_bytes, d.head.max_head_bytes);
        assert_eq!(e.head.max_target_bytes, d.head.max_target_bytes);
        assert_eq!(e.max_discard_body, d.max_discard_body);
        let retry = |l: &Limits| l.h3.as_ref().map(|h3| h3.retry_above);
        assert_eq!(retry(e), retry(d));
    }
}
