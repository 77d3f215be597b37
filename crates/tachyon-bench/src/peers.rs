//! The servers under test: how each is configured, started, probed and
//! stopped, on loopback, on one shared document root.
//!
//! Configs live in `bench/peers/` as templates (`{{PORT}}`, `{{ROOT}}`,
//! `{{WORKERS}}`, `{{RUN}}`, `{{USER}}`, `{{GROUP}}`). Every server runs in
//! its own process group, so stopping it (on success, error or Ctrl-C) takes
//! its workers with it; we only ever signal groups we created.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use crate::sources::Source;

/// A server the harness knows how to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Peer {
    Tachyon,
    /// tachyon with compression, listing and watching off: the A/B
    /// reference for what those features cost on the hot path.
    TachyonBare,
    /// tachyon as a site owner runs it, but disk-served bodies sent with
    /// sendfile instead of a checked copy: what the copy costs.
    TachyonSendfile,
    /// Another tachyon build (the binary named by `TACHYON_BASELINE`), run
    /// as `tachyon` is: a before/after comparison in one run.
    TachyonBaseline,
    /// tachyon with the access log on (combined, to a file): what logging
    /// costs, beside `nginx-logged`.
    TachyonLogged,
    Floor,
    Nginx,
    NginxDefault,
    /// nginx tuned, with `access_log … buffer=64k`.
    NginxLogged,
    /// nginx 1.31 mainline built from source (`sources`), configured as
    /// `nginx` is.
    NginxMainline,
    Lighttpd,
    H2o,
    /// h2o master built from source, configured as `h2o` is.
    H2oMaster,
    Caddy,
    Apache2,
    Sws,
}

impl Peer {
    pub const ALL: [Peer; 16] = [
        Peer::Tachyon,
        Peer::TachyonBare,
        Peer::TachyonSendfile,
        Peer::TachyonBaseline,
        Peer::TachyonLogged,
        Peer::Floor,
        Peer::Nginx,
        Peer::NginxDefault,
        Peer::NginxLogged,
        Peer::NginxMainline,
        Peer::Lighttpd,
        Peer::H2o,
        Peer::H2oMaster,
        Peer::Caddy,
        Peer::Apache2,
        Peer::Sws,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Tachyon => "tachyon",
            Peer::TachyonBare => "tachyon-bare",
            Peer::TachyonSendfile => "tachyon-sendfile",
            Peer::TachyonBaseline => "tachyon-baseline",
            Peer::TachyonLogged => "tachyon-logged",
            Peer::Floor => "floor",
            Peer::Nginx => "nginx",
            Peer::NginxDefault => "nginx-default",
            Peer::NginxLogged => "nginx-logged",
            Peer::NginxMainline => "nginx-mainline",
            Peer::Lighttpd => "lighttpd",
            Peer::H2o => "h2o",
            Peer::H2oMaster => "h2o-master",
            Peer::Caddy => "caddy",
            Peer::Apache2 => "apache2",
            Peer::Sws => "sws",
        }
    }

    pub fn parse(name: &str) -> anyhow::Result<Peer> {
        Peer::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let known: Vec<_> = Peer::ALL.iter().map(|p| p.name()).collect();
                anyhow!("unknown server {name:?}; known: {}", known.join(", "))
            })
    }

    /// Whether the `tls` suite can run it (a `-tls` config twin, or
    /// tachyon's own options; a baseline build is taken to have them).
    pub fn speaks_tls(self) -> bool {
        (self.is_tachyon() && self != Peer::TachyonLogged) || self.has_protocol_twins()
    }

    /// Whether the h2c suites can run it: tachyon, lighttpd and h2o serve
    /// HTTP/2 with prior knowledge on a plain port as configured, nginx
    /// (tuned and mainline), Caddy and Apache through a `-h2c` config twin.
    pub fn speaks_h2c(self) -> bool {
        self.is_tachyon() || self.has_protocol_twins()
    }

    /// The peers with a config for every protocol suite; the floor, the
    /// logged and default nginx variants and static-web-server are measured
    /// over plain HTTP/1.1 only.
    fn has_protocol_twins(self) -> bool {
        matches!(
            self,
            Peer::Nginx
                | Peer::NginxMainline
                | Peer::Lighttpd
                | Peer::H2o
                | Peer::H2oMaster
                | Peer::Caddy
                | Peer::Apache2
        )
    }

    /// A build of tachyon (this workspace's or the baseline).
    pub fn is_tachyon(self) -> bool {
        matches!(
            self,
            Peer::Tachyon
                | Peer::TachyonBare
                | Peer::TachyonSendfile
                | Peer::TachyonBaseline
                | Peer::TachyonLogged
        )
    }

    /// The source archive a peer is built from (`tachyon-bench setup`).
    pub fn source(self) -> Option<Source> {
        match self {
            Peer::NginxMainline => Some(Source::NginxMainline),
            Peer::H2oMaster => Some(Source::H2oMaster),
            _ => None,
        }
    }

    /// The peer's executable: installed on PATH, or built from source.
    pub fn executable(self) -> Option<PathBuf> {
        match self.source() {
            Some(source) => source.binary(),
            None => which(self.program()?),
        }
    }

    /// Not built from this workspace: installed, or built from source.
    pub fn is_external(self) -> bool {
        self.program().is_some() || self.source().is_some()
    }

    /// The executable that must be installed on PATH (None: built from
    /// this workspace, or from a source archive).
    pub fn program(self) -> Option<&'static str> {
        match self {
            Peer::Tachyon
            | Peer::TachyonBare
            | Peer::TachyonSendfile
            | Peer::TachyonBaseline
            | Peer::TachyonLogged
            | Peer::Floor
            | Peer::NginxMainline
            | Peer::H2oMaster => None,
            Peer::Nginx | Peer::NginxDefault | Peer::NginxLogged => Some("nginx"),
            Peer::Lighttpd => Some("lighttpd"),
            Peer::H2o => Some("h2o"),
            Peer::Caddy => Some("caddy"),
            Peer::Apache2 => Some("apache2"),
            Peer::Sws => Some("static-web-server"),
        }
    }

    /// The arguments that make the executable print its version.
    pub fn version_args(self) -> Option<&'static [&'static str]> {
        Some(match self {
            Peer::Tachyon
            | Peer::TachyonBare
            | Peer::TachyonSendfile
            | Peer::TachyonBaseline
            | Peer::TachyonLogged
            | Peer::Floor => return None,
            Peer::Nginx | Peer::NginxDefault | Peer::NginxLogged | Peer::NginxMainline => &["-v"],
            Peer::Lighttpd => &["-v"],
            Peer::H2o | Peer::H2oMaster => &["--version"],
            Peer::Caddy => &["version"],
            Peer::Apache2 => &["-v"],
            Peer::Sws => &["--version"],
        })
    }
}

/// Where things are, for starting servers.
#[derive(Clone)]
pub struct Env {
    pub root: PathBuf,
    pub run_dir: PathBuf,
    pub peers_dir: PathBuf,
    pub tachyon_bin: PathBuf,
    pub bench_bin: PathBuf,
    pub workers: usize,
    /// Serve HTTPS only, with this certificate (the `tls` suite).
    pub tls: Option<TlsFiles>,
    /// Serve h2c with prior knowledge (the `h2c` suite): peers that need
    /// it configured use their `-h2c` twin, and readiness is probed over
    /// HTTP/2.
    pub h2c: bool,
    /// Serve HTTP/3 too, on the HTTPS port (the `h3` suite): peers use
    /// their `-h3` twin where they need one to listen on QUIC.
    pub h3: bool,
    /// Start tachyon only once its variants are built (the real-site
    /// suites send `Accept-Encoding`; until then it would answer with
    /// what it has built so far).
    pub variants_wait: bool,
}

impl Env {
    /// Plain HTTP from `root`, the run's files in `run_dir`, with the
    /// binaries beside this one (what the soak and the attacks use).
    pub fn plain(
        root: PathBuf,
        run_dir: &Path,
        peers_dir: &Path,
        workers: usize,
    ) -> anyhow::Result<Env> {
        let bench_bin = std::env::current_exe()?;
        // Absolute: nginx takes its config and logs under its `-p` prefix,
        // so a relative `--out` would be doubled.
        Ok(Env {
            root: std::path::absolute(root)?,
            run_dir: std::path::absolute(run_dir)?,
            peers_dir: peers_dir.to_path_buf(),
            tachyon_bin: tachyon_bin()?,
            bench_bin,
            workers,
            tls: None,
            h2c: false,
            h3: false,
            variants_wait: false,
        })
    }
}

/// The certificate every server of a TLS run uses: one ECDSA P-256 key
/// and a self-signed certificate for 127.0.0.1, as PEM files.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// Makes the certificate in `dir`.
    pub fn make(dir: &Path) -> anyhow::Result<TlsFiles> {
        let names = ["127.0.0.1", "localhost"].map(String::from).to_vec();
        let made = rcgen::generate_simple_self_signed(names).context("making a certificate")?;
        let files = TlsFiles {
            cert: dir.join("bench-cert.pem"),
            key: dir.join("bench-key.pem"),
        };
        std::fs::write(&files.cert, made.cert.pem())?;
        std::fs::write(&files.key, made.key_pair.serialize_pem())?;
        Ok(files)
    }
}

/// A started server.
pub struct Running {
    pub peer: Peer,
    pub port: u16,
    pub child: Child,
    /// RSS of the process tree right after it answered its first request.
    pub rss_at_rest: u64,
    pub binary_bytes: Option<u64>,
    /// Speaks HTTPS (a TLS run).
    pub tls: bool,
    /// Probed over h2c (an h2c run).
    pub h2c: bool,
    /// Noted while it runs, for the run after a killed one (dropped after
    /// `stop`, the field being dropped after `Drop::drop`).
    _noted: Option<crate::leftovers::Noted>,
}

impl Running {
    pub fn start(peer: Peer, env: &Env) -> anyhow::Result<Running> {
        let port = free_port()?;
        let mut command = command(peer, port, env)?;
        let log = std::fs::File::create(env.run_dir.join(format!("{}.out", peer.name())))?;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", peer.name()))?;
        let binary_bytes = binary_path(peer, env)
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len());
        let noted = crate::leftovers::note(child.id(), peer.name());
        let mut running = Running {
            _noted: noted,
            peer,
            port,
            child,
            rss_at_rest: 0,
            binary_bytes,
            tls: env.tls.is_some(),
            h2c: env.h2c,
        };
        running.wait_ready(env)?;
        // tachyon-bare builds no variants.
        if env.variants_wait && peer.is_tachyon() && peer != Peer::TachyonBare {
            running.wait_for_variants(env)?;
        }
        running.rss_at_rest = crate::proc::rss_bytes(running.pid());
        Ok(running)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }

    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn wait_ready(&mut self, env: &Env) -> anyhow::Result<()> {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log =
                    std::fs::read_to_string(env.run_dir.join(format!("{}.out", self.peer.name())))
                        .unwrap_or_default();
                bail!(
                    "{} exited during start ({status}): {}",
                    self.peer.name(),
                    log.trim()
                );
            }
            let answered = if self.tls || self.h2c {
                probe_curl(&self.url("/1k"), self.h2c)
            } else {
                probe(self.addr(), "/1k")
            };
            if answered.is_ok_and(|status| status == 200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!(
            "{} did not answer GET /1k with 200 within 20 s",
            self.peer.name()
        )
    }

    /// Waits for tachyon's line saying its background compression is done
    /// (it runs without `--quiet` when `variants_wait` is set).
    fn wait_for_variants(&mut self, env: &Env) -> anyhow::Result<()> {
        const DONE: &str = "reloaded (variants built in the background)";
        let log = env.run_dir.join(format!("{}.out", self.peer.name()));
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(900) {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains(DONE) {
                return Ok(());
            }
            if !self.is_alive() {
                bail!(
                    "{} exited while compressing: {}",
                    self.peer.name(),
                    text.trim()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        bail!(
            "{} did not finish compressing within 15 minutes",
            self.peer.name()
        )
    }

    /// SIGTERM to the group, SIGKILL after 5 s.
    pub fn stop(&mut self) {
        use rustix::process::{kill_process_group, Pid, Signal};
        let group = Pid::from_child(&self.child);
        let _ = kill_process_group(group, Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = kill_process_group(group, Signal::KILL);
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The command that starts `peer` on `port`, its configuration rendered
/// into the run's folder.
fn command(peer: Peer, port: u16, env: &Env) -> anyhow::Result<Command> {
    let workers = env.workers.to_string();
    let root = env.root.display().to_string();
    let render = |template: &str| render(peer, template, port, env);
    let mut c;
    match peer {
        Peer::Tachyon
        | Peer::TachyonBare
        | Peer::TachyonSendfile
        | Peer::TachyonBaseline
        | Peer::TachyonLogged => return tachyon_command(peer, port, env),
        Peer::Floor => {
            c = Command::new(&env.bench_bin);
            c.args([
                "floor",
                "--port",
                &port.to_string(),
                "--threads",
                &workers,
                "--root",
                &root,
            ]);
        }
        Peer::Nginx | Peer::NginxDefault | Peer::NginxLogged | Peer::NginxMainline => {
            let conf = render(match peer {
                Peer::Nginx | Peer::NginxMainline => "nginx-tuned.conf",
                Peer::NginxLogged => "nginx-logged.conf",
                _ => "nginx-default.conf",
            })?;
            c = Command::new(peer.executable().context("nginx is not installed")?);
            c.arg("-c")
                .arg(conf)
                .arg("-p")
                .arg(&env.run_dir)
                .arg("-e")
                .arg(env.run_dir.join(format!("{}.error.log", peer.name())));
        }
        Peer::Lighttpd => {
            c = Command::new("lighttpd");
            c.arg("-D").arg("-f").arg(render("lighttpd.conf")?);
        }
        Peer::H2o => {
            c = Command::new("h2o");
            c.arg("-c").arg(render("h2o.conf")?);
        }
        Peer::H2oMaster => {
            // The bare binary: worker mode (no start_server), and no OCSP
            // helper (the template's {{OCSP}} turns its updates off).
            c = Command::new(peer.executable().context("h2o-master is not built")?);
            c.args(["-m", "worker", "-c"]).arg(render("h2o.conf")?);
        }
        Peer::Caddy => {
            c = Command::new("caddy");
            c.args(["run", "--adapter", "caddyfile", "--config"])
                .arg(render("Caddyfile")?);
            c.env("GOMAXPROCS", &workers)
                .env("HOME", &env.run_dir)
                .env("XDG_DATA_HOME", &env.run_dir)
                .env("XDG_CONFIG_HOME", &env.run_dir);
        }
        Peer::Apache2 => {
            c = Command::new("apache2");
            c.arg("-f").arg(render("apache2.conf")?).arg("-DFOREGROUND");
        }
        Peer::Sws => {
            c = Command::new("static-web-server");
            c.args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--root",
                &root,
                "--log-level",
                "error",
            ]);
            c.args(["--threads-multiplier", "1"]);
        }
    }
    Ok(c)
}

/// tachyon as a site owner runs it (listing, compression and watching),
/// or bare, or in one of its variants.
fn tachyon_command(peer: Peer, port: u16, env: &Env) -> anyhow::Result<Command> {
    let workers = env.workers.to_string();
    let mut c = match peer {
        Peer::TachyonBaseline => Command::new(baseline_bin()?),
        _ => Command::new(&env.tachyon_bin),
    };
    c.arg(&env.root).args(["--threads", &workers]);
    // Under the system's congestion control, as the peers are, not the
    // cubic it gives loopback listeners by default (`congestion`).
    c.args(["--loopback-congestion", "system"]);
    if !env.variants_wait {
        c.arg("--quiet");
    }
    if peer != Peer::TachyonBaseline {
        // No cache folder: a run writes nothing outside its own
        // folder. (An older baseline build may not know the option.)
        c.args(["--cache-dir", "off"]);
    } else {
        // The baseline's default cache folder, inside the run's: a cache
        // an earlier run filled would leave nothing to build in the
        // background, and `wait_for_variants` would wait for a line that
        // never comes.
        c.env("XDG_CACHE_HOME", env.run_dir.join("tachyon-baseline-cache"));
        c.env_remove("CACHE_DIRECTORY");
    }
    match &env.tls {
        None => c.args(["--listen", &format!("127.0.0.1:{port}")]),
        // HTTPS on the port; the plain listener somewhere unused.
        Some(tls) => c
            .args(["--listen", "127.0.0.1:0", "--https"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--tls-cert")
            .arg(&tls.cert)
            .arg("--tls-key")
            .arg(&tls.key),
    };
    if peer != Peer::TachyonBare {
        // Listing on (and compression and watching, the defaults):
        // the figures are for the server as a site owner runs it.
        c.arg("--listing");
        if peer == Peer::TachyonSendfile {
            // Large files from disk by sendfile: what tachyon did
            // before its in-memory copies of large bodies.
            c.args(["--sendfile", "--max-file-in-memory", "4MiB"]);
        }
        if peer == Peer::TachyonLogged {
            c.arg("--access-log")
                .arg(env.run_dir.join("tachyon-access.log"));
        }
    } else {
        c.args(["--no-compress", "--no-watch"]);
    }
    Ok(c)
}

/// Renders a peer's configuration template into the run's folder: a TLS
/// run uses each template's `-tls` twin (nginx-tuned-tls.conf), an h2c run
/// its `-h2c` twin where the peer needs one.
fn render(peer: Peer, template: &str, port: u16, env: &Env) -> anyhow::Result<PathBuf> {
    let workers = env.workers.to_string();
    let root = env.root.display().to_string();
    let twin = |suffix: &str| match template.split_once('.') {
        Some((stem, ext)) => format!("{stem}-{suffix}.{ext}"),
        None => format!("{template}-{suffix}"),
    };
    let template = match (&env.tls, env.h2c) {
        (Some(_), _) if env.h3 && env.peers_dir.join(twin("h3")).exists() => twin("h3"),
        (Some(_), _) => twin("tls"),
        (None, true) if env.peers_dir.join(twin("h2c")).exists() => twin("h2c"),
        (None, _) => template.to_string(),
    };
    let template = template.as_str();
    let (cert, key) = env
        .tls
        .as_ref()
        .map_or((String::new(), String::new()), |t| {
            (t.cert.display().to_string(), t.key.display().to_string())
        });
    let text = std::fs::read_to_string(env.peers_dir.join(template)).with_context(|| {
        format!(
            "reading peer config {}",
            env.peers_dir.join(template).display()
        )
    })?;
    let (user, group) = identity();
    // lighttpd asks for its max-fds at start and, above the hard
    // limit, falls back to 4,096 connections: ask for what there is.
    let fds = crate::proc::raise_nofile().min(65_536);
    // Debian's nginx keeps mime.types in /etc/nginx, a build from
    // source in its own conf folder; h2o master's binary has no OCSP
    // helper script beside it.
    let mime_types = match peer.source() {
        Some(source) => source.conf_dir().join("mime.types"),
        None => PathBuf::from("/etc/nginx/mime.types"),
    };
    let ocsp = match peer {
        Peer::H2oMaster => "ocsp-update-interval: 0",
        _ => "",
    };
    let text = text
        .replace("{{MIME_TYPES}}", &mime_types.display().to_string())
        .replace("{{OCSP}}", ocsp)
        .replace("{{MAX_FDS}}", &fds.to_string())
        .replace(
            "{{CONNS_UNDER_NOFILE}}",
            &fds.saturating_sub(256).to_string(),
        )
        .replace("{{MAX_CONNS}}", &(fds / 2).to_string())
        .replace("{{PORT}}", &port.to_string())
        .replace("{{ROOT}}", &root)
        .replace("{{WORKERS}}", &workers)
        .replace("{{RUN}}", &env.run_dir.display().to_string())
        .replace("{{USER}}", &user)
        .replace("{{GROUP}}", &group)
        .replace("{{TLS_CERT}}", &cert)
        .replace("{{TLS_KEY}}", &key);
    let out = env.run_dir.join(format!("{}-{template}", peer.name()));
    std::fs::write(&out, text)?;
    Ok(out)
}

fn binary_path(peer: Peer, env: &Env) -> Option<PathBuf> {
    match peer {
        Peer::Tachyon | Peer::TachyonBare | Peer::TachyonSendfile | Peer::TachyonLogged => {
            Some(env.tachyon_bin.clone())
        }
        Peer::TachyonBaseline => baseline_bin().ok(),
        Peer::Floor => None,
        other => other.executable(),
    }
}

/// The tachyon binary built beside this one (cargo puts both in one
/// folder); it may be missing.
pub fn tachyon_bin() -> std::io::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name("tachyon"))
}

/// The build `tachyon-baseline` runs: `TACHYON_BASELINE`, a path to a
/// tachyon binary (e.g. built from an earlier commit).
pub fn baseline_bin() -> anyhow::Result<PathBuf> {
    let path = std::env::var_os("TACHYON_BASELINE")
        .map(PathBuf::from)
        .context("tachyon-baseline needs TACHYON_BASELINE=/path/to/an/older/tachyon")?;
    if !path.is_file() {
        bail!("TACHYON_BASELINE={}: no such file", path.display());
    }
    Ok(path)
}

/// Whether two binaries are the same build (the same bytes).
pub fn same_build(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The full path of a program on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The user and group peers drop privileges to: www-data when we are root
/// (Apache and h2o refuse to serve as root), else ourselves.
fn identity() -> (String, String) {
    if rustix::process::geteuid().is_root() {
        ("www-data".into(), "www-data".into())
    } else {
        let user = std::env::var("USER").unwrap_or_else(|_| "nobody".into());
        (user.clone(), user)
    }
}

/// A run folder the peers' workers can write in whatever user they drop
/// to (pid files, temporary files, logs): sticky and open to all, as /tmp.
pub fn scratch_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o1777))
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// One GET; returns the status code.
pub fn probe(addr: SocketAddr, path: &str) -> anyhow::Result<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head)?;
    let text = std::str::from_utf8(&head)?;
    Ok(text[9..12].parse()?)
}

/// One GET over HTTPS (curl, certificate not checked: the run made it);
/// returns the status code.
/// A GET through curl: HTTPS, or h2c with prior knowledge.
fn probe_curl(url: &str, h2c: bool) -> anyhow::Result<u16> {
    let out = Command::new("curl")
        .args(h2c.then_some("--http2-prior-knowledge"))
        .args([
            "-sk",
            "--max-time",
            "2",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            url,
        ])
        .output()
        .context("curl probes HTTPS and h2c servers")?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().parse()?)
}

/// Where the workspace's bench/peers folder is.
pub fn default_peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `abuse --out results/x` once started nginx with its config under
    /// `results/x/results/x/`: the plain environment's paths are absolute.
    #[test]
    fn a_plain_environment_has_absolute_paths() {
        let env = Env::plain(
            PathBuf::from("out/www"),
            Path::new("out"),
            Path::new("peers"),
            1,
        )
        .unwrap();
        assert!(env.root.is_absolute() && env.run_dir.is_absolute());
        assert!(env.run_dir.ends_with("out") && env.root.ends_with("out/www"));
    }

    /// An A/B of a build against itself is refused: a copy is the same
    /// build, a rebuild is not, a missing file is no build.
    #[test]
    fn a_copy_is_the_same_build_and_a_rebuild_is_not() {
        let dir = tachyon_testkit::Scratch::new("same-build");
        let [built, copy, rebuilt] = ["tachyon", "copy", "rebuilt"].map(|n| dir.join(n));
        std::fs::write(&built, b"\x7fELF one build").unwrap();
        std::fs::copy(&built, &copy).unwrap();
        std::fs::write(&rebuilt, b"\x7fELF another build").unwrap();
        assert!(same_build(&built, &copy));
        assert!(!same_build(&built, &rebuilt));
        assert!(!same_build(&built, &dir.join("missing")));
    }
}
