//! A file's representations: its identity body, the precompressed
//! siblings beside it and the codings built at load, each with its head
//! written once for every protocol (ETag, Last-Modified, Cache-Control,
//! the configured fields, Vary).
//!
//! Also a file's offer as a compression dictionary (`Use-As-Dictionary`)
//! and its deltas from the earlier versions the store keeps.
//!
//! Owns the memory budget for encodings and the header rules' outcome;
//! reads no file (`read` did). Invariant: every representation of a
//! resource with a choice of coding carries `Vary: Accept-Encoding` (and
//! `Available-Dictionary` when it has deltas), its identity and 304s
//! included.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rayon::prelude::*;
use tachyon_http::conditional::format_date;
use tachyon_http::encoding::Coding;
use tachyon_http::h1;
use tachyon_http::h2::hpack;
use tachyon_http::h3::qpack;
use tachyon_http::response::{Field, Name};

use super::read::{freeze_encoding, freeze_large, raw_bytes, Raw};
use super::walk::Found;
use super::{LoadOptions, Progress};
use crate::compress::{self, EncodeCache, PendingVariant};
use crate::dictionary::{self, Version};
use crate::entry::{Body, Delta, Encoded, Representation};
use crate::mime;
use crate::rules::DictionaryRule;

/// What every representation of one resource shares.
pub(super) struct Meta {
    modified: u64,
    content_type: String,
    /// Cache-Control, then the configured fields.
    pub(super) fields: Vec<Field>,
}

/// A file offered as a compression dictionary: its `match` pattern and the
/// SHA-256 a browser will name it by.
pub(super) struct Offer {
    pattern: String,
    sha: [u8; 32],
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
    // Every version this build serves is noted before any delta is built,
    // so each file sees all of its pattern's current versions.
    let offers: Vec<Option<Offer>> = found
        .par_iter()
        .zip(raws)
        .map(|(f, raw)| offer(f, raw, options))
        .collect();
    if options.dictionaries.enabled {
        let served = offers
            .iter()
            .zip(raws)
            .filter_map(|(o, raw)| match (o, &raw.body) {
                (Some(o), Body::Memory(body)) => Some((o.pattern.clone(), o.sha, body.clone())),
                _ => None,
            })
            .collect();
        cache.versions.note(served, &options.dictionaries);
    }
    let files = found
        .par_iter()
        .zip(raws)
        .zip(&offers)
        .map(|((f, raw), offer)| {
            let file = represent_file(f, raw, offer.as_ref(), &by_key, options, cache, &tally);
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

impl Tally {
    /// Takes `len` bytes of built encoding from the budget; false (and
    /// counted) when they do not fit in what is left.
    fn charge(&self, len: usize) -> bool {
        let len = len as u64;
        let charged = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(len)
            })
            .is_ok();
        if !charged {
            self.over_budget.fetch_add(1, Ordering::Relaxed);
        }
        charged
    }
}

/// Builds one file's representations: its identity, the precompressed
/// siblings read beside it, and the codings built here while the memory
/// budget lasts.
fn represent_file(
    f: &Found,
    identity: &Raw,
    offer: Option<&Offer>,
    by_key: &HashMap<&[u8], &Raw>,
    options: &LoadOptions,
    cache: &EncodeCache,
    tally: &Tally,
) -> Representation {
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
            encoded.push((coding, freeze_large((*raw).clone(), cache)));
            continue;
        }
        let Body::Memory(data) = &identity.body else {
            continue;
        };
        if !worth_encoding(&meta, options, coding, identity.len) {
            continue;
        }
        match build_coding(coding, data, identity, options, cache, tally) {
            Built::Ready(raw) => encoded.push((coding, raw)),
            Built::Deferred => deferred = true,
            Built::Skipped => {}
        }
    }
    let (deltas, deltas_deferred) = match (offer, &identity.body) {
        (Some(offer), Body::Memory(data)) => {
            build_deltas(offer, data, identity, options, cache, tally)
        }
        _ => (Vec::new(), false),
    };
    let mut meta = meta;
    if let Some(offer) = offer {
        meta.fields.extend(Field::new(
            Name::UseAsDictionary,
            &format!("match=\"{}\"", offer.pattern),
        ));
    }
    assemble(
        freeze_large(identity.clone(), cache),
        encoded,
        deltas,
        Vary {
            encoding: deferred,
            dictionary: deltas_deferred,
        },
        &meta,
    )
}

/// What became of one coding of a file's identity body.
enum Built {
    /// Built (or known to the cache), charged to the budget, frozen when
    /// large.
    Ready(Raw),
    /// Left to the build after this one (`pending`).
    Deferred,
    /// Not built: the budget is spent, or the coding saves nothing.
    Skipped,
}

/// Builds `coding` of `data` while the memory budget lasts; a deferred
/// load takes only what the cache already knows and leaves the rest for
/// the build after it (the cache folder makes a restart ready with every
/// variant at once).
fn build_coding(
    coding: Coding,
    data: &Bytes,
    identity: &Raw,
    options: &LoadOptions,
    cache: &EncodeCache,
    tally: &Tally,
) -> Built {
    let result = if options.compression.deferred {
        match cache.known(coding, data, identity.hash) {
            Some(known) => known,
            None => {
                tally
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(PendingVariant::new(coding, data, identity.hash));
                return Built::Deferred;
            }
        }
    } else if tally.budget.load(Ordering::Relaxed) == 0 {
        tally.over_budget.fetch_add(1, Ordering::Relaxed);
        return Built::Skipped;
    } else {
        cache.encode(coding, data, identity.hash)
    };
    let Some(bytes) = result else {
        return Built::Skipped;
    };
    if !tally.charge(bytes.len()) {
        return Built::Skipped;
    }
    let mut raw = raw_bytes(bytes);
    raw.modified = identity.modified;
    Built::Ready(freeze_encoding(raw, coding, identity, cache))
}

/// Whether this file is offered as a dictionary: on unless turned off, for
/// the kinds that change with deploys (or whatever a rule names), within
/// the sizes worth it, for bodies in memory.
fn offer(f: &Found, raw: &Raw, options: &LoadOptions) -> Option<Offer> {
    if !options.dictionaries.enabled
        || !(dictionary::MIN_LEN..=dictionary::MAX_LEN).contains(&raw.len)
    {
        return None;
    }
    let Body::Memory(body) = &raw.body else {
        return None;
    };
    let site_path = String::from_utf8_lossy(&f.key);
    // The last rule that says something wins.
    let rule = options
        .header_rules
        .iter()
        .rev()
        .filter(|r| r.matches(&site_path))
        .find_map(|r| r.dictionary());
    let pattern = match rule {
        Some(DictionaryRule::Off) => return None,
        Some(DictionaryRule::Match(pattern)) => pattern.clone(),
        None if dictionary::offered_kind(&mime::content_type(&f.path)) => {
            dictionary::pattern(&site_path)?
        }
        None => return None,
    };
    Some(Offer {
        pattern,
        sha: dictionary::sha256(body),
    })
}

/// The deltas of `data` from the earlier versions of its pattern, built now
/// (or, in a deferred build, when already known, the rest left pending),
/// each kept only when smaller than what the file would send without it.
/// The flag: some were left pending.
fn build_deltas(
    offer: &Offer,
    data: &bytes::Bytes,
    identity: &Raw,
    options: &LoadOptions,
    cache: &EncodeCache,
    tally: &Tally,
) -> (Vec<(Coding, Arc<Version>, Raw)>, bool) {
    let sources = cache.versions.sources(
        &offer.pattern,
        &offer.sha,
        options.dictionaries.keep_versions,
    );
    let mut deltas = Vec::new();
    let mut deferred = false;
    for source in &sources {
        for coding in Coding::DELTAS {
            let built = if options.compression.deferred {
                match cache.known_delta(coding, data, identity.hash, source) {
                    Some(known) => known,
                    None => {
                        deferred = true;
                        tally
                            .pending
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(PendingVariant::delta(coding, data, identity.hash, source));
                        continue;
                    }
                }
            } else {
                cache.delta(coding, data, identity.hash, source)
            };
            let Some(bytes) = built else { continue };
            if !tally.charge(bytes.len()) {
                continue;
            }
            let mut raw = raw_bytes(bytes);
            raw.modified = identity.modified;
            deltas.push((coding, Arc::clone(source), raw));
        }
    }
    (deltas, deferred)
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

/// Which request fields a file's responses vary on beyond what its built
/// representations show: variants still to be built in the background.
#[derive(Clone, Copy, Default)]
pub(super) struct Vary {
    pub(super) encoding: bool,
    pub(super) dictionary: bool,
}

/// Builds every representation's heads; all carry `Vary` when there is a
/// choice (RFC 9110 §12.5.5), or will be once deferred variants are built,
/// including identity and 304s.
pub(super) fn assemble(
    identity: Raw,
    encoded: Vec<(Coding, Raw)>,
    deltas: Vec<(Coding, Arc<Version>, Raw)>,
    pending: Vary,
    meta: &Meta,
) -> Representation {
    let vary = Vary {
        encoding: pending.encoding || !encoded.is_empty() || !deltas.is_empty(),
        dictionary: pending.dictionary || !deltas.is_empty(),
    };
    // A delta is kept only when it beats what the file sends without it.
    let smallest = encoded
        .iter()
        .map(|(_, raw)| raw.len)
        .chain([identity.len])
        .min()
        .unwrap_or(identity.len);
    let encoded: Vec<Encoded> = encoded
        .into_iter()
        .map(|(coding, raw)| Encoded {
            coding,
            entry: Arc::new(represent(raw, Some(coding), None, vary, meta)),
        })
        .collect();
    let deltas: Vec<Delta> = deltas
        .into_iter()
        .filter(|(_, _, raw)| raw.len < smallest)
        .map(|(coding, source, raw)| {
            let saving = smallest - raw.len;
            let mut entry = represent(raw, Some(coding), Some(&source.sha), vary, meta);
            entry.saving = saving;
            Delta {
                coding,
                dictionary: source.sha,
                entry: Arc::new(entry),
            }
        })
        .collect();
    let mut file = represent(identity, None, None, vary, meta);
    file.encoded = encoded.into_boxed_slice();
    file.deltas = deltas.into_boxed_slice();
    file
}

fn represent(
    raw: Raw,
    coding: Option<Coding>,
    dictionary: Option<&[u8; 32]>,
    vary: Vary,
    meta: &Meta,
) -> Representation {
    // Each coding's tag differs even if two hashes collided: the suffix
    // names the coding, as nginx and Apache do for their variants, and a
    // delta's also names its dictionary.
    let etag = match (coding, dictionary) {
        (None, _) => format!("\"{:016x}\"", raw.hash as u64),
        (Some(c), None) => format!("\"{:016x}-{}\"", raw.hash as u64, c.token()),
        (Some(c), Some(d)) => format!(
            "\"{:016x}-{}-{:08x}\"",
            raw.hash as u64,
            c.token(),
            u32::from_be_bytes([d[0], d[1], d[2], d[3]])
        ),
    }
    .into_bytes()
    .into_boxed_slice();
    let mut fields = Vec::with_capacity(meta.fields.len() + 4);
    fields.extend(Field::new(Name::ETag, &String::from_utf8_lossy(&etag)));
    fields.extend(Field::new(Name::LastModified, &format_date(meta.modified)));
    fields.extend_from_slice(&meta.fields);
    match (vary.encoding, vary.dictionary) {
        (_, true) => fields.extend(Field::new(
            Name::Vary,
            "Accept-Encoding, Available-Dictionary",
        )),
        (true, false) => fields.extend(Field::new(Name::Vary, "Accept-Encoding")),
        (false, false) => {}
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
        encoded: Box::default(),
        deltas: Box::default(),
        saving: 0,
    }
}
