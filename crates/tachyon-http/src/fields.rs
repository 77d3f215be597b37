//! The field-value grammar every request field shares (RFC 9110 §5.6):
//! lists of tokens, optional whitespace, decimal numbers.
//!
//! Owns nothing but these three readings of bytes; each field's meaning is
//! its own module's (`encoding`, `conditional`, `range`, `request`).

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
