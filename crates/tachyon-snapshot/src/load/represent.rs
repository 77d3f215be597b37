//! A file's representations: its identity body, the precompressed
//! siblings beside it and the codings built at load, each with its head
//! written once for every protocol (ETag, Last-Modified, Cache-Control,
//! the configured fields, Vary).
//!
//! Owns the memory budget for encodings and the header rules' outcome;
//! reads no file (`read` did). Invariant: every representation of a
//! resource with a choice of coding carries `Vary: Accept-Encoding`, its
//! identity and 304s included.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use tachyon_http::conditional::format_date;
use tachyon_http::encoding::Coding;
use tachyon_http::h1;
use tachyon_http::h2::hpack;
use tachyon_http::h3::qpack;
use tachyon_http::response::{Field, Name};

use super::read::{freeze_large, raw_bytes, Raw};
use super::walk::Found;
use super::{LoadOptions, Progress};
use crate::compress::{self, EncodeCache, PendingVariant};
use crate::entry::{Body, Encoded, Representation};
use crate::mime;

/// What every representation of one resource shares.
pub(super) struct Meta {
    modified: u64,
    content_type: String,
    /// Cache-Control, then the configured fields.
    pub(super) fields: Vec<Field>,
}

/// Every file's representations, and what the building left over.
pub(super) struct Represented {
    pub(super) files: Vec<Representation>,
    /// Encodings built but dropped because the memory budget was spent.
    pub(super) over_budget: usize,
    /// Encodings a deferred build left for later.
    pub(super) pending: Vec<PendingVariant>,
}

/// Builds every file's representations over the cores; encodings are
/// charged to the memory budget after every identity body.
pub(super) fn represent_all(
    found: &[Found],
    raws: &[Raw],
    options: &LoadOptions,
    cache: &EncodeCache,
    progress: &Progress,
) -> Represented {
    let by_key: HashMap<&[u8], &Raw> = found
        .iter()
        .zip(raws)
        .map(|(f, raw)| (f.key.as_slice(), raw))
        .collect();
    let identity_bytes: u64 = raws
        .iter()
        .filter(|r| matches!(r.body, Body::Memory(_)))
        .map(|r| r.len)
        .sum();
    let tally = Tally {
        budget: AtomicU64::new(options.max_memory.saturating_sub(identity_bytes)),
        over_budget: AtomicUsize::new(0),
        pending: Mutex::new(Vec::new()),
    };
    let files = found
        .par_iter()
        .zip(raws)
        .map(|(f, raw)| {
            let file = represent_file(f, raw, &by_key, options, cache, &tally);
            progress.done.fetch_add(1, Ordering::Relaxed);
            file
        })
        .collect();
    Represented {
        files,
        over_budget: tally.over_budget.into_inner(),
        pending: tally
            .pending
            .into_inner()
            .unwrap_or_else(|e| e.into_inner()),
    }
}

/// What the parallel representation of files shares: the memory left for
/// encodings, and counts for the summary.
struct Tally {
    budget: AtomicU64,
    over_budget: AtomicUsize,
    /// Encodings a deferred build left for later.
    pending: Mutex<Vec<PendingVariant>>,
}

/// Builds one file's representations: its identity, the precompressed
/// siblings read beside it, and the codings built here while the memory
/// budget lasts.
fn represent_file(
    f: &Found,
    identity: &Raw,
    by_key: &HashMap<&[u8], &Raw>,
    options: &LoadOptions,
    cache: &EncodeCache,
    tally: &Tally,
) -> Representation {
    let Tally {
        budget,
        over_budget,
        pending,
    } = tally;
    let content_type = mime::content_type(&f.path);
    let site_path = String::from_utf8_lossy(&f.key);
    let cache_control = mime::cache_control(&f.path, &content_type);
    let meta = meta(
        &site_path,
        cache_control,
        content_type,
        identity.modified,
        options,
    );
    let mut encoded = Vec::new();
    let mut deferred = false;
    for coding in Coding::ALL {
        let mut sibling = f.key.clone();
        sibling.extend_from_slice(coding.suffix().as_bytes());
        if let Some(raw) = by_key.get(sibling.as_slice()) {
            // A precompressed sibling wins over building one (nginx's
            // gzip_static): the site owner chose its settings. Its body is
            // the sibling entry's own, already counted.
            encoded.push((coding, (*raw).clone()));
            continue;
        }
        if let (Body::Memory(data), true) = (
            &identity.body,
            worth_encoding(&meta, options, coding, identity.len),
        ) {
            // A deferred build takes what is already known (the cache
            // folder makes a restart ready with every variant at once) and
            // leaves the rest to the build after it.
            let result = if options.compression.deferred {
                match cache.known(coding, data, identity.hash) {
                    Some(known) => known,
                    None => {
                        deferred = true;
                        pending
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(PendingVariant::new(coding, data, identity.hash));
                        continue;
                    }
                }
            } else if budget.load(Ordering::Relaxed) == 0 {
                over_budget.fetch_add(1, Ordering::Relaxed);
                continue;
            } else {
                cache.encode(coding, data, identity.hash)
            };
            if let Some(bytes) = result {
                let len = bytes.len() as u64;
                let charged = budget
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        left.checked_sub(len)
                    })
                    .is_ok();
                if charged {
                    let mut raw = raw_bytes(bytes);
                    raw.modified = identity.modified;
                    encoded.push((coding, raw));
                } else {
                    over_budget.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    assemble(
        freeze_large(identity.clone(), cache),
        encoded,
        deferred,
        &meta,
    )
}

pub(super) fn worth_encoding(meta: &Meta, options: &LoadOptions, coding: Coding, len: u64) -> bool {
    options.compression.codings.contains(&coding)
        && len >= options.compression.min_size
        && compress::compressible(&meta.content_type)
}

/// The Cache-Control and configured headers for a site path.
pub(super) fn meta(
    site_path: &str,
    default_cache_control: &str,
    content_type: String,
    modified: u64,
    options: &LoadOptions,
) -> Meta {
    let mut cache_control = default_cache_control;
    let mut fields = vec![];
    for rule in options.header_rules.iter().filter(|r| r.matches(site_path)) {
        if let Some(value) = rule.cache_control() {
            cache_control = value;
        }
        fields.extend_from_slice(rule.fields());
    }
    // The defaults are constants and rules were checked when built.
    if let Some(field) = Field::new(Name::CacheControl, cache_control) {
        fields.insert(0, field);
    }
    Meta {
        modified,
        content_type,
        fields,
    }
}

/// Builds every representation's heads; all carry `Vary` when there is a
/// choice (RFC 9110 §12.5.5), or will be once deferred variants are built,
/// including identity and 304s.
pub(super) fn assemble(
    identity: Raw,
    encoded: Vec<(Coding, Raw)>,
    deferred: bool,
    meta: &Meta,
) -> Representation {
    let vary = deferred || !encoded.is_empty();
    let encoded: Vec<Encoded> = encoded
        .into_iter()
        .map(|(coding, raw)| Encoded {
            coding,
            entry: Arc::new(represent(raw, Some(coding), vary, meta, Vec::new())),
        })
        .collect();
    represent(identity, None, vary, meta, encoded)
}

fn represent(
    raw: Raw,
    coding: Option<Coding>,
    vary: bool,
    meta: &Meta,
    encoded: Vec<Encoded>,
) -> Representation {
    // Each coding's tag differs even if two hashes collided: the suffix
    // names the coding, as nginx and Apache do for their variants.
    let etag = match coding {
        None => format!("\"{:016x}\"", raw.hash as u64),
        Some(c) => format!("\"{:016x}-{}\"", raw.hash as u64, c.token()),
    }
    .into_bytes()
    .into_boxed_slice();
    let mut fields = Vec::with_capacity(meta.fields.len() + 4);
    fields.extend(Field::new(Name::ETag, &String::from_utf8_lossy(&etag)));
    fields.extend(Field::new(Name::LastModified, &format_date(meta.modified)));
    fields.extend_from_slice(&meta.fields);
    if vary {
        fields.extend(Field::new(Name::Vary, "Accept-Encoding"));
    }
    fields.extend(Field::new(Name::AcceptRanges, "bytes"));
    let h1 = h1::Prepared::new(&fields, &meta.content_type, coding, raw.len);
    let h2 = hpack::Prepared::new(&fields, &meta.content_type, coding, raw.len);
    let h3 = qpack::Prepared::new(&fields, &meta.content_type, coding, raw.len);

    Representation {
        body: raw.body,
        len: raw.len,
        etag,
        last_modified: meta.modified,
        content_type: meta.content_type.clone().into_boxed_str(),
        coding,
        fields: fields.into_boxed_slice(),
        h1,
        h2,
        h3,
        encoded: encoded.into_boxed_slice(),
    }
}
