//! The field grammar every request field shares (RFC 9110 §5.6): token
//! characters, lists of tokens, optional whitespace, decimal numbers.
//!
//! Owns nothing but these readings of bytes; each field's meaning is
//! its own module's (`encoding`, `conditional`, `range`, `request`).

/// Whether `b` is a token character (RFC 9110 §5.6.2): what a method, a
/// field name and a token hold. One table lookup: HTTP/1.1 parsing asks it
/// of every byte of a field name that is not a letter or `-`.
#[inline(always)]
pub fn is_tchar(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

static TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

/// The comma-separated tokens of a list-valued field, trimmed of whitespace.
pub fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim)
        .filter(|t| !t.is_empty())
}

/// `value` without leading and trailing spaces and tabs.
pub fn trim(value: &[u8]) -> &[u8] {
    let start = value
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t'))
        .map_or(start, |e| e + 1);
    &value[start..end]
}

/// A non-empty run of ASCII digits that fits in u64; anything else is `None`.
pub fn parse_decimal(value: &[u8]) -> Option<u64> {
    let digits = trim(value);
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_characters_are_rfc_9110s() {
        let tchars: Vec<u8> = (0..=255u8).filter(|&b| is_tchar(b)).collect();
        let mut expected: Vec<u8> = b"!#$%&'*+-.^_`|~".to_vec();
        expected.extend(b'0'..=b'9');
        expected.extend(b'A'..=b'Z');
        expected.extend(b'a'..=b'z');
        expected.sort_unstable();
        assert_eq!(tchars, expected);
    }

    #[test]
    fn lists_are_split_and_trimmed() {
        let got: Vec<&[u8]> = tokens(b" gzip ,, br\t, zstd").collect();
        assert_eq!(got, [&b"gzip"[..], b"br", b"zstd"]);
        assert_eq!(trim(b" \t x y \t"), b"x y");
        assert_eq!(trim(b"  "), b"");
    }

    #[test]
    fn decimals_are_digits_that_fit() {
        assert_eq!(parse_decimal(b" 42 "), Some(42));
        assert_eq!(parse_decimal(b"+1"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"99999999999999999999"), None);
        assert_eq!(parse_decimal(b"18446744073709551615"), None);
    }
}
