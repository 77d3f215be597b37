//! Preconditions (RFC 9110 §13): whether to send the representation, a 304,
//! or a 412, and whether a Range applies (If-Range).
//!
//! Input is the request head and the representation's validators; output is a
//! [`Precondition`]. Evaluation follows the order of RFC 9110 §13.2.2. ETags
//! here are always strong (content hashes), so a weak tag from a client can
//! only match under weak comparison.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::fields::{tokens, trim};
use crate::request::{Method, RequestHead};

/// The validators of one representation.
#[derive(Debug, Clone, Copy)]
pub struct Validators<'a> {
    /// The entity-tag with its quotes, e.g. `"3f9a1c2b"`.
    pub etag: &'a [u8],
    /// Last modification, whole seconds since the epoch.
    pub last_modified: u64,
}

/// What the preconditions decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Send the selected representation (and honour Range if `range_allowed`).
    Proceed { range_allowed: bool },
    /// 304: the client's copy is current.
    NotModified,
    /// 412: a state-changing precondition failed.
    Failed,
}

/// Evaluates the request's preconditions in the order of RFC 9110 §13.2.2.
pub fn evaluate(head: &RequestHead<'_>, v: Validators<'_>) -> Precondition {
    // Step 1-2: If-Match, else If-Unmodified-Since.
    if let Some(list) = head.if_match {
        if !matches_list(list, v.etag, Comparison::Strong) {
            return Precondition::Failed;
        }
    } else if let Some(date) = head.if_unmodified_since.and_then(parse_date) {
        if v.last_modified > date {
            return Precondition::Failed;
        }
    }
    // Step 3-4: If-None-Match, else If-Modified-Since (GET/HEAD only).
    let safe = matches!(head.method, Method::Get | Method::Head);
    if let Some(list) = head.if_none_match {
        if matches_list(list, v.etag, Comparison::Weak) {
            return if safe {
                Precondition::NotModified
            } else {
                Precondition::Failed
            };
        }
    } else if let (true, Some(date)) = (safe, head.if_modified_since.and_then(parse_date)) {
        if v.last_modified <= date {
            return Precondition::NotModified;
        }
    }
    // Step 5: If-Range (RFC 9110 §13.1.5) decides whether Range is honoured.
    let range_allowed = match head.if_range {
        None => true,
        Some(value) => if_range_holds(trim(value), v),
    };
    Precondition::Proceed { range_allowed }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Strong,
    Weak,
}

/// Does `*` or any tag in the list match `etag`? (RFC 9110 §8.8.3.2)
fn matches_list(list: &[u8], etag: &[u8], cmp: Comparison) -> bool {
    if trim(list) == b"*" {
        return true;
    }
    tokens(list).any(|tag| match tag.strip_prefix(b"W/") {
        Some(weak) => cmp == Comparison::Weak && weak == etag,
        None => tag == etag,
    })
}

/// If-Range holds when it names the current strong tag, or is a date equal to
/// Last-Modified (a date is only a strong validator when it equals exactly).
fn if_range_holds(value: &[u8], v: Validators<'_>) -> bool {
    if value.starts_with(b"\"") {
        value == v.etag
    } else if value.starts_with(b"W/") {
        false
    } else {
        parse_date(value) == Some(v.last_modified)
    }
}

/// Seconds since the epoch of an HTTP-date; `None` if invalid (then the header is ignored).
pub fn parse_date(value: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(trim(value)).ok()?;
    let time = httpdate::parse_http_date(text).ok()?;
    time.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// An HTTP-date for `secs` since the epoch.
pub fn format_date(secs: u64) -> String {
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Whole seconds of a file time (HTTP dates have one-second resolution).
pub fn seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{parse, HeadLimits, Parsed};

    const V: Validators<'static> = Validators {
        etag: b"\"abc\"",
        last_modified: 784_111_777,
    };
    const DATE: &str = "Sun, 06 Nov 1994 08:49:37 GMT";
    const LATER: &str = "Sun, 06 Nov 1994 08:49:38 GMT";
    const EARLIER: &str = "Sun, 06 Nov 1994 08:49:36 GMT";

    fn eval(method: &str, headers: &str) -> Precondition {
        let text = format!("{method} / HTTP/1.1\r\nHost: a\r\n{headers}\r\n");
        let combined = Box::leak(Box::default());
        let Ok(Parsed::Complete(head)) = parse(text.as_bytes(), combined, &HeadLimits::default())
        else {
            panic!("bad fixture {text}");
        };
        evaluate(&head, V)
    }

    const PROCEED: Precondition = Precondition::Proceed {
        range_allowed: true,
    };

    #[test]
    fn if_none_match_lists_star_and_weak_tags() {
        assert_eq!(
            eval("GET", "If-None-Match: \"abc\"\r\n"),
            Precondition::NotModified
        );
        assert_eq!(
            eval("GET", "If-None-Match: \"x\", W/\"abc\"\r\n"),
            Precondition::NotModified
        );
        assert_eq!(
            eval("HEAD", "If-None-Match: *\r\n"),
            Precondition::NotModified
        );
        assert_eq!(eval("GET", "If-None-Match: \"x\", \"y\"\r\n"), PROCEED);
    }

    #[test]
    fn if_none_match_wins_over_if_modified_since() {
        let h = format!("If-None-Match: \"other\"\r\nIf-Modified-Since: {LATER}\r\n");
        assert_eq!(
            eval("GET", &h),
            PROCEED,
            "RFC 9110 §13.1.3: IMS is ignored when INM is present"
        );
    }

    #[test]
    fn if_modified_since_compares_seconds() {
        assert_eq!(
            eval("GET", &format!("If-Modified-Since: {DATE}\r\n")),
            Precondition::NotModified
        );
        assert_eq!(
            eval("GET", &format!("If-Modified-Since: {LATER}\r\n")),
            Precondition::NotModified
        );
        assert_eq!(
            eval("GET", &format!("If-Modified-Since: {EARLIER}\r\n")),
            PROCEED
        );
        assert_eq!(
            eval("GET", "If-Modified-Since: yesterday\r\n"),
            PROCEED,
            "invalid date ignored"
        );
    }

    #[test]
    fn if_match_and_if_unmodified_since_fail_with_412() {
        assert_eq!(eval("GET", "If-Match: \"nope\"\r\n"), Precondition::Failed);
        assert_eq!(
            eval("GET", "If-Match: W/\"abc\"\r\n"),
            Precondition::Failed,
            "strong comparison"
        );
        assert_eq!(eval("GET", "If-Match: \"abc\"\r\n"), PROCEED);
        assert_eq!(
            eval("GET", &format!("If-Unmodified-Since: {EARLIER}\r\n")),
            Precondition::Failed
        );
        assert_eq!(
            eval("GET", &format!("If-Unmodified-Since: {DATE}\r\n")),
            PROCEED
        );
    }

    #[test]
    fn if_range_needs_an_exact_strong_validator() {
        let no_range = Precondition::Proceed {
            range_allowed: false,
        };
        assert_eq!(eval("GET", "If-Range: \"abc\"\r\n"), PROCEED);
        assert_eq!(eval("GET", "If-Range: \"old\"\r\n"), no_range);
        assert_eq!(eval("GET", "If-Range: W/\"abc\"\r\n"), no_range);
        assert_eq!(eval("GET", &format!("If-Range: {DATE}\r\n")), PROCEED);
        assert_eq!(eval("GET", &format!("If-Range: {LATER}\r\n")), no_range);
    }
}
