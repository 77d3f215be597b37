//! Sizes (`16KiB`, `512MB`, `1048576`) and durations (`10s`, `500ms`, `2m`, `60`).

use std::time::Duration;

use anyhow::bail;

/// Bytes from a number with an optional unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB.
/// Both decimal and binary spellings mean powers of 1024, as in nginx.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    if digits.is_empty() {
        bail!("expected a size like 16KiB or 512MiB");
    }
    let n: u64 = digits.parse()?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => bail!("unknown size unit {other:?}; expected B, KiB, MiB or GiB"),
    };
    n.checked_mul(multiplier)
        .ok_or_else(|| anyhow::anyhow!("size is too large"))
}

/// A duration: a number of seconds, or a number with ms, s, m, h or d.
pub fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    if digits.is_empty() {
        bail!("expected a duration like 10s, 500ms or 2m");
    }
    let n: u64 = digits.parse()?;
    Ok(match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        "d" => Duration::from_secs(n * 86_400),
        other => bail!("unknown duration unit {other:?}; expected ms, s, m, h or d"),
    })
}

/// A byte count in the largest unit that divides it exactly: `16KiB`, `1000B`.
pub fn format_size(bytes: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

/// A duration in the largest unit that divides it exactly: `10s`, `2m`, `500ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    match s {
        0 => "0s".to_string(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size("16KiB").unwrap(), 16 * 1024);
        assert_eq!(parse_size("512 MB").unwrap(), 512 << 20);
        assert!(parse_size("16x").is_err());
        assert!(parse_size("MiB").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for text in ["16KiB", "512MiB", "1000B", "1GiB"] {
            assert_eq!(format_size(parse_size(text).unwrap()), text);
        }
        for text in ["10s", "500ms", "2m", "1h", "90s", "365d"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}
