//! Content-Type and Cache-Control defaults, chosen by file name at load time.

use std::path::Path;

/// The Content-Type value for `path`; text types carry `charset=utf-8`, as
/// nginx's `charset utf-8` and static-web-server do for text.
pub fn content_type(path: &Path) -> String {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let essence = mime.essence_str();
    let textual = mime.type_() == mime_guess::mime::TEXT
        || matches!(
            essence,
            "application/javascript"
                | "application/json"
                | "application/xml"
                | "image/svg+xml"
                | "application/manifest+json"
                | "application/rss+xml"
                | "application/atom+xml"
        );
    if textual {
        format!("{essence}; charset=utf-8")
    } else {
        essence.to_string()
    }
}

/// The default Cache-Control for a file: HTML is revalidated every time
/// (`no-cache`), fingerprinted assets (`app.3f9a1c2b.js`) are immutable for a
/// year, everything else may be reused for an hour. No `public`: it only
/// matters for responses to requests with Authorization, which a static
/// site does not answer differently (REDbot flags it as unnecessary).
pub fn cache_control(path: &Path, content_type: &str) -> &'static str {
    if content_type.starts_with("text/html") {
        "no-cache"
    } else if is_fingerprinted(path) {
        "max-age=31536000, immutable"
    } else {
        "max-age=3600"
    }
}

/// A file name with a dot-separated part of 8 or more hex digits (or a
/// `-`-separated one, as Vite and webpack emit), e.g. `app.3f9a1c2b.js`.
fn is_fingerprinted(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some((stem, _ext)) = name.rsplit_once('.') else {
        return false;
    };
    stem.split(['.', '-', '_'])
        .skip(1)
        .any(|part| part.len() >= 8 && part.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_types_carry_a_charset() {
        assert_eq!(
            content_type(Path::new("a.html")),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("a.json")),
            "application/json; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("a.png")), "image/png");
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
    }

    #[test]
    fn fingerprinted_assets_are_immutable() {
        let immutable = "max-age=31536000, immutable";
        assert_eq!(
            cache_control(Path::new("app.3f9a1c2b.js"), "text/javascript"),
            immutable
        );
        assert_eq!(
            cache_control(Path::new("index-DeadBeef12.css"), "text/css"),
            immutable
        );
        assert_eq!(
            cache_control(Path::new("index.html"), "text/html; charset=utf-8"),
            "no-cache"
        );
        assert_eq!(
            cache_control(Path::new("logo.png"), "image/png"),
            "max-age=3600"
        );
        assert_eq!(
            cache_control(Path::new("cafe.js"), "text/javascript"),
            "max-age=3600"
        );
    }
}
