//! The request headers a real browser sends, captured from Debian's
//! Chromium rather than typed: `tachyon-bench browser-headers` serves a
//! page with a stylesheet, a script, an image, a font and a `fetch()` over
//! HTTPS on loopback, loads it in headless Chromium, and records every
//! request's header fields. The real-site suites send them
//! (`bench/browser/chromium.json`, compiled in).
//!
//! Owns: the capture and the stored set. Does not own: how a load client
//! sends them (`traffic`). Invariant: the stored fields are the browser's,
//! in its order, lowercased, without the fields of the transport (`host`,
//! `connection`), and with the origin left out of `referer` and `origin`
//! (the load client puts the server's in).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

/// The kinds of request a page makes, as `sec-fetch-dest` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Document,
    Style,
    Script,
    Image,
    Font,
    /// `fetch()`: JSON and other data.
    Empty,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Document,
        Kind::Style,
        Kind::Script,
        Kind::Image,
        Kind::Font,
        Kind::Empty,
    ];
}

/// One captured request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Captured {
    pub kind: Kind,
    pub path: String,
    /// The fields in the browser's order, names lowercased.
    pub fields: Vec<(String, String)>,
}

/// What `bench/browser/chromium.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeaderSet {
    pub browser: String,
    pub captured: String,
    pub requests: Vec<Captured>,
}

/// The set the real-site suites send, captured from Chromium 156.
pub const CHROMIUM: &str = include_str!("../../../bench/browser/chromium.json");

impl HeaderSet {
    pub fn stored() -> HeaderSet {
        serde_json::from_str(CHROMIUM).expect("bench/browser/chromium.json is valid")
    }

    /// The fields of a request of this kind to a server at `origin`
    /// (`https://127.0.0.1:8443`) from the page at `page` (`/index.html`),
    /// `accept-encoding` replaced by `coding` (None: as the browser sent
    /// it).
    pub fn fields(
        &self,
        kind: Kind,
        origin: &str,
        page: &str,
        coding: Option<&str>,
    ) -> Vec<(String, String)> {
        let captured = self
            .requests
            .iter()
            .find(|r| r.kind == kind)
            .or_else(|| self.requests.iter().find(|r| r.kind == Kind::Empty))
            .expect("the capture has a fetch() request");
        captured
            .fields
            .iter()
            .map(|(name, value)| {
                let value = match name.as_str() {
                    "referer" => format!("{origin}{page}"),
                    "origin" => origin.to_string(),
                    "accept-encoding" => coding.unwrap_or(value).to_string(),
                    _ => value.clone(),
                };
                (name.clone(), value)
            })
            .collect()
    }
}

/// The test page and what it loads.
const PAGE: &str = "<!doctype html><html><head><meta charset=utf-8><title>capture</title>\
<link rel=stylesheet href=/style.css><script src=/app.js></script></head>\
<body><p class=f>text in the web font</p><img src=/logo.png alt=logo>\
<script>fetch('/data.json').then(r => r.text()).then(t => { document.title = 'done'; })</script>\
</body></html>";
const STYLE: &str = "@font-face { font-family: f; src: url(/font.woff2) format('woff2'); }\n.f { font-family: f, sans-serif; }\n";
const SCRIPT: &str = "window.captured = true;\n";

/// A 1×1 transparent PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

fn body_of(path: &str) -> (&'static str, &'static [u8]) {
    match path {
        "/" => ("text/html; charset=utf-8", PAGE.as_bytes()),
        "/style.css" => ("text/css", STYLE.as_bytes()),
        "/app.js" => ("text/javascript", SCRIPT.as_bytes()),
        "/logo.png" => ("image/png", PNG),
        // Not a font: the browser asks for it all the same.
        "/font.woff2" => ("font/woff2", b"wOF2"),
        "/data.json" => ("application/json", b"{\"ok\":true}"),
        _ => ("text/plain", b""),
    }
}

/// Captures the headers of `browser` (a headless Chromium binary) and
/// writes them to `out`.
pub fn capture(browser: &Path, out: &Path) -> anyhow::Result<()> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()])?;
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![made.cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(made.key_pair.serialize_der().into()),
        )?;
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let seen: Arc<Seen> = Arc::default();
    {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let config = Arc::clone(&config);
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || {
                    let _ = serve(stream, config, &seen);
                });
            }
        });
    }
    let profile = tempdir()?;
    let version = Command::new(browser)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let status = tachyon_testkit::chromium::headless(browser, &profile)
        .args([
            "--virtual-time-budget=5000",
            // A desktop browser sends its language; headless sends none
            // unless told one.
            "--accept-lang=en-US,en",
            "--dump-dom",
        ])
        .arg(format!("https://127.0.0.1:{port}/"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", browser.display()))?;
    let _ = std::fs::remove_dir_all(&profile);
    if !status.success() {
        bail!("{} exited with {status}", browser.display());
    }
    let origin = format!("https://127.0.0.1:{port}");
    let requests: Vec<Captured> = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("a capture thread panicked"))?
        .iter()
        .filter(|(path, _)| path != "/favicon.ico")
        .map(|(path, fields)| captured(path, fields, &origin))
        .collect();
    for kind in Kind::ALL {
        if !requests.iter().any(|r| r.kind == kind) {
            bail!("the browser made no {kind:?} request; got {requests:?}");
        }
    }
    let set = HeaderSet {
        browser: version,
        captured: httpdate::fmt_http_date(std::time::SystemTime::now()),
        requests,
    };
    std::fs::write(out, serde_json::to_string_pretty(&set)? + "\n")?;
    println!(
        "{}: {} requests of {}",
        out.display(),
        set.requests.len(),
        set.browser
    );
    Ok(())
}

/// One captured request: its kind from `sec-fetch-dest`, the transport's
/// fields left out, the origin taken out of `referer`.
fn captured(path: &str, fields: &[(String, String)], origin: &str) -> Captured {
    let dest = fields
        .iter()
        .find(|(n, _)| n == "sec-fetch-dest")
        .map_or("", |(_, v)| v.as_str());
    let kind = match dest {
        "document" => Kind::Document,
        "style" => Kind::Style,
        "script" => Kind::Script,
        "image" => Kind::Image,
        "font" => Kind::Font,
        _ => Kind::Empty,
    };
    let fields = fields
        .iter()
        .filter(|(n, _)| !matches!(n.as_str(), "host" | "connection"))
        .map(|(n, v)| {
            let v = match n.as_str() {
                "referer" | "origin" => v.strip_prefix(origin).unwrap_or(v).to_string(),
                _ => v.clone(),
            };
            (n.clone(), v)
        })
        .collect();
    Captured {
        kind,
        path: path.to_string(),
        fields,
    }
}

type Seen = Mutex<Vec<(String, Vec<(String, String)>)>>;

/// Answers the requests of one connection, recording each head.
fn serve(
    stream: std::net::TcpStream,
    config: Arc<rustls::ServerConfig>,
    seen: &Seen,
) -> anyhow::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let conn = rustls::ServerConnection::new(config)?;
    let mut tls = rustls::StreamOwned::new(conn, stream);
    loop {
        let mut reader = BufReader::new(&mut tls);
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut fields = Vec::new();
        loop {
            let mut field = String::new();
            reader.read_line(&mut field)?;
            let field = field.trim_end();
            if field.is_empty() {
                break;
            }
            if let Some((name, value)) = field.split_once(':') {
                fields.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        drop(reader);
        let (content_type, body) = body_of(&path);
        let status = if body.is_empty() {
            "404 Not Found"
        } else {
            "200 OK"
        };
        seen.lock()
            .map_err(|_| anyhow::anyhow!("poisoned"))?
            .push((path, fields));
        write!(
            tls,
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\r\n",
            body.len()
        )?;
        tls.write_all(body)?;
        tls.flush()?;
    }
}

fn tempdir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("tachyon-bench-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_set_has_every_kind_and_no_transport_fields() {
        let set = HeaderSet::stored();
        for kind in Kind::ALL {
            let fields = set.fields(kind, "https://127.0.0.1:8443", "/", None);
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            assert!(names.contains(&"user-agent"), "{kind:?}: {names:?}");
            assert!(names.contains(&"accept-encoding"), "{kind:?}");
            assert!(!names.contains(&"host") && !names.contains(&"connection"));
        }
        let script = set.fields(
            Kind::Script,
            "https://127.0.0.1:1",
            "/page.html",
            Some("identity"),
        );
        assert!(script.contains(&("accept-encoding".into(), "identity".into())));
        assert!(script.contains(&("referer".into(), "https://127.0.0.1:1/page.html".into())));
        let font = set.fields(Kind::Font, "https://127.0.0.1:1", "/page.html", None);
        assert!(font.contains(&("origin".into(), "https://127.0.0.1:1".into())));
    }
}
