//! TestSite features: header rules, CORS, redirects, clean URLs, SPA fallback,
//! custom 404 pages, directory listings, and their config errors.

use crate::support::{run_tachyon, Server, TestSite};

fn config(site: &TestSite, toml: &str) -> String {
    site.file("tachyon.toml", toml);
    site.path("tachyon.toml").to_str().unwrap().to_string()
}

#[test]
fn header_rules_set_cache_control_and_headers_per_glob() {
    let site = TestSite::new();
    site.file("www/app.js", "x")
        .file("www/fonts/a.woff2", "f")
        .file("www/index.html", "home");
    let conf = config(
        &site,
        r#"
[[headers]]
glob = "*.js"
cache_control = "public, max-age=60"
set = { "X-Frame-Options" = "DENY" }

[[headers]]
glob = "fonts/**"
set = { "Access-Control-Allow-Origin" = "https://example.com" }
"#,
    );
    let server = Server::start(&site.path("www"), &["--config", &conf]);
    let mut c = server.connect();
    let js = c.get("/app.js", "");
    assert_eq!(js.header("cache-control"), Some("public, max-age=60"));
    assert_eq!(js.header("x-frame-options"), Some("DENY"));
    let font = c.get("/fonts/a.woff2", "");
    assert_eq!(
        font.header("access-control-allow-origin"),
        Some("https://example.com")
    );
    assert_eq!(font.header("x-frame-options"), None);
    let html = c.get("/", "");
    assert_eq!(
        html.header("cache-control"),
        Some("no-cache"),
        "default kept"
    );
    // Rules apply to 304s too: they are part of the validator fields.
    let tag = js.header("etag").unwrap().to_string();
    let r = c.get("/app.js", &format!("If-None-Match: {tag}\r\n"));
    assert_eq!((r.status, r.header("x-frame-options")), (304, Some("DENY")));
}

#[test]
fn default_cache_control_marks_fingerprinted_assets_immutable() {
    let site = TestSite::new();
    site.file("app.3f9a1c2b.js", "x").file("logo.png", "p");
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    assert_eq!(
        c.get("/app.3f9a1c2b.js", "").header("cache-control"),
        Some("max-age=31536000, immutable")
    );
    assert_eq!(
        c.get("/logo.png", "").header("cache-control"),
        Some("max-age=3600")
    );
}

#[test]
fn cors_option_adds_the_origin_header_everywhere() {
    let site = TestSite::new();
    site.file("data.json", "{}");
    let server = Server::start(&site.root, &["--cors", "*"]);
    let r = server.connect().get("/data.json", "");
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn redirect_rules_choose_status_and_keep_the_query() {
    let site = TestSite::new();
    site.file("www/new.html", "new").file("www/old", "shadowed");
    let conf = config(
        &site,
        r#"
[[redirects]]
from = "/old"
to = "/new.html"
status = 302

[[redirects]]
from = "/gone"
to = "https://example.com/?from=tachyon"
status = 308
"#,
    );
    let server = Server::start(&site.path("www"), &["--config", &conf]);
    let mut c = server.connect();
    let r = c.get("/old?a=1", "");
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("/new.html?a=1"));
    let r = c.get("/gone?x=2", "");
    assert_eq!(r.status, 308);
    assert_eq!(
        r.header("location"),
        Some("https://example.com/?from=tachyon"),
        "a target with its own query keeps it"
    );
}

#[test]
fn clean_urls_fallback_and_custom_404() {
    let site = TestSite::new();
    site.file("about.html", "about")
        .file("index.html", "app shell")
        .file("404.html", "<h1>lost</h1>")
        .file("docs/index.html", "docs");
    {
        let server = Server::start(
            &site.root,
            &["--clean-urls", "--not-found-page", "/404.html"],
        );
        let mut c = server.connect();
        assert_eq!(c.get("/about", "").text(), "about");
        assert_eq!(
            c.get("/docs", "").status,
            301,
            "directories win over clean URLs"
        );
        let r = c.get("/missing", "");
        assert_eq!((r.status, r.text().as_str()), (404, "<h1>lost</h1>"));
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    }
    let server = Server::start(&site.root, &["--fallback", "/index.html"]);
    let mut c = server.connect();
    let r = c.get("/app/route/42", "");
    assert_eq!((r.status, r.text().as_str()), (200, "app shell"));
    assert_eq!(c.get("/about.html", "").text(), "about", "real files first");
}

#[test]
fn a_missing_fallback_file_is_a_clear_startup_error() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let root = site.root.to_str().unwrap();
    let out = run_tachyon([root, "--listen", "127.0.0.1:0", "--fallback", "/index.html"]);
    assert_ne!(out.code, Some(0));
    let err = out.stderr;
    assert!(
        err.contains("fallback") && err.contains("/index.html"),
        "{err}"
    );
}

#[test]
fn listings_are_off_by_default_and_escape_names_when_on() {
    let site = TestSite::new();
    site.file("files/<script>.txt", "x")
        .file("files/b c.txt", "yy")
        .file("files/sub/d.txt", "d")
        .file("files/.secret", "hidden");
    {
        let server = Server::start(&site.root, &[]);
        assert_eq!(server.connect().get("/files/", "").status, 404);
    }
    let server = Server::start(&site.root, &["--listing"]);
    let mut c = server.connect();
    let page = c.get("/files/", "");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    assert!(html.contains("&lt;script&gt;.txt") && !html.contains("<script>.txt"));
    assert!(html.contains("href=\"./b%20c.txt\""));
    assert!(html.contains("href=\"./sub/\""));
    assert!(!html.contains(".secret"), "hidden files are not listed");
    let json = c.get("/files/", "Accept: application/json\r\n");
    assert_eq!(json.header("content-type"), Some("application/json"));
    let items: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    let names: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sub", "<script>.txt", "b c.txt"]);
    assert_eq!(items[2]["size"], 2);
}

#[test]
fn bad_rules_are_config_errors_that_name_the_rule() {
    let site = TestSite::new();
    let cases = [
        ("[[headers]]\nglob = \"a[\"\n", "headers[0]"),
        (
            "[[headers]]\nglob = \"*\"\nset = { \"Content-Length\" = \"1\" }\n",
            "Content-Length",
        ),
        (
            "[[redirects]]\nfrom = \"/a\"\nto = \"/b\"\nstatus = 200\n",
            "redirects[0]",
        ),
        ("[compression]\ncodings = [\"lzma\"]\n", "lzma"),
        ("[compression]\nlevel = 3\n", "level"),
    ];
    for (toml, expected) in cases {
        let conf = config(&site, toml);
        let out = run_tachyon(["--config", &conf, "--print-config"]);
        assert_ne!(out.code, Some(0), "{toml}");
        let err = out.stderr;
        assert!(err.contains(expected), "{toml}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Debian's python3-doc, like every Sphinx documentation package, links
/// `_static/jquery.js` and `underscore.js` into /usr/share/javascript:
/// served by default (symlinks are followed), its pages run without a
/// console error in Chromium, over HTTP/1.1 and over HTTP/2, and the
/// linked scripts go out over each (the access log says which).
#[test]
fn python_docs_run_in_chromium_over_http1_and_http2() {
    const DOCS: &str = "/usr/share/doc/python3/html";
    assert!(
        std::path::Path::new(DOCS)
            .join("_static/jquery.js")
            .exists(),
        "python3-doc is required: apt-get install python3-doc (scripts/test.sh does)"
    );
    let site = TestSite::new();
    let log = site.path("access.log");
    let server = Server::start(
        std::path::Path::new(DOCS),
        &[
            "--https",
            "127.0.0.1:0",
            "--tls-self-signed",
            "--cache-dir",
            "off",
            "--no-compress",
            "--access-log",
            log.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    let https = crate::tls::https_addr(&server);
    let page = "/library/functions.html";
    for (url, proto) in [
        (
            format!("http://127.0.0.1:{}{page}", server.addr.port()),
            "HTTP/1.1",
        ),
        (
            format!("https://127.0.0.1:{}{page}", https.port()),
            "HTTP/2.0",
        ),
    ] {
        let profile = site.path(&format!("chromium-{}", proto.replace('/', "")));
        let out = tachyon_testkit::chromium::headless(&crate::screenshot::chromium(), &profile)
            .args([
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=5000",
                "--dump-dom",
            ])
            .arg(&url)
            .output()
            .expect("run chromium");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(
            console.is_empty(),
            "{url}: console messages:\n{}",
            console.join("\n")
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Built-in Functions"),
            "{url}"
        );
        // The log is written once a second.
        let served = |l: &&str| l.contains("/_static/jquery.js") && l.contains(proto);
        let logged = crate::support::eventually(std::time::Duration::from_secs(5), || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .any(|l| served(&l))
        });
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(logged, "{url}: no jquery.js over {proto} in\n{text}");
        let jquery = text.lines().find(served).unwrap();
        assert!(jquery.contains("\"status\":200"), "{jquery}");
    }
}
