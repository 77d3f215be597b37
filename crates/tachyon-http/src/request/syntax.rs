//! HTTP/1.1 request-head syntax (RFC 9112 §2.2, §3, §5): the request line
//! and the field lines of a head as slices of the input, every byte checked
//! against its grammar. Nothing is interpreted here ([`super`] does that).
//!
//! Written here rather than taken from `httparse`, which tachyon used
//! before: a browser's head went through httparse's field loop (~260
//! instructions a field), then two more passes of tachyon's (bare LF, the
//! fields it acts on); here one pass reads a word at a time
//! (`words.rs`) and hands each field to [`super`] as it is read, in
//! two thirds of the instructions (`bench/results/h1-syntax-2026-12-04/`).
//! It accepts what httparse accepts with tachyon's settings but one thing:
//! a line must end in CRLF, and a bare LF is an error as soon as it is seen
//! (tachyon refused it after httparse anyway, see [`super`]). The fuzz
//! target `h1_syntax` checks the two agree.
//!
//! Invariant: a slice returned holds only what its grammar allows: a method
//! and a field name only token characters (RFC 9110 §5.6.2), a target only
//! visible characters and obs-text that are valid UTF-8, a field value only
//! HTAB, SP, visible characters and obs-text, never starting or ending in
//! whitespace.

use crate::error::ParseError;
use crate::fields::is_tchar;
use crate::request::Version;
use crate::words::{lowest_lane, not_letters, stops, word_at, ONES};

/// Whether a head so far is whole: `Partial` means more bytes may make it so.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<T> {
    Done(T),
    Partial,
}

/// The first line of a request.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestLine<'a> {
    pub method: &'a [u8],
    pub target: &'a [u8],
    pub version: Version,
    /// Bytes up to the end of the line's CRLF, empty lines before it included.
    pub len: usize,
}

/// One line of the field section.
#[derive(Debug, PartialEq, Eq)]
pub enum FieldLine<'a> {
    Field {
        name: &'a [u8],
        value: &'a [u8],
    },
    /// The empty line that ends the head; the head is `head_len` bytes.
    End {
        head_len: usize,
    },
}

type Parse<T> = Result<Step<T>, ParseError>;

/// Reads the request line at the start of `input`, after any empty lines
/// (RFC 9112 §2.2 lets a server ignore them).
pub fn request_line(input: &[u8]) -> Parse<RequestLine<'_>> {
    let mut at = 0;
    while input.get(at) == Some(&b'\r') {
        match crlf(input, at)? {
            Step::Done(next) => at = next,
            Step::Partial => return Ok(Step::Partial),
        }
    }
    let method_start = at;
    let Step::Done(method_end) = method(input, at)? else {
        return Ok(Step::Partial);
    };
    let target_start = method_end + 1;
    let (mut from, mut obs_text) = (target_start, false);
    let target_end = loop {
        match next_stop(input, from, b'!') {
            None => return Ok(Step::Partial),
            Some(i) if input[i] >= 0x80 => (from, obs_text) = (i + 1, true),
            Some(i) => break i,
        }
    };
    let target = &input[target_start..target_end];
    // One space, then the version: a target cannot be empty or hold controls.
    if input[target_end] != b' ' || target.is_empty() {
        return Err(ParseError::Malformed);
    }
    // Beyond ASCII, a target must be UTF-8 (as httparse required).
    if obs_text && std::str::from_utf8(target).is_err() {
        return Err(ParseError::Malformed);
    }
    let Step::Done(version) = version(input, target_end + 1)? else {
        return Ok(Step::Partial);
    };
    let Step::Done(len) = crlf(input, target_end + 9)? else {
        return Ok(Step::Partial);
    };
    Ok(Step::Done(RequestLine {
        method: &input[method_start..method_end],
        target,
        version,
        len,
    }))
}

/// The field lines of a head, read one at a time from where the request
/// line ended.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    input: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub fn new(input: &'a [u8], at: usize) -> Self {
        Fields { input, at }
    }

    /// The next line: a field, or the end of the head.
    #[inline(always)]
    pub fn next_line(&mut self) -> Parse<FieldLine<'a>> {
        let input = self.input;
        let start = self.at;
        match input.get(start) {
            None => return Ok(Step::Partial),
            Some(b'\r') => {
                return Ok(match crlf(input, start)? {
                    Step::Done(head_len) => Step::Done(FieldLine::End { head_len }),
                    Step::Partial => Step::Partial,
                });
            }
            // A name starts with a token character: no folded line (obs-fold,
            // RFC 9112 §5.2), no space before the name, no empty name.
            Some(&b) if !is_tchar(b) => return Err(ParseError::Malformed),
            Some(_) => {}
        }
        let Step::Done(colon) = name_end(input, start)? else {
            return Ok(Step::Partial);
        };
        let Step::Done(cr) = value_end(input, colon + 1)? else {
            return Ok(Step::Partial);
        };
        let Step::Done(next) = crlf(input, cr)? else {
            return Ok(Step::Partial);
        };
        self.at = next;
        // The whitespace around a value is not part of it (RFC 9112 §5.1).
        let mut value = &input[colon + 1..cr];
        while let [b' ' | b'\t', rest @ ..] = value {
            value = rest;
        }
        while let [rest @ .., b' ' | b'\t'] = value {
            value = rest;
        }
        Ok(Step::Done(FieldLine::Field {
            name: &input[start..colon],
            value,
        }))
    }
}

/// The end of the method (the index of the space after it).
fn method(input: &[u8], start: usize) -> Parse<usize> {
    if input[start..].starts_with(b"GET ") {
        return Ok(Step::Done(start + 3));
    }
    for (i, &b) in input.iter().enumerate().skip(start) {
        match b {
            b' ' if i > start => return Ok(Step::Done(i)),
            _ if is_tchar(b) => {}
            _ => return Err(ParseError::Malformed),
        }
    }
    Ok(Step::Partial)
}

/// `HTTP/1.0` or `HTTP/1.1` at `at`; a prefix of them is partial.
fn version(input: &[u8], at: usize) -> Parse<Version> {
    let have = &input[at.min(input.len())..];
    match have.first_chunk::<8>() {
        Some(b"HTTP/1.1") => Ok(Step::Done(Version::Http11)),
        Some(b"HTTP/1.0") => Ok(Step::Done(Version::Http10)),
        Some(_) => Err(ParseError::Version),
        None if b"HTTP/1.".starts_with(have) => Ok(Step::Partial),
        None => Err(ParseError::Version),
    }
}

/// A CR at `at` followed by LF: the index after them.
fn crlf(input: &[u8], at: usize) -> Parse<usize> {
    match (input.get(at), input.get(at + 1)) {
        (None, _) | (Some(b'\r'), None) => Ok(Step::Partial),
        (Some(b'\r'), Some(b'\n')) => Ok(Step::Done(at + 2)),
        // A bare LF, or anything else where a line must end.
        _ => Err(ParseError::Malformed),
    }
}

/// The index of the colon that ends the field name starting at `start`.
#[inline(always)]
fn name_end(input: &[u8], start: usize) -> Parse<usize> {
    let mut at = start;
    loop {
        at = skip_letters(input, at);
        match input.get(at) {
            None => return Ok(Step::Partial),
            Some(b':') => return Ok(Step::Done(at)),
            Some(&b) if is_tchar(b) => at += 1,
            Some(_) => return Err(ParseError::Malformed),
        }
    }
}

/// The index of the CR that ends the value starting at `at` (HTAB is the
/// one control a value may hold; obs-text is allowed).
#[inline(always)]
fn value_end(input: &[u8], mut at: usize) -> Parse<usize> {
    loop {
        let Some(i) = next_stop(input, at, b' ') else {
            return Ok(Step::Partial);
        };
        match input[i] {
            b'\t' | 0x80.. => at = i + 1,
            b'\r' => return Ok(Step::Done(i)),
            _ => return Err(ParseError::Malformed),
        }
    }
}

/// The index of the first byte from `at` below `below`, DEL or from 0x80
/// (obs-text, which the caller may take), eight bytes at a time; `None`
/// when the input ends first.
#[inline(always)]
fn next_stop(input: &[u8], mut at: usize, below: u8) -> Option<usize> {
    while let Some(word) = word_at(input, at) {
        let marks = stops(word, below);
        if marks != 0 {
            return Some(at + lowest_lane(marks));
        }
        at += 8;
    }
    let i = input
        .get(at..)?
        .iter()
        .position(|&b| b < below || b >= 0x7f)?;
    Some(at + i)
}

/// The index of the first byte from `at` that is not a letter or `-`
/// (nearly all of every field name), eight bytes at a time.
#[inline(always)]
fn skip_letters(input: &[u8], mut at: usize) -> usize {
    while let Some(word) = word_at(input, at) {
        let others = not_letters(word);
        if others != 0 {
            return at + lowest_lane(others);
        }
        at += 8;
    }
    let rest = input.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'-'))
        .unwrap_or(rest.len())
}

/// Whether a field name read here is `lower` (lower-case letters and `-`)
/// in any case, a word at a time. Exact for token characters: one ORed
/// with 0x20 equals such a byte only if it is that letter in either case,
/// or `-` (the other byte that becomes `-`, CR, is not a token character).
#[inline(always)]
pub fn is_name(name: &[u8], lower: &[u8]) -> bool {
    let n = name.len();
    if n != lower.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
    };
    let half = |bytes: &[u8], at: usize| {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
    };
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            if word(name, at) | (ONES * 0x20) != word(lower, at) {
                return false;
            }
            at += 8;
        }
        word(name, n - 8) | (ONES * 0x20) == word(lower, n - 8)
    } else if n >= 4 {
        let spaces = 0x2020_2020;
        half(name, 0) | spaces == half(lower, 0) && half(name, n - 4) | spaces == half(lower, n - 4)
    } else {
        name.iter().zip(lower).all(|(&b, &l)| b | 0x20 == l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole head: its request line, its fields, its length.
    type Head<'a> = (RequestLine<'a>, Vec<(&'a [u8], &'a [u8])>, usize);

    /// Every field of a whole head, or the error or `Partial` met first.
    fn fields(input: &[u8]) -> Parse<Head<'_>> {
        let Step::Done(line) = request_line(input)? else {
            return Ok(Step::Partial);
        };
        let mut lines = Fields::new(input, line.len);
        let mut found = Vec::new();
        loop {
            match lines.next_line()? {
                Step::Done(FieldLine::Field { name, value }) => found.push((name, value)),
                Step::Done(FieldLine::End { head_len }) => {
                    return Ok(Step::Done((line, found, head_len)))
                }
                Step::Partial => return Ok(Step::Partial),
            }
        }
    }

    fn accepted(input: &[u8]) -> Head<'_> {
        match fields(input) {
            Ok(Step::Done(head)) => head,
            other => panic!("{:?}: expected a whole head, got {other:?}", show(input)),
        }
    }

    fn show(input: &[u8]) -> String {
        input.escape_ascii().to_string()
    }

    #[test]
    fn a_browser_head_is_read_field_by_field() {
        let input = b"GET /a%20b?q=1 HTTP/1.1\r\nHost: x.test\r\nUser-Agent: Mozilla/5.0 (X11)\r\n\
                      sec-ch-ua: \"Chromium\";v=\"156\"\r\nAccept-Encoding:gzip, br \t\r\nX-Empty:\r\n\
                      X-Tab: a\tb\r\n\r\nbody";
        let (line, found, head_len) = accepted(input);
        assert_eq!(line.method, b"GET");
        assert_eq!(line.target, b"/a%20b?q=1");
        assert_eq!(line.version, Version::Http11);
        let expected: &[(&[u8], &[u8])] = &[
            (b"Host", b"x.test"),
            (b"User-Agent", b"Mozilla/5.0 (X11)"),
            (b"sec-ch-ua", b"\"Chromium\";v=\"156\""),
            (b"Accept-Encoding", b"gzip, br"),
            (b"X-Empty", b""),
            (b"X-Tab", b"a\tb"),
        ];
        assert_eq!(found, expected);
        assert_eq!(&input[head_len..], b"body");
    }

    #[test]
    fn what_the_grammar_allows() {
        /// A head, its method, its target, its one field's value.
        type Case = (&'static [u8], &'static [u8], &'static [u8], &'static [u8]);
        let cases: &[Case] = &[
            (
                b"\r\n\r\nGET / HTTP/1.0\r\nA: v\r\n\r\n",
                b"GET",
                b"/",
                b"v",
            ),
            (
                b"M-SEARCH * HTTP/1.1\r\nA: v\r\n\r\n",
                b"M-SEARCH",
                b"*",
                b"v",
            ),
            (
                b"GET /caf\xc3\xa9 HTTP/1.1\r\nA: v\r\n\r\n",
                b"GET",
                b"/caf\xc3\xa9",
                b"v",
            ),
            (
                b"GET / HTTP/1.1\r\nA:  \t v \xff\x80 w\t \r\n\r\n",
                b"GET",
                b"/",
                b"v \xff\x80 w",
            ),
            (b"GET / HTTP/1.1\r\nA:\t\t\r\n\r\n", b"GET", b"/", b""),
            (
                b"GET / HTTP/1.1\r\nA: !#$%&'*+-.^_`|~09azAZ\r\n\r\n",
                b"GET",
                b"/",
                b"!#$%&'*+-.^_`|~09azAZ",
            ),
        ];
        for &(input, method, target, value) in cases {
            let (line, found, head_len) = accepted(input);
            assert_eq!(
                (line.method, line.target),
                (method, target),
                "{}",
                show(input)
            );
            assert_eq!(found, [(&b"A"[..], value)], "{}", show(input));
            assert_eq!(head_len, input.len());
        }
        let names: &[&[u8]] = &[
            b"x-b3-traceid",
            b"!#$%&'*+-.^_`|~09",
            b"a",
            b"sec-fetch-dest-long-name",
        ];
        for name in names {
            let input = [b"GET / HTTP/1.1\r\n", *name, b": v\r\n\r\n"].concat();
            assert_eq!(accepted(&input).1, [(*name, &b"v"[..])]);
        }
    }

    #[test]
    fn what_the_grammar_refuses() {
        let cases: &[(&[u8], ParseError, &str)] = &[
            (
                b"GET / HTTP/1.1\nA: v\r\n\r\n",
                ParseError::Malformed,
                "bare LF after the request line",
            ),
            (
                b"GET / HTTP/1.1\r\nA: v\n\r\n",
                ParseError::Malformed,
                "bare LF after a value",
            ),
            (
                b"GET / HTTP/1.1\r\nA: v\r\n\n",
                ParseError::Malformed,
                "bare LF ending the head",
            ),
            (
                b"\nGET / HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "bare LF before the request line",
            ),
            (
                b"\rGET / HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "CR without LF",
            ),
            (
                b"GET / HTTP/1.1\r\nA: v\rx\r\n\r\n",
                ParseError::Malformed,
                "CR inside a value",
            ),
            (
                b"GET / HTTP/1.1\r\n\rx",
                ParseError::Malformed,
                "CR without LF ending the head",
            ),
            (
                b"GET  / HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "two spaces",
            ),
            (
                b"GET / HTTP/1.1 \r\n\r\n",
                ParseError::Malformed,
                "space after the version",
            ),
            (
                b" GET / HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "space before the method",
            ),
            (
                b"G(T / HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "delimiter in the method",
            ),
            (
                b"GET /a\x7f HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "DEL in the target",
            ),
            (
                b"GET /a\tb HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "tab in the target",
            ),
            (
                b"GET /\xc3 HTTP/1.1\r\n\r\n",
                ParseError::Malformed,
                "a target that is not UTF-8",
            ),
            (b"GET /\r\n\r\n", ParseError::Malformed, "HTTP/0.9"),
            (b"GET / HTTP/1.2\r\n\r\n", ParseError::Version, "HTTP/1.2"),
            (b"GET / HTTP/2.0\r\n\r\n", ParseError::Version, "HTTP/2.0"),
            (
                b"GET / http/1.1\r\n\r\n",
                ParseError::Version,
                "lower-case version",
            ),
            (
                b"GET / HTTP/1.1\r\n A: v\r\n\r\n",
                ParseError::Malformed,
                "a folded line",
            ),
            (
                b"GET / HTTP/1.1\r\nA : v\r\n\r\n",
                ParseError::Malformed,
                "space before the colon",
            ),
            (
                b"GET / HTTP/1.1\r\n: v\r\n\r\n",
                ParseError::Malformed,
                "empty name",
            ),
            (
                b"GET / HTTP/1.1\r\nA(b: v\r\n\r\n",
                ParseError::Malformed,
                "delimiter in a name",
            ),
            (
                b"GET / HTTP/1.1\r\nA\xc3\xa9: v\r\n\r\n",
                ParseError::Malformed,
                "obs-text in a name",
            ),
            (
                b"GET / HTTP/1.1\r\nA: v\x00w\r\n\r\n",
                ParseError::Malformed,
                "NUL in a value",
            ),
            (
                b"GET / HTTP/1.1\r\nA: v\x7fw\r\n\r\n",
                ParseError::Malformed,
                "DEL in a value",
            ),
            (
                b"GET / HTTP/1.1\r\nA: \x01\r\n\r\n",
                ParseError::Malformed,
                "a control first in a value",
            ),
        ];
        for &(input, expected, what) in cases {
            assert_eq!(fields(input), Err(expected), "{what}");
        }
    }

    #[test]
    fn a_head_cut_anywhere_is_partial_and_errors_show_before_the_end() {
        let full = b"\r\nOPTIONS /x?y HTTP/1.0\r\nHost: a\r\nAccept-Language: en-US,en;q=0.9\r\nX-Empty: \r\n\r\n";
        for cut in 0..full.len() {
            assert_eq!(fields(&full[..cut]), Ok(Step::Partial), "cut at {cut}");
        }
        assert_eq!(accepted(full).2, full.len());
        // A bad byte is refused before the head is whole.
        assert_eq!(
            fields(b"GET / HTTP/1.1\r\nA: \x01"),
            Err(ParseError::Malformed)
        );
        assert_eq!(fields(b"GET / HTTP/1.1\r\nA(b"), Err(ParseError::Malformed));
        assert_eq!(fields(b"GET / HTTP/3"), Err(ParseError::Version));
    }

    #[test]
    fn a_bad_byte_is_found_in_every_position_of_a_word() {
        type Place = (
            &'static str,
            &'static [u8],
            u8,
            &'static [u8],
            &'static [u8],
        );
        // A name also refuses a visible byte that is not a token character.
        let places: [Place; 3] = [
            ("a value", b"GET / HTTP/1.1\r\nA: ", b'v', b"\r\n\r\n", b""),
            ("a name", b"GET / HTTP/1.1\r\n", b'n', b": v\r\n\r\n", b"@"),
            ("a target", b"GET /", b't', b" HTTP/1.1\r\n\r\n", b""),
        ];
        for (place, before, filler, after, own) in places {
            for len in 0..24 {
                for at in 0..len {
                    for &bad in [0u8, 0x7f, b'\n', 0x1f].iter().chain(own) {
                        let mut bytes = vec![filler; len];
                        bytes[at] = bad;
                        let input = [before, &bytes[..], after].concat();
                        let what = format!("{bad:#x} in {place} at {at} of {len}");
                        assert_eq!(fields(&input), Err(ParseError::Malformed), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn names_compare_in_any_case_and_only_as_equal() {
        let names: &[&[u8]] = &[
            b"host",
            b"range",
            b"accept",
            b"referer",
            b"if-match",
            b"connection",
            b"accept-encoding",
            b"available-dictionary",
            b"a",
            b"te",
        ];
        for &lower in names {
            assert!(is_name(lower, lower));
            assert!(is_name(&lower.to_ascii_uppercase(), lower));
            let mut mixed = lower.to_vec();
            mixed
                .iter_mut()
                .step_by(2)
                .for_each(|b| *b = b.to_ascii_uppercase());
            assert!(is_name(&mixed, lower));
            for at in 0..lower.len() {
                for other in [b'x', b'_', b'^', b'~', b'0', b'.', b'`', b'|'] {
                    let mut changed = lower.to_vec();
                    if changed[at].to_ascii_lowercase() == other {
                        continue;
                    }
                    changed[at] = other;
                    assert!(
                        !is_name(&changed, lower),
                        "{} is not {}",
                        show(&changed),
                        show(lower)
                    );
                }
            }
            assert!(!is_name(&lower[1..], lower));
        }
    }
}
