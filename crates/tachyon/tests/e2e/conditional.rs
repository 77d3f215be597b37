//! Conditional requests (RFC 9110 §13).

use crate::support::{Server, TestSite};

#[test]
fn if_none_match_lists_star_and_weak_tags_give_304_with_validators() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let first = c.get("/a.txt", "");
    let etag = first.header("etag").unwrap().to_string();
    for (value, what) in [
        (etag.clone(), "exact"),
        (format!("\"zzz\", {etag}"), "in a list"),
        (format!("W/{etag}"), "weak form"),
        ("*".to_string(), "star"),
    ] {
        let r = c.get("/a.txt", &format!("If-None-Match: {value}\r\n"));
        assert_eq!(r.status, 304, "{what}");
        assert_eq!(
            r.header("etag"),
            Some(etag.as_str()),
            "{what}: 304 carries the ETag"
        );
        assert!(r.header("last-modified").is_some(), "{what}");
        assert!(
            r.header("content-length").is_none(),
            "{what}: 304 has no length"
        );
    }
    assert_eq!(c.get("/a.txt", "If-None-Match: \"other\"\r\n").status, 200);
}

#[test]
fn if_modified_since_gives_304_unless_the_file_is_newer() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let lm = c
        .get("/a.txt", "")
        .header("last-modified")
        .unwrap()
        .to_string();
    assert_eq!(
        c.get("/a.txt", &format!("If-Modified-Since: {lm}\r\n"))
            .status,
        304
    );
    let old = "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
    assert_eq!(c.get("/a.txt", old).status, 200);
    let both = format!("If-None-Match: \"x\"\r\nIf-Modified-Since: {lm}\r\n");
    assert_eq!(
        c.get("/a.txt", &both).status,
        200,
        "If-None-Match takes precedence"
    );
}

#[test]
fn if_match_and_if_unmodified_since_fail_with_412() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let etag = c.get("/a.txt", "").header("etag").unwrap().to_string();
    assert_eq!(c.get("/a.txt", "If-Match: \"x\"\r\n").status, 412);
    assert_eq!(
        c.get("/a.txt", &format!("If-Match: {etag}\r\n")).status,
        200
    );
    let old = "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
    assert_eq!(c.get("/a.txt", old).status, 412);
}
