//! Real traffic: what the real-site cells send. Every request carries the
//! header fields Chromium sends (`browser`), to paths drawn from the
//! site's own file list, or to one page and the resources it loads, with
//! the browser's `Accept-Encoding` or with `identity`.
//!
//! The client is h2load for every protocol (`--h1` for HTTP/1.1, one
//! request at a time per connection), so HTTP/1.1 and HTTP/2 are measured
//! with the same client and the same requests. h2load sends one set of
//! fields with every path: Chromium's for a script, its most common
//! subresource (a document's differs in `accept` and three `sec-fetch`
//! fields, none of which a static server reads).
//!
//! Owns: the per-server input files and header arguments, and the check
//! that every server answers every path of a list with 2xx (and, with
//! `identity`, with exactly the files' bytes) before it is measured.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use crate::browser::{HeaderSet, Kind};
use crate::realsite::{self, RealSite};

/// About how many requests a first run sends (see [`Traffic::requests`]):
/// half a minute for a peer compressing every response at gzip level 6,
/// a fraction of a second for tachyon, whose run is then measured again
/// with as many more passes as it takes to last the cell's duration
/// (`runner::measure`).
const REQUESTS: u64 = 30_000;

/// What a real-site cell sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    pub site: RealSite,
    /// The twin with `.gz`/`.br`/`.zst` siblings.
    pub precompressed: bool,
    /// One page and its resources, in order, on every connection; else
    /// every file of the site.
    pub page: bool,
    /// `accept-encoding: identity` instead of the browser's own.
    pub identity: bool,
}

impl Traffic {
    /// `docs-pre page browser`, for labels.
    pub fn describe(self) -> String {
        format!(
            "{} {} {}",
            self.site.dir(self.precompressed),
            if self.page { "page" } else { "paths" },
            if self.identity { "identity" } else { "browser" }
        )
    }

    /// The page whose URL is the referer of every request.
    fn referer(self) -> String {
        let page = match self.site {
            RealSite::Docs => "index.html",
            RealSite::App => "index.html",
        };
        format!("/{}/{page}", self.site.dir(self.precompressed))
    }

    /// The URL paths this traffic requests, in order, and their total
    /// size on disk.
    pub fn paths(self, www: &Path) -> anyhow::Result<(Vec<String>, u64)> {
        let files = realsite::files(www, self.site, self.precompressed)?;
        Ok(match self.page {
            true => (files.page, files.page_bytes),
            false => (files.paths, files.paths_bytes),
        })
    }

    /// How many requests a run of `conns` connections sends: whole passes
    /// of every connection over the list (h2load gives each `-n / -c` and
    /// starts each at the list's top), about [`REQUESTS`] in all, so that
    /// every server answers the same requests however fast it is.
    pub fn requests(self, conns: u32, www: &Path) -> anyhow::Result<u64> {
        let (paths, _) = self.paths(www)?;
        let pass = u64::from(conns) * paths.len() as u64;
        Ok(pass * (REQUESTS / pass).max(1))
    }

    /// h2load's arguments for a server at `origin` (`http://127.0.0.1:PORT`):
    /// `-i FILE` (written under `run_dir`) and the browser's fields as `-H`.
    pub fn h2load_args(
        self,
        origin: &str,
        www: &Path,
        run_dir: &Path,
    ) -> anyhow::Result<Vec<String>> {
        let (paths, _) = self.paths(www)?;
        let input = self.input_file(origin, &paths, run_dir)?;
        let mut args = vec!["-i".to_string(), input.display().to_string()];
        let coding = self.identity.then_some("identity");
        for (name, value) in
            HeaderSet::stored().fields(Kind::Script, origin, &self.referer(), coding)
        {
            args.push("-H".into());
            args.push(format!("{name}: {value}"));
        }
        Ok(args)
    }

    /// h2load reads the scheme, host and port from the first URI only.
    fn input_file(self, origin: &str, paths: &[String], run_dir: &Path) -> anyhow::Result<PathBuf> {
        let dir = run_dir.join("traffic");
        std::fs::create_dir_all(&dir)?;
        let port = origin.rsplit(':').next().unwrap_or("0");
        let name = format!("{}-{port}.txt", self.describe().replace(' ', "-"));
        let path = dir.join(name);
        let mut text = String::new();
        for (i, p) in paths.iter().enumerate() {
            if i == 0 {
                text.push_str(origin);
            }
            text.push_str(p);
            text.push('\n');
        }
        std::fs::write(&path, text)?;
        Ok(path)
    }

    /// Requests every path once, one at a time, over HTTP/2 when `h2`:
    /// every answer must be 2xx, and with `identity` the bodies must add up
    /// to the files' sizes. Returns what is wrong, if anything.
    pub fn check(
        self,
        origin: &str,
        h2: bool,
        www: &Path,
        run_dir: &Path,
    ) -> anyhow::Result<Vec<String>> {
        let (paths, bytes) = self.paths(www)?;
        let mut argv = vec!["h2load".to_string()];
        if !h2 {
            argv.push("--h1".into());
        }
        argv.extend(["-c1", "-m1", "-t1"].map(String::from));
        argv.push(format!("-n{}", paths.len()));
        argv.extend(self.h2load_args(origin, www, run_dir)?);
        let text = crate::clients::run(&argv, Duration::from_secs(120), None, &mut || {})
            .context("checking the paths with h2load")?;
        let mut problems = Vec::new();
        let report = crate::clients::parse_h2load(&text)?;
        if report.requests != paths.len() as u64 || report.non_2xx_3xx > 0 {
            problems.push(format!(
                "check: {} of {} paths answered 2xx/3xx ({} 4xx/5xx)",
                report.requests,
                paths.len(),
                report.non_2xx_3xx
            ));
        }
        let data = data_bytes(&text)?;
        if self.identity && data != bytes {
            problems.push(format!(
                "check: {data} body bytes for {} files of {bytes} bytes",
                paths.len()
            ));
        }
        if !self.identity && data >= bytes {
            problems.push(format!(
                "check: nothing was compressed ({data} body bytes for {bytes} bytes of files)"
            ));
        }
        Ok(problems)
    }
}

/// The body bytes h2load counted: `traffic: … total, … headers …, X (N) data`.
fn data_bytes(text: &str) -> anyhow::Result<u64> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("traffic: "))
        .context("h2load printed no traffic line")?;
    let data = line
        .rsplit(", ")
        .next()
        .filter(|part| part.ends_with(" data"))
        .and_then(|part| part.split(['(', ')']).nth(1))
        .and_then(|n| n.parse().ok());
    match data {
        Some(n) => Ok(n),
        None => bail!("h2load traffic line without data bytes: {line}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_bytes_come_from_the_traffic_line() {
        let text = "traffic: 1.95MB (2041200) total, 63.48KB (65000) headers (space savings 90.14%), 1.88MB (1966080) data\n";
        assert_eq!(data_bytes(text).unwrap(), 1_966_080);
        assert!(data_bytes("nothing").is_err());
    }

    #[test]
    fn the_input_names_the_server_on_its_first_line_only() {
        let dir = tachyon_testkit::Scratch::new("traffic");
        let traffic = Traffic {
            site: RealSite::App,
            precompressed: false,
            page: true,
            identity: false,
        };
        let paths = vec!["/app/index.html".to_string(), "/app/a.js".to_string()];
        let file = traffic
            .input_file("https://127.0.0.1:8443", &paths, dir.path())
            .unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, "https://127.0.0.1:8443/app/index.html\n/app/a.js\n");
    }
}
