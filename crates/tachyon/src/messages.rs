//! What the binary prints about itself: start-up and reload lines on
//! stdout, problems on stderr (both as JSON lines with `--log-json`), and
//! systemd's notifications. Never the access log (`tachyon_server::access`).
//!
//! Invariant: printing never ends the process: a closed or full pipe is
//! ignored (`println!` would panic).

use std::sync::atomic::{AtomicBool, Ordering};

use tachyon_server::{Endpoint, Scheme};

/// Tells systemd (`NOTIFY_SOCKET`, set for `Type=notify` units) where the
/// server is; nothing happens without it.
pub(crate) fn notify(states: &[sd_notify::NotifyState<'_>]) {
    let _ = sd_notify::notify(false, states);
}

/// `--log-json`: the server's own messages as JSON lines.
pub(crate) static JSON_MESSAGES: AtomicBool = AtomicBool::new(false);

/// A message as one JSON object: `{"ts":…,"level":…,"msg":…}`.
fn json_message(level: &str, line: &str) -> String {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    serde_json::json!({ "ts": ts, "level": level, "msg": line }).to_string()
}

/// Prints a line to stdout, ignoring a closed or full pipe: a server must not
/// die because whoever started it stopped reading (println! would panic).
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if JSON_MESSAGES.load(Ordering::Relaxed) {
        let _ = writeln!(out, "{}", json_message("info", line));
    } else {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// `http://127.0.0.1:8080/`, or for a wildcard address the loopback URL to
/// open plus a note that every interface listens.
pub(crate) fn url_line(Endpoint { addr, scheme }: Endpoint) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let scheme = match scheme {
        Scheme::Http => "http",
        Scheme::Https => "https",
    };
    let open = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (IpAddr::V4(Ipv4Addr::LOCALHOST), true),
        IpAddr::V6(ip) if ip.is_unspecified() => (IpAddr::V6(Ipv6Addr::LOCALHOST), true),
        ip => (ip, false),
    };
    let shown = std::net::SocketAddr::new(open.0, addr.port());
    if open.1 {
        format!("{scheme}://{shown}/ (listening on {addr}, all interfaces)")
    } else {
        format!("{scheme}://{shown}/")
    }
}

/// Like `say`, on stderr, prefixed with the program name.
pub(crate) fn warn(line: &str) {
    use std::io::Write;
    if JSON_MESSAGES.load(Ordering::Relaxed) {
        let _ = writeln!(std::io::stderr().lock(), "{}", json_message("warn", line));
    } else {
        let _ = writeln!(std::io::stderr().lock(), "tachyon: {line}");
    }
}
