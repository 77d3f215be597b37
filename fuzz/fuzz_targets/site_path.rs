//! Differential: `site_path` against a slow reference written straight from
//! RFC 3986 §5.2.4 (decode, split, resolve with a stack). Both must accept
//! and reject the same targets and agree on the path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::target::site_path;

/// The reference: origin-form or absolute-form (with a non-empty host),
/// query and fragment cut,
/// percent-decoded (a bad escape or NUL is a rejection), segments resolved,
/// `..` above the root rejected, empty segments dropped, a trailing slash
/// kept when the last segment was empty, `.` or `..`.
fn reference(raw: &[u8]) -> Option<Vec<u8>> {
    let lower: Vec<u8> = raw.iter().map(u8::to_ascii_lowercase).collect();
    let path = if lower.starts_with(b"http://") || lower.starts_with(b"https://") {
        let skip = if lower.starts_with(b"http://") { 7 } else { 8 };
        let rest = &raw[skip..];
        let end = rest
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#'))
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        let host = match authority.iter().rposition(|&b| b == b'@') {
            Some(at) => &authority[at + 1..],
            None => authority,
        };
        if host.is_empty() {
            return None;
        }
        if rest.get(end) == Some(&b'/') {
            &rest[end..]
        } else {
            &b"/"[..]
        }
    } else {
        raw
    };
    let path = match path.iter().position(|&b| b == b'?' || b == b'#') {
        Some(i) => &path[..i],
        None => path,
    };
    if path.first() != Some(&b'/') {
        return None;
    }
    let mut decoded = Vec::new();
    let mut i = 0;
    while i < path.len() {
        if path[i] == b'%' {
            let hex = std::str::from_utf8(path.get(i + 1..i + 3)?).ok()?;
            let b = u8::from_str_radix(hex, 16).ok()?;
            if b == 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            decoded.push(b);
            i += 3;
        } else {
            decoded.push(path[i]);
            i += 1;
        }
    }
    let segments: Vec<&[u8]> = decoded.split(|&b| b == b'/').collect();
    let mut stack: Vec<&[u8]> = Vec::new();
    for s in &segments {
        match *s {
            b"" | b"." => {}
            b".." => {
                stack.pop()?;
            }
            name => stack.push(name),
        }
    }
    let last = *segments.last().unwrap();
    let mut out = b"/".to_vec();
    out.extend_from_slice(&stack.join(&b'/'));
    if !stack.is_empty() && matches!(last, b"" | b"." | b"..") {
        out.push(b'/');
    }
    Some(out)
}

fuzz_target!(|raw: &[u8]| {
    let mut scratch = Vec::new();
    let ours = site_path(raw, &mut scratch).ok().map(<[u8]>::to_vec);
    let theirs = reference(raw);
    assert_eq!(ours, theirs, "target {:?}", String::from_utf8_lossy(raw));
});
