//! Real clients: ureq (Rust), curl, ApacheBench.

use std::io::Read;

use crate::support::{run, Server, TestSite};

fn site() -> TestSite {
    let site = TestSite::new();
    site.file("index.html", "<p>hi</p>")
        .file("data.bin", vec![42u8; 100_000]);
    site
}

#[test]
fn ureq_fetches_files() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut response = ureq::get(&server.url("/data.bin")).call().expect("GET");
    assert_eq!(response.status(), 200);
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .read_to_end(&mut body)
        .unwrap();
    assert_eq!(body, vec![42u8; 100_000]);
}

#[test]
fn curl_follows_redirects_and_resumes_downloads() {
    let site = site();
    site.file("dir/index.html", "in dir");
    let server = Server::start(&site.root, &[]);
    let (ok, out, err) = run("curl", &["-sSfL", &server.url("/dir")]);
    assert!(ok, "{err}");
    assert_eq!(out, "in dir");
    let (ok, out, _) = run("curl", &["-sSf", "-r", "99990-", &server.url("/data.bin")]);
    assert!(ok);
    assert_eq!(out.len(), 10);
    let (ok, out, _) = run(
        "curl",
        &[
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "DELETE",
            &server.url("/"),
        ],
    );
    assert!(ok);
    assert_eq!(out, "405");
}

#[test]
fn ab_keep_alive_works_with_no_failures() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let (ok, out, err) = run(
        "ab",
        &["-k", "-n", "2000", "-c", "8", &server.url("/index.html")],
    );
    assert!(ok, "{err}");
    assert!(out.contains("Failed requests:        0"), "{out}");
    assert!(
        out.contains("Keep-Alive requests:    2000"),
        "HTTP/1.0 keep-alive echo: {out}"
    );
    let (ok, out, _) = run("ab", &["-n", "500", "-c", "8", &server.url("/index.html")]);
    assert!(ok);
    assert!(
        out.contains("Complete requests:      500") && out.contains("Failed requests:        0"),
        "{out}"
    );
}
