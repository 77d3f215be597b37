//! Each concern of the configuration merged from its sources: the command
//! line over the config file over the default, parsed once. The defaults
//! are the library crates' own (`LoadOptions::default`, `Limits::default`);
//! the CLI help and the example file are checked against them in tests.
//!
//! Errors name the key as the config file spells it (`max_memory`,
//! `limits.header_timeout`, `hosts[0].names`), whichever source the bad
//! value came from.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use tachyon_http::encoding::Coding;
use tachyon_http::request::HeadLimits;
use tachyon_server::Limits;
use tachyon_snapshot::{
    Compression, DictionaryPolicy, DictionaryRule, HeaderRule, LoadOptions, RedirectRule, Symlinks,
};

use super::file::{
    ConfigFile, FileAcme, FileCompression, FileDictionaries, FileDictionary, FileHeaders, FileHost,
    FileLimits, FileLog, FileRedirect, FileTls,
};
use super::units::{parse_duration, parse_size};
use super::{AcmeSettings, Challenge, Identity, KeyFiles, TlsSettings};
use super::{LogSettings, VirtualHost};
use crate::cli::Args;

/// The address used when neither the command line nor the file gives one.
pub const DEFAULT_LISTEN: &str = "0.0.0.0:8080";

/// Where HTTPS listens when a certificate is given and no address.
pub const DEFAULT_HTTPS: &str = "0.0.0.0:8443";

/// Where HTTPS listens with `--acme` and no address: a CA validates
/// TLS-ALPN-01 on port 443, and the names are the public site's.
pub const DEFAULT_ACME_HTTPS: &str = "0.0.0.0:443";

/// Let's Encrypt's production and staging directories.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";
pub const LETS_ENCRYPT_STAGING: &str = "https://acme-staging-v02.api.letsencrypt.org/directory";

/// A value from the command line or the file, parsed, else `default`.
fn pick<T>(
    cli: Option<&String>,
    file: Option<&String>,
    key: &str,
    default: T,
    parse: impl Fn(&str) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    match cli.or(file) {
        Some(text) => parse(text).with_context(|| format!("{key}: {text:?}")),
        None => Ok(default),
    }
}

fn size(
    cli: Option<&String>,
    file: Option<&String>,
    key: &str,
    default: u64,
) -> anyhow::Result<u64> {
    pick(cli, file, key, default, parse_size)
}

fn duration(
    cli: Option<&String>,
    file: Option<&String>,
    key: &str,
    default: Duration,
) -> anyhow::Result<Duration> {
    pick(cli, file, key, default, parse_duration)
}

/// The variants' cache folder: as configured ("off": none), else systemd's
/// `CacheDirectory=`, else the XDG cache folder; with its size bound.
pub(super) fn cache(args: &Args, file: &ConfigFile) -> anyhow::Result<(Option<PathBuf>, u64)> {
    let max = size(
        args.cache_max_size.as_ref(),
        file.cache_max_size.as_ref(),
        "cache_max_size",
        1 << 30,
    )?;
    let dir = match args.cache_dir.as_ref().or(file.cache_dir.as_ref()) {
        Some(off) if off == "off" => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => default_cache_dir(),
    };
    Ok((dir, max))
}

fn default_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dirs) = var("CACHE_DIRECTORY") {
        // systemd lists one folder per CacheDirectory= entry, ':'-separated.
        let first = dirs.to_string_lossy().split(':').next()?.to_string();
        return Some(PathBuf::from(first));
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(xdg).join("tachyon"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".cache").join("tachyon"))
}

pub(super) fn listen(args: &Args, file: &ConfigFile) -> anyhow::Result<Vec<SocketAddr>> {
    addresses(&args.listen, file.listen.as_ref(), DEFAULT_LISTEN, "listen")
}

/// Addresses from the command line, else the file, else `default`.
fn addresses(
    cli: &[String],
    file: Option<&Vec<String>>,
    default: &str,
    key: &str,
) -> anyhow::Result<Vec<SocketAddr>> {
    let raw = match (cli, file) {
        ([], Some(listed)) => listed.clone(),
        ([], None) => vec![default.to_string()],
        (given, _) => given.to_vec(),
    };
    if raw.is_empty() {
        bail!("{key}: at least one address is needed");
    }
    raw.iter()
        .map(|a| {
            a.parse::<SocketAddr>().with_context(|| {
                format!("{key}: {a:?} is not an address like 127.0.0.1:8080 or [::]:8080")
            })
        })
        .collect()
}

/// HTTPS, when a certificate is configured (for the default site, made up
/// with `self_signed`, or for a virtual host); `None` otherwise, and then
/// the options that only make sense with HTTPS are errors.
pub(super) fn tls(
    args: &Args,
    file: &FileTls,
    hosts: &[VirtualHost],
    acme: Option<&AcmeSettings>,
) -> anyhow::Result<Option<TlsSettings>> {
    let cert = args.tls_cert.clone().or(file.cert.clone());
    let key = args.tls_key.clone().or(file.key.clone());
    let self_signed = args.tls_self_signed || file.self_signed.unwrap_or(false);
    if let Some(acme) = acme {
        if cert.is_some() || self_signed {
            bail!("acme: the certificate is ordered, so tls.cert, tls.key and tls.self_signed must be left out");
        }
        return Ok(Some(TlsSettings {
            listen: addresses(
                &args.https,
                file.listen.as_ref(),
                DEFAULT_ACME_HTTPS,
                "tls.listen",
            )?,
            identity: Identity::Acme(acme.files()),
            redirect_https: args.redirect_https || file.redirect_https.unwrap_or(false),
            hsts: pick(
                args.hsts.as_ref(),
                file.hsts.as_ref(),
                "tls.hsts",
                None,
                |text| parse_duration(text).map(Some),
            )?,
        }));
    }
    let identity = match (cert, key, self_signed) {
        (Some(_), Some(_), true) => {
            bail!("tls.self_signed: cannot be combined with a certificate (tls.cert)")
        }
        (Some(cert), Some(key), false) => Identity::Files(KeyFiles { cert, key }),
        (Some(_), None, _) => bail!("tls.key: the certificate (tls.cert) needs its key"),
        (None, Some(_), _) => bail!("tls.cert: the key (tls.key) needs its certificate"),
        (None, None, true) => Identity::SelfSigned,
        (None, None, false) => Identity::VirtualHostsOnly,
    };
    let redirect_https = args.redirect_https || file.redirect_https.unwrap_or(false);
    let hsts = pick(
        args.hsts.as_ref(),
        file.hsts.as_ref(),
        "tls.hsts",
        None,
        |text| parse_duration(text).map(Some),
    )?;
    let listen = addresses(
        &args.https,
        file.listen.as_ref(),
        DEFAULT_HTTPS,
        "tls.listen",
    )?;
    if matches!(identity, Identity::VirtualHostsOnly) && !hosts.iter().any(|h| h.tls.is_some()) {
        let needs = "needs a certificate (tls.cert and tls.key, or tls.self_signed)";
        if redirect_https {
            bail!("tls.redirect_https: redirecting to HTTPS {needs}");
        }
        if hsts.is_some() {
            bail!("tls.hsts: Strict-Transport-Security {needs}");
        }
        if !args.https.is_empty() || file.listen.is_some() {
            bail!("tls.listen: serving HTTPS {needs}");
        }
        return Ok(None);
    }
    Ok(Some(TlsSettings {
        listen,
        identity,
        redirect_https,
        hsts,
    }))
}

/// Automatic certificates, when `--acme` (or `acme.enabled`) asks for
/// them; the other `acme` options without it are errors.
pub(super) fn acme(
    args: &Args,
    file: &FileAcme,
    hosts: &[VirtualHost],
) -> anyhow::Result<Option<AcmeSettings>> {
    let on = args.acme || file.enabled.unwrap_or(false);
    if !on {
        let given = !args.domains.is_empty()
            || args.acme_email.is_some()
            || args.acme_directory.is_some()
            || args.acme_staging
            || args.acme_ca_root.is_some()
            || args.acme_dir.is_some()
            || args.acme_challenge.is_some();
        if given {
            bail!("acme: --domain and the other --acme-* options need --acme");
        }
        return Ok(None);
    }
    let domains = acme_domains(args, file, hosts)?;
    let staging = args.acme_staging || file.staging.unwrap_or(false);
    let directory = match (
        args.acme_directory.clone().or(file.directory.clone()),
        staging,
    ) {
        (Some(_), true) => bail!("acme.directory: cannot be combined with acme.staging"),
        (Some(url), false) if !url.starts_with("https://") => {
            bail!("acme.directory: {url:?} is not an https:// URL")
        }
        (Some(url), false) => url,
        (None, true) => LETS_ENCRYPT_STAGING.to_string(),
        (None, false) => LETS_ENCRYPT.to_string(),
    };
    let challenge = match args.acme_challenge.as_deref().or(file.challenge.as_deref()) {
        None | Some("tls-alpn-01") => Challenge::TlsAlpn01,
        Some("http-01") => Challenge::Http01,
        Some(other) => {
            bail!("acme.challenge: {other:?}: the challenges are tls-alpn-01 and http-01")
        }
    };
    let email = args.acme_email.clone().or(file.email.clone());
    if let Some(email) = &email {
        if !email.contains('@') || email.contains(char::is_whitespace) {
            bail!("acme.email: {email:?} is not an email address");
        }
    }
    let dir = match args.acme_dir.clone().or(file.dir.clone()) {
        Some(dir) => dir,
        None => default_acme_dir()?,
    };
    Ok(Some(AcmeSettings {
        domains,
        email,
        directory,
        ca_root: args.acme_ca_root.clone().or(file.ca_root.clone()),
        dir,
        challenge,
    }))
}

/// The names to order for: given, else every virtual host's; lowercase,
/// each a DNS name a CA can validate over TLS-ALPN-01 or HTTP-01.
fn acme_domains(
    args: &Args,
    file: &FileAcme,
    hosts: &[VirtualHost],
) -> anyhow::Result<Vec<String>> {
    let given = match (&args.domains[..], &file.domains) {
        ([], Some(listed)) => listed.clone(),
        ([], None) => hosts.iter().flat_map(|h| h.names.clone()).collect(),
        (given, _) => given.to_vec(),
    };
    let mut domains: Vec<String> = Vec::new();
    for name in given {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if name.starts_with("*.") {
            bail!("acme.domains: {name}: a wildcard needs the DNS-01 challenge, which tachyon does not answer");
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let dotted = name.contains('.') || name == "localhost";
        if name.len() > 253 || !dotted || !name.split('.').all(label_ok) {
            bail!("acme.domains: {name:?} is not a DNS name a CA can issue for");
        }
        if !domains.contains(&name) {
            domains.push(name);
        }
    }
    if domains.is_empty() {
        bail!("acme: no name to order a certificate for: give --domain NAME (or virtual hosts' names)");
    }
    Ok(domains)
}

/// `$STATE_DIRECTORY` (systemd's `StateDirectory=`), else
/// `$XDG_STATE_HOME/tachyon/acme`, else `~/.local/state/tachyon/acme`.
fn default_acme_dir() -> anyhow::Result<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dirs) = var("STATE_DIRECTORY") {
        // systemd lists several folders with colons; the first is ours.
        let first = dirs
            .to_string_lossy()
            .split(':')
            .next()
            .unwrap_or_default()
            .to_string();
        return Ok(PathBuf::from(first));
    }
    if let Some(state) = var("XDG_STATE_HOME") {
        return Ok(PathBuf::from(state).join("tachyon/acme"));
    }
    match var("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".local/state/tachyon/acme")),
        None => bail!("acme.dir: no $STATE_DIRECTORY, $XDG_STATE_HOME or $HOME to keep certificates in: give --acme-dir"),
    }
}

pub(super) fn log(args: &Args, file: &FileLog) -> anyhow::Result<LogSettings> {
    use tachyon_server::access::{Format, Target};
    let access = args
        .access_log
        .as_ref()
        .or(file.access.as_ref())
        .map(|text| match text.as_str() {
            "-" => Target::Stdout,
            path => Target::File(path.into()),
        });
    let format = pick(
        args.log_format.as_ref(),
        file.format.as_ref(),
        "log.format",
        Format::Combined,
        |text| match text {
            "combined" => Ok(Format::Combined),
            "json" => Ok(Format::Json),
            _ => bail!("the formats are combined and json"),
        },
    )?;
    Ok(LogSettings {
        access,
        format,
        json: args.log_json || file.json.unwrap_or(false),
    })
}

pub(super) fn admin(args: &Args, file: &ConfigFile) -> anyhow::Result<Option<SocketAddr>> {
    match args.admin.as_ref().or(file.admin.as_ref()) {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .with_context(|| format!("admin: {text:?} is not an address like 127.0.0.1:9180")),
    }
}

/// `--loopback-congestion` / `loopback_congestion`: an algorithm's name as
/// the kernel spells them (at most 15 bytes of `[a-z0-9_]`), or `system`.
/// Whether the kernel has it is known only when a listener asks.
pub(super) fn loopback_congestion(
    args: &Args,
    file: &ConfigFile,
) -> anyhow::Result<Option<String>> {
    let name = args
        .loopback_congestion
        .as_deref()
        .or(file.loopback_congestion.as_deref())
        .unwrap_or(tachyon_server::LOOPBACK_CONGESTION);
    if name == "system" {
        return Ok(None);
    }
    let well_formed = !name.is_empty()
        && name.len() <= 15
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !well_formed {
        bail!(
            "loopback_congestion: {name:?} is not a congestion control's name (e.g. cubic, reno, bbr; or system)"
        );
    }
    Ok(Some(name.to_string()))
}

pub(super) fn threads(args: &Args, file: &ConfigFile) -> anyhow::Result<usize> {
    let threads = args
        .threads
        .or(file.threads)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 || threads > 1024 {
        bail!("threads: {threads} is out of range (1 to 1024)");
    }
    Ok(threads)
}

/// What the loader needs, without the rules (see [`header_rules`] and
/// [`redirects`]).
pub(super) fn load_options(args: &Args, file: &ConfigFile) -> anyhow::Result<LoadOptions> {
    let defaults = LoadOptions::default();
    let index_files = match (&args.index[..], &file.index_files) {
        ([], Some(names)) => names.clone(),
        ([], None) => defaults.index_files.clone(),
        (given, _) => given.to_vec(),
    };
    Ok(LoadOptions {
        max_memory: size(
            args.max_memory.as_ref(),
            file.max_memory.as_ref(),
            "max_memory",
            defaults.max_memory,
        )?,
        max_file_in_memory: size(
            args.max_file_in_memory.as_ref(),
            file.max_file_in_memory.as_ref(),
            "max_file_in_memory",
            defaults.max_file_in_memory,
        )?,
        index_files,
        serve_dotfiles: args.dotfiles || file.serve_dotfiles.unwrap_or(false),
        symlinks: symlinks(args, file)?,
        compression: compression(args.no_compress, &file.compression)?,
        dictionaries: dictionaries(args.no_dictionaries, &file.dictionaries)?,
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
        sendfile: args.sendfile || file.sendfile.unwrap_or(false),
        header_rules: Vec::new(),
        redirects: Vec::new(),
        ..defaults
    })
}

/// The `[compression]` table and `--no-compress`.
/// `--symlinks` over `symlinks` over the older `follow_outside_symlinks`
/// (true: follow, false: inside) over the default, follow.
fn symlinks(args: &Args, file: &ConfigFile) -> anyhow::Result<Symlinks> {
    if let Some(mode) = &args.symlinks {
        return Symlinks::parse(mode).with_context(|| format!("--symlinks {mode:?}"));
    }
    if args.follow_outside_symlinks {
        return Ok(Symlinks::Follow);
    }
    match (&file.symlinks, file.follow_outside_symlinks) {
        (Some(_), Some(_)) => bail!(
            "symlinks and follow_outside_symlinks are both set: keep symlinks (follow_outside_symlinks is its older spelling)"
        ),
        (Some(mode), None) => Symlinks::parse(mode).with_context(|| {
            format!("symlinks = {mode:?}: one of \"follow\", \"inside\", \"owner\", \"never\"")
        }),
        (None, Some(true)) => Ok(Symlinks::Follow),
        (None, Some(false)) => Ok(Symlinks::Inside),
        (None, None) => Ok(Symlinks::Follow),
    }
}

fn compression(no_compress: bool, file: &FileCompression) -> anyhow::Result<Compression> {
    let defaults = Compression::default();
    let codings = match (&file.codings, no_compress) {
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
    let min_size = size(
        None,
        file.min_size.as_ref(),
        "compression.min_size",
        defaults.min_size,
    )?;
    Ok(Compression {
        codings,
        min_size,
        deferred: false,
    })
}

/// The `[dictionaries]` table and `--no-dictionaries`.
fn dictionaries(off: bool, file: &FileDictionaries) -> anyhow::Result<DictionaryPolicy> {
    let defaults = DictionaryPolicy::default();
    Ok(DictionaryPolicy {
        enabled: !off && file.enabled.unwrap_or(defaults.enabled),
        keep_versions: file.keep_versions.unwrap_or(defaults.keep_versions),
        keep_bytes: size(
            None,
            file.keep_size.as_ref(),
            "dictionaries.keep_size",
            defaults.keep_bytes,
        )?,
    })
}

/// `--cors` (a rule for every path) and the `[[headers]]` rules, in order.
pub(super) fn header_rules(
    cors: Option<&str>,
    rules: &[FileHeaders],
) -> anyhow::Result<Vec<HeaderRule>> {
    let mut built = Vec::with_capacity(rules.len() + 1);
    if let Some(origin) = cors {
        let headers = [(
            "Access-Control-Allow-Origin".to_string(),
            origin.to_string(),
        )];
        built.push(
            HeaderRule::new("**", None, &headers).with_context(|| format!("cors: {origin:?}"))?,
        );
    }
    for (i, rule) in rules.iter().enumerate() {
        let headers: Vec<(String, String)> = rule
            .set
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let context = || format!("headers[{i}] (glob {:?})", rule.glob);
        let mut built_rule = HeaderRule::new(&rule.glob, rule.cache_control.as_deref(), &headers)
            .with_context(context)?;
        match &rule.dictionary {
            None => {}
            Some(FileDictionary::Switch(false)) => {
                built_rule = built_rule
                    .with_dictionary(DictionaryRule::Off)
                    .with_context(context)?;
            }
            Some(FileDictionary::Switch(true)) => bail!(
                "{}: dictionary = true: give the match pattern to offer (\"/assets/app.*.js\"), or false",
                context()
            ),
            Some(FileDictionary::Match(pattern)) => {
                built_rule = built_rule
                    .with_dictionary(DictionaryRule::Match(pattern.clone()))
                    .with_context(context)?;
            }
        }
        built.push(built_rule);
    }
    Ok(built)
}

pub(super) fn redirects(rules: &[FileRedirect]) -> anyhow::Result<Vec<RedirectRule>> {
    rules
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            RedirectRule::new(&rule.from, &rule.to, rule.status)
                .with_context(|| format!("redirects[{i}] (from {:?})", rule.from))
        })
        .collect()
}

/// The `[[hosts]]`: each inherits the top level's load options and
/// overrides what it sets.
pub(super) fn virtual_hosts(
    hosts: &[FileHost],
    load: &LoadOptions,
    listing_by_default: bool,
) -> anyhow::Result<Vec<VirtualHost>> {
    let mut built = Vec::with_capacity(hosts.len());
    for (i, host) in hosts.iter().enumerate() {
        let at = |key: &str| format!("hosts[{i}].{key}");
        if host.names.is_empty() {
            bail!("{}: a virtual host needs at least one name", at("names"));
        }
        for name in &host.names {
            if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace() || b == b'/') {
                bail!("{}: {name:?} is not a host name", at("names"));
            }
        }
        let mut options = load.clone();
        options.listing = host.listing.unwrap_or(load.listing && !listing_by_default);
        if let Some(clean) = host.clean_urls {
            options.clean_urls = clean;
        }
        if host.fallback.is_some() {
            options.fallback = site_path(host.fallback.as_ref(), &at("fallback"))?;
        }
        if host.not_found_page.is_some() {
            options.not_found_page =
                site_path(host.not_found_page.as_ref(), &at("not_found_page"))?;
        }
        let tls = match (&host.tls_cert, &host.tls_key) {
            (Some(cert), Some(key)) => Some(KeyFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            (None, None) => None,
            _ => bail!("{}: tls_cert and tls_key go together", at("tls_cert")),
        };
        built.push(VirtualHost {
            names: host.names.clone(),
            root: host.root.clone(),
            load: options,
            tls,
        });
    }
    Ok(built)
}

/// The `[limits]` table and the limit options.
pub(super) fn limits(args: &Args, config: &ConfigFile) -> anyhow::Result<Limits> {
    let file: &FileLimits = &config.limits;
    let defaults = Limits::default();
    let head = head_limits(args, file, &defaults.head)?;
    let timeout = |cli: &Option<String>, file: &Option<String>, key: &str, default| {
        duration(
            cli.as_ref(),
            file.as_ref(),
            &format!("limits.{key}"),
            default,
        )
    };
    let limits = Limits {
        head,
        header_timeout: timeout(
            &args.header_timeout,
            &file.header_timeout,
            "header_timeout",
            defaults.header_timeout,
        )?,
        idle_timeout: timeout(
            &args.idle_timeout,
            &file.idle_timeout,
            "idle_timeout",
            defaults.idle_timeout,
        )?,
        send_timeout: timeout(
            &args.send_timeout,
            &file.send_timeout,
            "send_timeout",
            defaults.send_timeout,
        )?,
        drain_timeout: timeout(
            &args.drain_timeout,
            &file.drain_timeout,
            "drain_timeout",
            defaults.drain_timeout,
        )?,
        max_connections: args
            .max_connections
            .or(file.max_connections)
            .unwrap_or(defaults.max_connections),
        max_discard_body: size(
            None,
            file.max_discard_body.as_ref(),
            "limits.max_discard_body",
            defaults.max_discard_body,
        )?,
        max_queued_output: defaults.max_queued_output,
        h2: match args.no_h2 || config.http2 == Some(false) {
            true => None,
            false => defaults.h2,
        },
        h3: match args.no_h3 || config.http3 == Some(false) {
            true => None,
            false => Some(h3_limits(args, file)),
        },
    };
    if limits.max_connections == 0 {
        bail!("limits.max_connections: must be at least 1");
    }
    Ok(limits)
}

/// How long a request's head and target may be: `--max-head-bytes` and
/// `limits.max_head_bytes`, `limits.max_target_bytes`.
fn head_limits(
    args: &Args,
    file: &FileLimits,
    defaults: &HeadLimits,
) -> anyhow::Result<HeadLimits> {
    let head = HeadLimits {
        max_head_bytes: size(
            args.max_head_bytes.as_ref(),
            file.max_head_bytes.as_ref(),
            "limits.max_head_bytes",
            defaults.max_head_bytes as u64,
        )? as usize,
        max_target_bytes: size(
            None,
            file.max_target_bytes.as_ref(),
            "limits.max_target_bytes",
            defaults.max_target_bytes as u64,
        )? as usize,
    };
    if head.max_head_bytes < 256 {
        bail!(
            "limits.max_head_bytes: {} is too small to hold a request (at least 256)",
            head.max_head_bytes
        );
    }
    Ok(head)
}

/// HTTP/3's limits, with `--quic-retry-above` or `limits.quic_retry_above`.
fn h3_limits(args: &Args, file: &FileLimits) -> tachyon_server::H3Limits {
    let defaults = tachyon_server::H3Limits::default();
    tachyon_server::H3Limits {
        retry_above: args
            .quic_retry_above
            .or(file.quic_retry_above)
            .unwrap_or(defaults.retry_above),
        ..defaults
    }
}

/// A site path option (`/index.html`): must start with `/`.
fn site_path(value: Option<&String>, key: &str) -> anyhow::Result<Option<String>> {
    match value {
        None => Ok(None),
        Some(p) if p.starts_with('/') => Ok(Some(p.clone())),
        Some(p) => bail!("{key}: {p:?} must be a site path starting with /"),
    }
}
