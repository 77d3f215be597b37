//! Request targets: from the bytes on the request line to a site path.
//!
//! A site path is absolute, percent-decoded, free of NUL, `.` and `..`
//! segments and empty segments, and never climbs above `/`. The snapshot is
//! keyed by such paths, so a request can only ever name something the snapshot
//! put there; this module's job is to make the mapping unambiguous, not to be
//! the last line of defence. What it does not do: look anything up.

use crate::error::ParseError;

/// Normalizes a request target into a site path.
///
/// Returns a slice of `raw` when the path is already normal (the common case:
/// no copy), otherwise a slice of `scratch`, which it overwrites.
pub fn site_path<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Result<&'a [u8], ParseError> {
    let path = strip_authority(raw)?;
    let path = match memchr::memchr2(b'?', b'#', path) {
        Some(i) => &path[..i],
        None => path,
    };
    if path.first() != Some(&b'/') {
        return Err(ParseError::BadTarget);
    }
    if is_normal(path) {
        return Ok(path);
    }
    scratch.clear();
    decode_percent(path, scratch)?;
    remove_dot_segments(scratch)?;
    Ok(scratch)
}

/// Accepts absolute-form (`http://host/path`, RFC 9112 §3.2.2) by dropping the
/// scheme and authority; origin-form passes through.
fn strip_authority(raw: &[u8]) -> Result<&[u8], ParseError> {
    Ok(match absolute_form(raw)? {
        Some(form) => form.path,
        None => raw,
    })
}

/// An absolute-form target's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbsoluteForm<'a> {
    /// The authority without userinfo (port included).
    pub host: &'a [u8],
    /// From the first `/` on, or `/` when the target has no path.
    pub path: &'a [u8],
}

/// Splits an `http://` or `https://` target into its host (the authority
/// without userinfo) and its path (`/` when it has none: `http://host?q`
/// names the root); `None` for any other form. An empty host is invalid in
/// an http URI (RFC 9110 §4.2.1).
pub fn absolute_form(raw: &[u8]) -> Result<Option<AbsoluteForm<'_>>, ParseError> {
    let rest = if raw.len() >= 7 && raw[..7].eq_ignore_ascii_case(b"http://") {
        &raw[7..]
    } else if raw.len() >= 8 && raw[..8].eq_ignore_ascii_case(b"https://") {
        &raw[8..]
    } else {
        return Ok(None);
    };
    let end = memchr::memchr3(b'/', b'?', b'#', rest).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = match memchr::memrchr(b'@', authority) {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    if host.is_empty() {
        return Err(ParseError::BadTarget);
    }
    let path = match rest.get(end) {
        Some(b'/') => &rest[end..],
        _ => b"/",
    };
    Ok(Some(AbsoluteForm { host, path }))
}

/// True when no byte sequence needs rewriting: no `%`, no `//`, no `/.`.
fn is_normal(path: &[u8]) -> bool {
    !path.contains(&b'%') && !path.windows(2).any(|w| w == b"//" || w == b"/.")
}

fn decode_percent(path: &[u8], out: &mut Vec<u8>) -> Result<(), ParseError> {
    let mut i = 0;
    while i < path.len() {
        let b = path[i];
        if b == b'%' {
            let hi = path.get(i + 1).and_then(|&h| hex(h));
            let lo = path.get(i + 2).and_then(|&l| hex(l));
            let (Some(hi), Some(lo)) = (hi, lo) else {
                return Err(ParseError::BadTarget);
            };
            let decoded = hi << 4 | lo;
            if decoded == 0 {
                return Err(ParseError::BadTarget);
            }
            out.push(decoded);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    Ok(())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// RFC 3986 §5.2.4 on a decoded path, in place; empty segments are merged
/// (nginx `merge_slashes`), and `..` above the root is an error (nginx: 400).
fn remove_dot_segments(path: &mut Vec<u8>) -> Result<(), ParseError> {
    let input = std::mem::take(path);
    path.push(b'/');
    let segments: Vec<&[u8]> = input.split(|&b| b == b'/').collect();
    let last = segments.len() - 1;
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            b"" | b"." => {}
            b".." => {
                if path.len() == 1 {
                    return Err(ParseError::BadTarget);
                }
                path.pop(); // the trailing '/'
                let cut = path.iter().rposition(|&b| b == b'/').map_or(0, |p| p + 1);
                path.truncate(cut);
            }
            name => {
                path.extend_from_slice(name);
                if i != last {
                    path.push(b'/');
                }
            }
        }
    }
    // `/a/b/..` and `/a/.` name a directory: they end with '/' already.
    if path.len() > 1 && segments[last].is_empty() && path.last() != Some(&b'/') {
        path.push(b'/');
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(raw: &str) -> Result<String, ParseError> {
        let mut scratch = Vec::new();
        site_path(raw.as_bytes(), &mut scratch).map(|p| String::from_utf8_lossy(p).into_owned())
    }

    #[test]
    fn normal_paths_pass_through() {
        assert_eq!(norm("/").unwrap(), "/");
        assert_eq!(norm("/a/b.html?q=1#f").unwrap(), "/a/b.html");
        assert_eq!(norm("/dir/").unwrap(), "/dir/");
        assert_eq!(norm("http://example.com/x").unwrap(), "/x");
        assert_eq!(norm("http://example.com").unwrap(), "/");
    }

    #[test]
    fn dot_segments_and_slashes_are_resolved() {
        let cases = [
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("/a/b/..", "/a/"),
            ("/a/.", "/a/"),
            ("//a///b", "/a/b"),
            ("/a/%2e%2e/b", "/b"),
            ("/%61%62c", "/abc"),
            ("/a%2Fb", "/a/b"),
            ("/.hidden", "/.hidden"),
            ("/a/b/../../c/", "/c/"),
        ];
        for (raw, expected) in cases {
            assert_eq!(norm(raw).unwrap(), expected, "{raw}");
        }
    }

    #[test]
    fn escapes_and_garbage_are_rejected() {
        let cases = [
            "/..",
            "/../etc/passwd",
            "/a/../../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/%2e%2e%2fetc%2fpasswd",
            "/..%2f..%2fetc/passwd",
            "/a%00.html",
            "/bad%zz",
            "/trunc%2",
            "relative",
            "*",
            "http://",
            "http:///x",
            "https://user@/x",
        ];
        for raw in cases {
            assert_eq!(norm(raw), Err(ParseError::BadTarget), "{raw}");
        }
    }
}
