//! The `Date` header value, formatted at most once a second.
//!
//! Every response carries `Date` (RFC 9110 §6.6.1), and formatting an
//! IMF-fixdate per request costs more than the rest of a cache hit. Each worker
//! owns one [`DateCache`] and calls [`DateCache::refresh`] once per loop turn;
//! nothing is shared between threads, so no lock and no `unsafe` (hyper's
//! `common/date.rs` does the same with a thread-local).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
pub const DATE_LEN: usize = 29;

/// A worker's cached `Date` value.
#[derive(Debug)]
pub struct DateCache {
    bytes: [u8; DATE_LEN],
    second: u64,
}

impl DateCache {
    /// A cache holding the current time.
    pub fn new() -> Self {
        let mut cache = DateCache {
            bytes: [b' '; DATE_LEN],
            second: u64::MAX,
        };
        cache.refresh(SystemTime::now());
        cache
    }

    /// Re-formats the value if `now` is in a later second than the cached one.
    pub fn refresh(&mut self, now: SystemTime) {
        self.refresh_unix(
            now.duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO)
                .as_secs(),
        );
    }

    /// Re-formats the value if `second` (seconds since the Unix epoch) is
    /// later than the cached one's.
    pub fn refresh_unix(&mut self, second: u64) {
        if second != self.second {
            let text = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(second));
            // IMF-fixdate always has 29 bytes for years 1000..=9999.
            if text.len() == DATE_LEN {
                self.bytes.copy_from_slice(text.as_bytes());
            }
            self.second = second;
        }
    }

    /// The formatted value, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    pub fn bytes(&self) -> &[u8; DATE_LEN] {
        &self.bytes
    }
}

impl Default for DateCache {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_imf_fixdate_and_refreshes_per_second() {
        let mut cache = DateCache::new();
        cache.refresh(UNIX_EPOCH + Duration::from_secs(784_111_777));
        assert_eq!(cache.bytes(), b"Sun, 06 Nov 1994 08:49:37 GMT");
        cache.refresh(UNIX_EPOCH + Duration::from_millis(784_111_777_900));
        assert_eq!(
            cache.bytes(),
            b"Sun, 06 Nov 1994 08:49:37 GMT",
            "same second"
        );
        cache.refresh(UNIX_EPOCH + Duration::from_secs(784_111_778));
        assert_eq!(cache.bytes(), b"Sun, 06 Nov 1994 08:49:38 GMT");
    }
}
