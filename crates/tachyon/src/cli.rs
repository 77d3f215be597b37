//! Command-line arguments, as typed. Values stay raw here; `config::Settings`
//! parses and validates them together with the config file.

use std::path::PathBuf;

/// The version `--version` prints: the package's, and the commit of the
/// sources the binary was built from (`build.rs`), ", modified" when they
/// had uncommitted changes.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("TACHYON_SOURCES"));

/// A static web server that serves a directory from memory.
#[derive(Debug, clap::Parser)]
#[command(version = VERSION, about, max_term_width = 100)]
pub struct Args {
    /// Directory to serve [default: the current directory]
    pub root: Option<PathBuf>,

    // `help` rather than a doc comment: rustdoc would read `[::]` as a link.
    #[arg(
        short,
        long = "listen",
        value_name = "ADDR:PORT",
        help = "Address to listen on, repeatable; IPv6 as [::]:8080 [default: 0.0.0.0:8080]"
    )]
    pub listen: Vec<String>,

    /// Worker threads, one event loop each [default: number of cores]
    #[arg(short, long)]
    pub threads: Option<usize>,

    /// Do not place connections by CPU: by default, with one worker per
    /// CPU, an idle connection moves to the worker kept on the CPU its
    /// packets arrive on while the clients' CPUs are spread evenly enough
    /// (several client threads, or one connection)
    #[arg(long)]
    pub no_cpu_affinity: bool,

    /// Memory budget for file bodies, e.g. 512MiB; files beyond it are served from disk [default: 512MiB]
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,

    /// Files larger than this are served from disk [default: 64MiB]
    #[arg(long, value_name = "SIZE")]
    pub max_file_in_memory: Option<String>,

    /// Send disk-served files with sendfile instead of a checked copy: less CPU on
    /// large files, but only safe if files are replaced by rename, never rewritten
    /// in place while being served
    #[arg(long)]
    pub sendfile: bool,

    /// Index file for directories, repeatable, tried in order [default: index.html, index.htm]
    #[arg(long = "index", value_name = "NAME")]
    pub index: Vec<String>,

    /// Serve files and directories whose names start with a dot
    #[arg(long)]
    pub dotfiles: bool,

    /// Which symlinks to follow: follow (all, as nginx and Caddy do), inside (only those whose
    /// target is inside the root), owner (only those whose target has the link's owner), never
    /// [default: follow]
    #[arg(long, value_name = "MODE", value_parser = ["follow", "inside", "owner", "never"])]
    pub symlinks: Option<String>,

    /// The same as --symlinks follow, the default (kept for older scripts)
    #[arg(long, hide = true)]
    pub follow_outside_symlinks: bool,

    /// List directories that have no index file (HTML, or JSON for Accept: application/json)
    #[arg(long)]
    pub listing: bool,

    /// Serve /about from about.html
    #[arg(long)]
    pub clean_urls: bool,

    /// Site path served with 200 for unknown paths, for single-page apps, e.g. /index.html
    #[arg(long, value_name = "PATH")]
    pub fallback: Option<String>,

    /// Site path whose content is the body of 404 responses, e.g. /404.html
    #[arg(long, value_name = "PATH")]
    pub not_found_page: Option<String>,

    /// Send Access-Control-Allow-Origin with this value on every file, e.g. '*'
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,

    /// Keep built variants in this folder, so a restart serves them at once; "off" keeps
    /// none [default: $CACHE_DIRECTORY, else $XDG_CACHE_HOME/tachyon, else ~/.cache/tachyon]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<String>,

    /// Most the cache folder may hold, e.g. 1GiB; the least recently used go first [default: 1GiB]
    #[arg(long, value_name = "SIZE")]
    pub cache_max_size: Option<String>,

    /// Do not build compressed variants (precompressed .br/.zst/.gz files are still served)
    #[arg(long)]
    pub no_compress: bool,

    /// Do not offer compression dictionaries nor send changed files as deltas from earlier versions (RFC 9842)
    #[arg(long)]
    pub no_dictionaries: bool,

    /// Do not reload when files under the root change (SIGHUP still reloads)
    #[arg(long)]
    pub no_watch: bool,

    /// Speak only HTTP/1.1: no HTTP/2 over TLS (ALPN h2) nor cleartext
    /// HTTP/2 with prior knowledge on the plain listeners
    #[arg(long)]
    pub no_h2: bool,

    /// No HTTP/3: by default it is served on the UDP port of every HTTPS
    /// address, and HTTPS responses announce it with Alt-Svc
    #[arg(long)]
    pub no_h3: bool,

    /// QUIC handshakes in progress per worker above which new HTTP/3
    /// clients must first prove their address (a Retry, one round trip
    /// more); 0 asks it of every client [default: 64]
    #[arg(long, value_name = "N")]
    pub quic_retry_above: Option<usize>,

    /// TCP congestion control for listeners on a loopback address, whose
    /// clients are all on this host: `system` keeps the system's. Pacing
    /// (BBR's) has no queue to spare there and costs a timer per gap
    /// [default: cubic]
    #[arg(long, value_name = "NAME")]
    pub loopback_congestion: Option<String>,

    /// Time allowed to send a request head, e.g. 10s [default: 10s]
    #[arg(long, value_name = "DURATION")]
    pub header_timeout: Option<String>,

    /// Keep-alive idle timeout [default: 1m]
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,

    /// Time a blocked send may wait for the client to read [default: 30s]
    #[arg(long, value_name = "DURATION")]
    pub send_timeout: Option<String>,

    /// Time SIGTERM waits for responses in flight [default: 10s]
    #[arg(long, value_name = "DURATION")]
    pub drain_timeout: Option<String>,

    /// Most open connections; new ones beyond it are closed at once [default: 65536]
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Largest request head (request line and headers) [default: 16KiB]
    #[arg(long, value_name = "SIZE")]
    pub max_head_bytes: Option<String>,

    #[arg(
        long = "https",
        value_name = "ADDR:PORT",
        help = "HTTPS address to listen on, repeatable [default: 0.0.0.0:8443 when a certificate is given]"
    )]
    pub https: Vec<String>,

    /// Certificate chain for HTTPS (PEM, the site's certificate first)
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// Private key of --tls-cert (PEM: PKCS#8, SEC1 or PKCS#1)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Serve HTTPS with a certificate made at start for localhost, 127.0.0.1 and ::1
    /// (for development: browsers will warn); prints its SHA-256 fingerprint
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub tls_self_signed: bool,

    /// Answer every request on the plain (http) addresses with a 308 to https://
    #[arg(long)]
    pub redirect_https: bool,

    /// Send Strict-Transport-Security on HTTPS responses, with this max-age [default: off;
    /// --hsts alone: 365d]
    #[arg(
        long,
        value_name = "MAX_AGE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "365d"
    )]
    pub hsts: Option<String>,

    /// Obtain and renew the HTTPS certificate from an ACME CA (Let's Encrypt unless
    /// --acme-directory says otherwise) for the --domain names; without --https, HTTPS
    /// listens on 0.0.0.0:443
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key", "tls_self_signed"])]
    pub acme: bool,

    /// A name to obtain the certificate for, repeatable [default: the virtual hosts' names]
    #[arg(long = "domain", value_name = "NAME")]
    pub domains: Vec<String>,

    /// Contact address the CA may write to about the certificates
    #[arg(long, value_name = "EMAIL")]
    pub acme_email: Option<String>,

    /// The CA's ACME directory URL [default: Let's Encrypt's]
    #[arg(long, value_name = "URL")]
    pub acme_directory: Option<String>,

    /// Let's Encrypt's staging CA: untrusted certificates, generous rate limits
    #[arg(long, conflicts_with = "acme_directory")]
    pub acme_staging: bool,

    /// Trust this CA certificate (PEM) for the ACME directory's HTTPS (a private or test CA)
    #[arg(long, value_name = "FILE")]
    pub acme_ca_root: Option<PathBuf>,

    /// Where the ACME account key, certificates and keys are kept [default:
    /// $STATE_DIRECTORY, else $XDG_STATE_HOME/tachyon/acme, else ~/.local/state/tachyon/acme]
    #[arg(long, value_name = "DIR")]
    pub acme_dir: Option<PathBuf>,

    /// How the CA checks that the names are ours: tls-alpn-01 (inside a handshake on the
    /// HTTPS port 443) or http-01 (a file on a plain listener on port 80) [default: tls-alpn-01]
    #[arg(long, value_name = "TYPE", value_parser = ["tls-alpn-01", "http-01"])]
    pub acme_challenge: Option<String>,

    /// Write an access log line per request to FILE, or to stdout with `-` [default: off]
    #[arg(long, value_name = "FILE")]
    pub access_log: Option<String>,

    /// Access log format: combined (nginx's) or json (Caddy's field names) [default: combined]
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<String>,

    /// Print the server's own messages (startup, reloads, errors) as JSON lines
    #[arg(long)]
    pub log_json: bool,

    /// Serve /metrics (Prometheus), /healthz, /readyz and /status on this address, e.g.
    /// 127.0.0.1:9180 [default: off]
    #[arg(long, value_name = "ADDR:PORT")]
    pub admin: Option<String>,

    /// Run as this user (and its group) once the listeners are bound, e.g. to
    /// bind port 80 as root and serve as www-data [default: stay who started it]
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,

    /// Do not confine the process with Landlock (by default it may read only
    /// its roots, certificates, config and binary, and write only its log)
    #[arg(long)]
    pub no_sandbox: bool,

    /// TOML config file; command-line options override it
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Print the effective configuration as TOML and exit
    #[arg(long)]
    pub print_config: bool,

    /// Check the configuration, the roots and the certificates, then exit: 0 when
    /// tachyon would start, 1 with the reason when it would not
    #[arg(long)]
    pub check: bool,

    /// Ask the admin listener at this address whether tachyon is ready (GET /readyz),
    /// then exit: 0 if it is, 1 if not; for container health checks, where there is no curl
    #[arg(long, value_name = "ADDR:PORT")]
    pub healthcheck: Option<String>,

    /// Print a man page or a shell completion script and exit (for packages)
    #[arg(long, value_enum, value_name = "WHAT", hide = true)]
    pub generate: Option<Generate>,

    /// Print nothing at startup
    #[arg(short, long)]
    pub quiet: bool,
}

/// What `--generate` prints: files a package installs beside the binary,
/// made from these very definitions so they cannot drift from them.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Generate {
    Man,
    Bash,
    Zsh,
    Fish,
}

/// Writes what `what` names to `out`.
pub fn generate(what: Generate, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let mut command = Args::command();
    let shell = match what {
        Generate::Man => return clap_mangen::Man::new(command).render(out),
        Generate::Bash => Shell::Bash,
        Generate::Zsh => Shell::Zsh,
        Generate::Fish => Shell::Fish,
    };
    clap_complete::generate(shell, &mut command, "tachyon", out);
    Ok(())
}
