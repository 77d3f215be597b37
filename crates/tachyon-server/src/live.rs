//! The generation of snapshots being served, swappable as a whole.
//!
//! A [`Generation`] is the default snapshot plus one per virtual host;
//! [`Live`] holds the current one. A reload publishes a new generation with one atomic store;
//! each worker notices the bumped number at the top of its loop and takes the
//! new `Arc`. A request is answered from exactly one snapshot, and responses
//! still being sent keep the entries they reference alive.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use tachyon_snapshot::Snapshot;

/// One generation: the default snapshot and the virtual hosts', chosen by
/// the request's Host, and the TLS settings (certificates) that came with
/// them.
pub struct Generation {
    default: Snapshot,
    tls: Option<Arc<rustls::ServerConfig>>,
    /// Lowercase host names (no port, no trailing dot) and their sites; a
    /// handful at most, so a scan beats hashing the Host of every request.
    named: Vec<(Box<[u8]>, Arc<Snapshot>)>,
}

impl Generation {
    /// One site for every Host.
    pub fn single(default: Snapshot) -> Generation {
        Generation {
            default,
            tls: None,
            named: Vec::new(),
        }
    }

    /// Sets the TLS settings new HTTPS connections start from.
    pub fn with_tls(mut self, config: Arc<rustls::ServerConfig>) -> Generation {
        self.tls = Some(config);
        self
    }

    /// The TLS settings, when HTTPS is served.
    pub fn tls(&self) -> Option<&Arc<rustls::ServerConfig>> {
        self.tls.as_ref()
    }

    /// Adds a virtual host answering for `names` (compared without case,
    /// port or trailing dot).
    pub fn with_host(mut self, names: &[String], snapshot: Snapshot) -> Generation {
        let snapshot = Arc::new(snapshot);
        for name in names {
            let key = normalize(name.as_bytes()).to_ascii_lowercase();
            self.named
                .push((key.into_boxed_slice(), Arc::clone(&snapshot)));
        }
        self
    }

    /// The snapshot for a request's Host header value; the default one when
    /// it names no virtual host (or there is none: HTTP/1.0).
    #[inline]
    pub fn pick(&self, host: Option<&[u8]>) -> &Snapshot {
        if self.named.is_empty() {
            return &self.default;
        }
        let Some(host) = host else {
            return &self.default;
        };
        let host = normalize(host);
        self.named
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(host))
            .map_or(&self.default, |(_, site)| site)
    }

    /// The default snapshot.
    pub fn default_snapshot(&self) -> &Snapshot {
        &self.default
    }

    /// The virtual hosts' snapshots (each once, though it may have several names).
    pub fn virtual_snapshots(&self) -> impl Iterator<Item = &Snapshot> {
        let mut last: Option<*const Snapshot> = None;
        self.named.iter().filter_map(move |(_, site)| {
            let ptr = Arc::as_ptr(site);
            (last.replace(ptr) != Some(ptr)).then_some(&**site)
        })
    }
}

/// `Example.com.:8080` → `Example.com`: the port and a trailing dot do not
/// change which site is meant (RFC 9110 §7.2; RFC 1034 §3.1 for the dot).
/// A bracketed IPv6 literal keeps its brackets and loses only the port.
fn normalize(host: &[u8]) -> &[u8] {
    let host = without_port(host);
    host.strip_suffix(b".").unwrap_or(host)
}

/// A Host value without its port (and without surrounding blanks).
pub(crate) fn without_port(host: &[u8]) -> &[u8] {
    let host = host.trim_ascii();
    if host.starts_with(b"[") {
        match host.iter().position(|&b| b == b']') {
            Some(end) => &host[..=end],
            None => host,
        }
    } else {
        match host.iter().rposition(|&b| b == b':') {
            Some(colon) => &host[..colon],
            None => host,
        }
    }
}

/// The generation being served, shared by the workers and the reloader.
pub struct Live {
    current: ArcSwap<Generation>,
    generation: AtomicU64,
}

impl Live {
    /// Serving `first` as generation 1.
    pub fn new(first: Generation) -> Live {
        Live {
            current: ArcSwap::from_pointee(first),
            generation: AtomicU64::new(1),
        }
    }

    /// Publishes a new generation; requests parsed after this see only it.
    pub fn publish(&self, next: Generation) {
        self.current.store(Arc::new(next));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The generation's number; cheap enough to read once per loop turn.
    pub fn number(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current generation.
    pub fn current(&self) -> Arc<Generation> {
        self.current.load_full()
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn host_normalization_drops_port_and_trailing_dot() {
        assert_eq!(normalize(b"example.com"), b"example.com");
        assert_eq!(normalize(b"example.com:8080"), b"example.com");
        assert_eq!(normalize(b"example.com.:80"), b"example.com");
        assert_eq!(normalize(b"[::1]:8080"), b"[::1]");
        assert_eq!(normalize(b"[::1]"), b"[::1]");
        assert_eq!(normalize(b" a.test "), b"a.test");
    }
}
