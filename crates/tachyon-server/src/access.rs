//! The access log: one line per answered request, in nginx's `combined`
//! format or as one JSON object per line with the field names Caddy's
//! access log uses, so the tools people already point at either read it.
//!
//! Each worker formats lines into its own buffer ([`AccessLog`]) and hands
//! a full buffer (or, once a second and at exit, whatever it holds) to one
//! writer thread over a channel; the event loop never waits on the disk.
//! The writer appends whole buffers, so lines never interleave, and reopens
//! the file when asked (SIGUSR1, for logrotate) between two buffers, so no
//! line is lost or cut. The channel is unbounded: a disk slower than the
//! traffic grows memory rather than dropping lines or stalling workers.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tachyon_http::{RequestHead, Version};

use crate::reply::Summary;
use crate::session::TlsFacts;

/// A worker hands its buffer over once it holds this much.
const FLUSH_AT: usize = 64 * 1024;

/// The line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// nginx's `combined`: `$remote_addr - $remote_user [$time_local]
    /// "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`.
    Combined,
    /// One JSON object per line (Caddy's `http.log.access` fields).
    Json,
}

/// Where the log goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdout,
    File(PathBuf),
}

/// What a line says about the connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Client<'a> {
    pub addr: Option<SocketAddr>,
    pub tls: Option<TlsFacts<'a>>,
}

/// The writer thread and the way to reach it.
pub struct LogWriter {
    sink: Sender<Vec<u8>>,
    reopen: Arc<AtomicBool>,
    thread: JoinHandle<()>,
    format: Format,
}

impl LogWriter {
    /// Opens the log (a file is created if missing and appended to) and
    /// starts the thread that writes it. An error names the file.
    pub fn start(target: Target, format: Format) -> io::Result<LogWriter> {
        let out = Output::open(&target)?;
        let (sink, lines) = mpsc::channel();
        let reopen = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&reopen);
        let thread = std::thread::Builder::new()
            .name("tachyon-log".into())
            .spawn(move || write_lines(out, target, lines, &flag))?;
        Ok(LogWriter {
            sink,
            reopen,
            thread,
            format,
        })
    }

    /// Where workers send their lines.
    pub fn sink(&self) -> LogSink {
        LogSink {
            sink: self.sink.clone(),
            format: self.format,
        }
    }

    /// A handle that asks the writer to reopen the file.
    pub fn reopener(&self) -> Reopen {
        Reopen {
            flag: Arc::clone(&self.reopen),
            wake: self.sink.clone(),
        }
    }

    /// Waits until every line handed over is written. Call once the
    /// workers (and every [`LogSink`] and [`Reopen`]) are gone: their
    /// senders keep the writer alive.
    pub fn finish(self) {
        drop(self.sink);
        let _ = self.thread.join();
    }
}

/// The way to the writer, one [`AccessLog`] per worker.
#[derive(Clone)]
pub struct LogSink {
    sink: Sender<Vec<u8>>,
    format: Format,
}

impl LogSink {
    /// A worker's end of the log.
    pub fn for_worker(&self) -> AccessLog {
        AccessLog {
            format: self.format,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            sink: self.sink.clone(),
            clock: LogClock::default(),
            ip: IpText::default(),
        }
    }
}

/// Asks the writer to reopen its file (logrotate's `postrotate`).
#[derive(Clone)]
pub struct Reopen {
    flag: Arc<AtomicBool>,
    wake: Sender<Vec<u8>>,
}

impl Reopen {
    pub fn reopen(&self) {
        self.flag.store(true, Ordering::Release);
        // An empty buffer wakes the writer, so the old file is closed now,
        // not at the next request.
        let _ = self.wake.send(Vec::new());
    }
}

enum Output {
    Stdout(io::Stdout),
    File(File),
}

impl Output {
    fn open(target: &Target) -> io::Result<Output> {
        Ok(match target {
            Target::Stdout => Output::Stdout(io::stdout()),
            Target::File(path) => Output::File(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| {
                        io::Error::new(e.kind(), format!("access log {}: {e}", path.display()))
                    })?,
            ),
        })
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(out) => {
                let mut out = out.lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Output::File(file) => file.write_all(bytes),
        }
    }
}

/// The writer thread: appends each buffer whole; reopens when asked.
fn write_lines(mut out: Output, target: Target, lines: Receiver<Vec<u8>>, reopen: &AtomicBool) {
    let mut warned = false;
    for buf in lines {
        if reopen.swap(false, Ordering::AcqRel) {
            match Output::open(&target) {
                Ok(fresh) => out = fresh,
                Err(e) => eprintln!("tachyon: reopening the log: {e}; still writing the old file"),
            }
        }
        if let Err(e) = out.write_all(&buf) {
            if !warned {
                eprintln!("tachyon: writing the access log: {e}");
                warned = true;
            }
        }
    }
}

/// The time fields of a line, formatted at most once a second.
#[derive(Default)]
struct LogClock {
    second: u64,
    /// `24/Nov/2026:17:40:01 +0000` (nginx's `$time_local`, in UTC).
    local: [u8; 26],
}

impl LogClock {
    fn refresh(&mut self, now: SystemTime) -> Duration {
        let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        if since.as_secs() != self.second || self.local[0] == 0 {
            self.second = since.as_secs();
            // "Tue, 24 Nov 2026 17:40:01 GMT" -> "24/Nov/2026:17:40:01 +0000"
            let http = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(self.second));
            let b = http.as_bytes();
            if b.len() == 29 {
                let mut local = [0u8; 26];
                local[..2].copy_from_slice(&b[5..7]);
                local[2] = b'/';
                local[3..6].copy_from_slice(&b[8..11]);
                local[6] = b'/';
                local[7..11].copy_from_slice(&b[12..16]);
                local[11] = b':';
                local[12..20].copy_from_slice(&b[17..25]);
                local[20..].copy_from_slice(b" +0000");
                self.local = local;
            }
        }
        since
    }
}

/// The last client address formatted: most lines repeat the one before
/// (a keep-alive connection, a proxy in front), and formatting an address
/// costs more than the rest of a combined line.
#[derive(Default)]
struct IpText {
    ip: Option<IpAddr>,
    text: Vec<u8>,
}

impl IpText {
    fn of(&mut self, ip: IpAddr) -> &[u8] {
        if self.ip != Some(ip) {
            self.text.clear();
            let _ = write!(self.text, "{ip}");
            self.ip = Some(ip);
        }
        &self.text
    }
}

/// A worker's log buffer.
pub struct AccessLog {
    format: Format,
    buf: Vec<u8>,
    sink: Sender<Vec<u8>>,
    clock: LogClock,
    ip: IpText,
}

impl AccessLog {
    /// Whether lines carry a duration (so requests must be timed).
    pub fn needs_duration(&self) -> bool {
        self.format == Format::Json
    }

    /// Formats the line for one answered request.
    pub fn request(
        &mut self,
        head: &RequestHead<'_>,
        summary: &Summary,
        client: &Client<'_>,
        elapsed: Option<Duration>,
    ) {
        let line = Line {
            method: head.raw_method,
            target: head.raw_target,
            version: Some(head.version),
            host: head.host,
            referer: head.referer,
            user_agent: head.user_agent,
        };
        self.line(&line, summary, client, elapsed);
    }

    /// Formats the line for a request that could not be parsed: its first
    /// line as sent stands for the request (nginx does the same).
    pub fn rejected(&mut self, first: &[u8], summary: &Summary, client: &Client<'_>) {
        let line = Line {
            method: b"",
            target: first,
            version: None,
            host: None,
            referer: None,
            user_agent: None,
        };
        self.line(&line, summary, client, None);
    }

    fn line(
        &mut self,
        line: &Line<'_>,
        summary: &Summary,
        client: &Client<'_>,
        elapsed: Option<Duration>,
    ) {
        match self.format {
            Format::Combined => {
                // The second is all a combined line shows: the coarse clock
                // (the last tick's time, no hardware read) is enough.
                let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
                let now =
                    UNIX_EPOCH + Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.max(0) as u32);
                self.clock.refresh(now);
                let ip = client.addr.map(|a| self.ip.of(a.ip()));
                combined(&mut self.buf, &self.clock.local, ip, line, summary);
            }
            Format::Json => {
                let since = self.clock.refresh(SystemTime::now());
                json(&mut self.buf, since, line, summary, client, elapsed)
            }
        }
    }

    /// Hands the buffer over once it is full.
    pub fn flush_if_full(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Hands whatever the buffer holds to the writer.
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(FLUSH_AT + 4096));
            // The writer only stops once every worker's sender is gone.
            let _ = self.sink.send(full);
        }
    }
}

impl Drop for AccessLog {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The request's side of a line.
struct Line<'a> {
    /// Empty for a request that could not be parsed (then `target` is the
    /// first line as sent).
    method: &'a [u8],
    target: &'a [u8],
    version: Option<Version>,
    host: Option<&'a [u8]>,
    referer: Option<&'a [u8]>,
    user_agent: Option<&'a [u8]>,
}

fn version_text(version: Version) -> &'static str {
    match version {
        Version::Http10 => "HTTP/1.0",
        Version::Http11 => "HTTP/1.1",
        Version::Http2 => "HTTP/2.0",
        Version::Http3 => "HTTP/3.0",
    }
}

fn combined(
    out: &mut Vec<u8>,
    time: &[u8; 26],
    ip: Option<&[u8]>,
    line: &Line<'_>,
    summary: &Summary,
) {
    out.extend_from_slice(ip.unwrap_or(b"-"));
    out.extend_from_slice(b" - - [");
    out.extend_from_slice(time);
    out.extend_from_slice(b"] \"");
    if let Some(version) = line.version {
        escape_nginx(out, line.method);
        out.push(b' ');
        escape_nginx(out, line.target);
        out.push(b' ');
        out.extend_from_slice(version_text(version).as_bytes());
    } else {
        escape_nginx(out, line.target);
    }
    out.extend_from_slice(b"\" ");
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(digits.format(summary.status.code()).as_bytes());
    out.push(b' ');
    out.extend_from_slice(digits.format(summary.body).as_bytes());
    for field in [line.referer, line.user_agent] {
        out.extend_from_slice(b" \"");
        match field {
            Some(value) => escape_nginx(out, value),
            None => out.push(b'-'),
        }
        out.push(b'"');
    }
    out.push(b'\n');
}

/// nginx's escaping of logged variables: `"`, `\`, control bytes and
/// bytes above 0x7e become `\xHH`.
fn escape_nginx(out: &mut Vec<u8>, value: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let plain = |b: &u8| *b != b'"' && *b != b'\\' && (0x20..0x7f).contains(b);
    if value.iter().all(plain) {
        out.extend_from_slice(value);
        return;
    }
    for &b in value {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
    }
}

fn json(
    out: &mut Vec<u8>,
    since: Duration,
    line: &Line<'_>,
    summary: &Summary,
    client: &Client<'_>,
    elapsed: Option<Duration>,
) {
    let _ = write!(
        out,
        "{{\"ts\":{}.{:06},\"logger\":\"http.log.access\",\"msg\":\"handled request\",\"request\":{{",
        since.as_secs(),
        since.subsec_micros()
    );
    match client.addr {
        Some(addr) => {
            let _ = write!(
                out,
                "\"remote_ip\":\"{}\",\"remote_port\":\"{}\",",
                addr.ip(),
                addr.port()
            );
        }
        None => out.extend_from_slice(b"\"remote_ip\":\"\",\"remote_port\":\"\","),
    }
    out.extend_from_slice(b"\"proto\":\"");
    out.extend_from_slice(line.version.map_or("", version_text).as_bytes());
    out.extend_from_slice(b"\",\"method\":");
    json_string(out, line.method);
    out.extend_from_slice(b",\"host\":");
    json_string(out, line.host.unwrap_or_default());
    out.extend_from_slice(if line.version.is_some() {
        b",\"uri\":"
    } else {
        b",\"line\":"
    });
    json_string(out, line.target);
    out.extend_from_slice(b",\"headers\":{");
    let mut first = true;
    for (name, value) in [("User-Agent", line.user_agent), ("Referer", line.referer)] {
        if let Some(value) = value {
            if !first {
                out.push(b',');
            }
            first = false;
            let _ = write!(out, "\"{name}\":[");
            json_string(out, value);
            out.push(b']');
        }
    }
    out.push(b'}');
    if let Some(tls) = client.tls {
        let _ = write!(out, ",\"tls\":{{\"version\":{}", tls.version);
        if let Some(alpn) = tls.alpn {
            out.extend_from_slice(b",\"proto\":");
            json_string(out, alpn);
        }
        out.push(b'}');
    }
    let duration = elapsed.unwrap_or_default();
    let _ = write!(
        out,
        "}},\"duration\":{:.9},\"size\":{},\"status\":{}",
        duration.as_secs_f64(),
        summary.body,
        summary.status.code()
    );
    out.extend_from_slice(b",\"resp_headers\":{");
    if let Some(coding) = summary.coding {
        let _ = write!(out, "\"Content-Encoding\":[\"{}\"]", coding.token());
    }
    out.extend_from_slice(b"}}\n");
}

/// A JSON string: bytes that are not UTF-8 become U+FFFD; quotes,
/// backslashes and control characters are escaped (RFC 8259 §7). Written
/// here rather than through serde_json because it runs once per field of
/// every logged request, into the worker's buffer, with no value built.
fn json_string(out: &mut Vec<u8>, value: &[u8]) {
    out.push(b'"');
    for c in String::from_utf8_lossy(value).chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_http::Status;

    fn summary() -> Summary {
        Summary {
            status: Status::Ok,
            body: 12,
            coding: None,
            saved: 0,
        }
    }

    #[test]
    fn time_local_is_nginx_s_layout() {
        let mut clock = LogClock::default();
        // 2026-11-24 17:40:01 UTC
        clock.refresh(UNIX_EPOCH + Duration::from_secs(1_795_542_001));
        assert_eq!(&clock.local, b"24/Nov/2026:17:40:01 +0000");
    }

    #[test]
    fn combined_escapes_like_nginx() {
        let mut out = Vec::new();
        let line = Line {
            method: b"GET",
            target: b"/a\"b",
            version: Some(Version::Http11),
            host: None,
            referer: None,
            user_agent: Some(b"ua\\1\x01\xff"),
        };
        combined(
            &mut out,
            b"24/Nov/2026:17:40:01 +0000",
            Some(b"127.0.0.1"),
            &line,
            &summary(),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "127.0.0.1 - - [24/Nov/2026:17:40:01 +0000] \"GET /a\\x22b HTTP/1.1\" 200 12 \"-\" \"ua\\x5C1\\x01\\xFF\"\n"
        );
    }

    #[test]
    fn json_strings_are_escaped_and_valid_utf8() {
        let mut out = Vec::new();
        json_string(&mut out, b"a\"\\\x01\xff");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"\\\\\\u0001\u{fffd}\""
        );
    }
}
