//! Range requests (RFC 9110 §14).

use crate::support::{Server, TestSite};

fn digits() -> TestSite {
    let site = TestSite::new();
    site.file("d.txt", "0123456789");
    site
}

#[test]
fn single_and_suffix_ranges_give_206_with_content_range() {
    let site = digits();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    for (range, body, content_range) in [
        ("bytes=2-5", "2345", "bytes 2-5/10"),
        ("bytes=7-", "789", "bytes 7-9/10"),
        ("bytes=-3", "789", "bytes 7-9/10"),
        ("bytes=8-100", "89", "bytes 8-9/10"),
    ] {
        let r = c.get("/d.txt", &format!("Range: {range}\r\n"));
        assert_eq!(r.status, 206, "{range}");
        assert_eq!(r.text(), body, "{range}");
        assert_eq!(r.header("content-range"), Some(content_range), "{range}");
    }
}

#[test]
fn unsatisfiable_ranges_give_416_with_the_length() {
    let site = digits();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let r = c.get("/d.txt", "Range: bytes=10-\r\n");
    assert_eq!(r.status, 416);
    assert_eq!(r.header("content-range"), Some("bytes */10"));
    assert_eq!(
        c.get("/d.txt", "Range: lines=1-2\r\n").status,
        200,
        "unknown unit ignored"
    );
}

#[test]
fn if_range_with_a_stale_validator_sends_the_whole_file() {
    let site = digits();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let etag = c.get("/d.txt", "").header("etag").unwrap().to_string();
    assert_eq!(
        c.get(
            "/d.txt",
            &format!("Range: bytes=0-0\r\nIf-Range: {etag}\r\n")
        )
        .status,
        206
    );
    let r = c.get("/d.txt", "Range: bytes=0-0\r\nIf-Range: \"stale\"\r\n");
    assert_eq!((r.status, r.text().as_str()), (200, "0123456789"));
}

#[test]
fn several_ranges_give_a_multipart_body_that_parses_back() {
    let site = digits();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let r = c.get("/d.txt", "Range: bytes=0-1, 5-6, 6-7\r\n");
    assert_eq!(r.status, 206);
    let ctype = r.header("content-type").unwrap();
    let boundary = ctype
        .strip_prefix("multipart/byteranges; boundary=")
        .expect("multipart type");
    let body = r.text();
    assert_eq!(
        body.len(),
        r.header("content-length")
            .unwrap()
            .parse::<usize>()
            .unwrap()
    );
    let parts: Vec<(String, String)> = body
        .split(&format!("--{boundary}"))
        .filter(|p| p.contains("Content-Range"))
        .map(|p| {
            let (head, data) = p.split_once("\r\n\r\n").unwrap();
            let range = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Range: "))
                .unwrap()
                .to_string();
            (range, data.trim_end_matches("\r\n").to_string())
        })
        .collect();
    assert_eq!(
        parts,
        [
            ("bytes 0-1/10".to_string(), "01".to_string()),
            ("bytes 5-7/10".to_string(), "567".to_string())
        ],
        "overlapping 5-6 and 6-7 coalesced"
    );
    assert!(body.ends_with(&format!("--{boundary}--\r\n")));
}

#[test]
fn ranges_of_disk_served_files() {
    let site = TestSite::new();
    let big: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    site.file("big.bin", &big);
    let server = Server::start(&site.root, &["--max-file-in-memory", "1MiB"]);
    let mut c = server.connect();
    let r = c.get("/big.bin", "Range: bytes=2000000-2000099\r\n");
    assert_eq!(r.status, 206);
    assert!(r.body == big[2_000_000..2_000_100]);
}
