//! The site's tree of paths: files at their keys, `/dir/` to its index
//! file or listing, `/dir` redirected to `/dir/`, clean URLs and redirect
//! rules.
//!
//! Owns what each path maps to, not what a file's representation holds
//! (`represent`). Invariant: every directory the walk found answers at
//! `/dir` (a redirect) and at `/dir/` when it has an index file or
//! listings are on.

use std::collections::HashMap;
use std::sync::Arc;

use percent_encoding::percent_encode;
use rayon::prelude::*;
use tachyon_http::encoding::Coding;
use tachyon_http::response::{Field, Name};
use tachyon_http::Status;

use super::read::raw;
use super::represent::{assemble, meta, worth_encoding, Vary};
use super::{LoadOptions, LoadStats};
use crate::compress::{self, Effort};
use crate::entry::{Entry, Representation};
use crate::listing::{self, Child, PATH};

/// The snapshot's map from site path to entry.
pub(super) type Entries = HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>;

/// The site's paths: each file at its own, then what directories,
/// clean URLs and redirect rules add (a redirect rule wins over a file).
pub(super) fn entries(
    keys: impl Iterator<Item = Vec<u8>>,
    files: Vec<Representation>,
    directories: Vec<Vec<u8>>,
    mut children: HashMap<Vec<u8>, Vec<Child>>,
    options: &LoadOptions,
    stats: &mut LoadStats,
) -> Entries {
    let mut entries = Entries::default();
    for (key, file) in keys.zip(files) {
        stats.count(&file);
        entries.insert(key.into_boxed_slice(), Entry::File(Arc::new(file)));
    }
    add_directories(&mut entries, directories, &mut children, options);
    if options.clean_urls {
        add_clean_urls(&mut entries);
    }
    for rule in &options.redirects {
        entries.insert(
            rule.from.clone().into_boxed_slice(),
            Entry::Redirect {
                status: rule.status,
                location: rule.to.clone().into_boxed_slice(),
            },
        );
    }
    entries
}

/// `/dir/` serves the first index file (or a listing); `/dir` redirects to `/dir/`.
fn add_directories(
    entries: &mut Entries,
    directories: Vec<Vec<u8>>,
    children: &mut HashMap<Vec<u8>, Vec<Child>>,
    options: &LoadOptions,
) {
    let mut listed = Vec::new();
    for dir in directories {
        let mut slash = dir.clone();
        if slash.last() != Some(&b'/') {
            slash.push(b'/');
        }
        let index = options.index_files.iter().find_map(|name| {
            let mut key = slash.clone();
            key.extend_from_slice(name.as_bytes());
            match entries.get(key.as_slice()) {
                Some(Entry::File(f)) => Some(Arc::clone(f)),
                _ => None,
            }
        });
        if let Some(index) = index {
            entries.insert(slash.clone().into_boxed_slice(), Entry::File(index));
        } else if options.listing {
            listed.push((slash.clone(), children.remove(&dir).unwrap_or_default()));
        }
        if dir != b"/" {
            let location = percent_encode_path(&slash).into_boxed_slice();
            entries.insert(
                dir.into_boxed_slice(),
                Entry::Redirect {
                    status: Status::MovedPermanently,
                    location,
                },
            );
        }
    }
    // Built over the cores: a build tree lists thousands of directories.
    let listings: Vec<_> = listed
        .into_par_iter()
        .map(|(slash, kids)| {
            let listing = listing_entry(&slash, &kids, options);
            (slash.into_boxed_slice(), listing)
        })
        .collect();
    entries.extend(listings);
}

/// `/about` → `about.html`, unless a file or directory is `/about`.
fn add_clean_urls(entries: &mut Entries) {
    let aliases: Vec<(Box<[u8]>, Entry)> = entries
        .iter()
        .filter_map(|(key, entry)| {
            let stem = key.strip_suffix(b".html")?;
            (!stem.ends_with(b"/") && !entries.contains_key(stem))
                .then(|| (stem.to_vec().into_boxed_slice(), entry.clone()))
        })
        .collect();
    entries.extend(aliases);
}

/// The listing page and JSON for a directory without an index file.
fn listing_entry(slash: &[u8], children: &[Child], options: &LoadOptions) -> Entry {
    let site_path = String::from_utf8_lossy(slash);
    let modified = children.iter().map(|c| c.modified).max().unwrap_or(0);
    let page = |body: String, content_type: &str| {
        // A listing changes whenever the directory does (no-cache unless a
        // rule says otherwise), and its HTML and JSON forms share the path.
        // Configured headers (CSP, CORS) apply as to any file.
        let mut meta = meta(
            &site_path,
            "no-cache",
            content_type.to_string(),
            modified,
            options,
        );
        meta.fields.extend(Field::new(Name::Vary, "Accept"));
        let data = body.into_bytes();
        let len = data.len() as u64;
        let mut encoded = Vec::new();
        for coding in Coding::ALL {
            // Generated on every build (and every reload) and served
            // no-cache: a quick level, not the densest. At the densest
            // settings a checkout's listings (target/ lists thousands of
            // files) took 27 s of one core before the first answer.
            if worth_encoding(&meta, options, coding, len) {
                if let Some(bytes) = compress::encode_with(coding, &data, Effort::Quick) {
                    encoded.push((coding, raw(bytes)));
                }
            }
        }
        Arc::new(assemble(
            raw(data),
            encoded,
            Vec::new(),
            Vary::default(),
            &meta,
        ))
    };
    Entry::Listing {
        html: page(
            listing::html(&site_path, children),
            "text/html; charset=utf-8",
        ),
        json: page(listing::json(children), "application/json"),
    }
}

/// Percent-encodes a site path for a Location header.
fn percent_encode_path(path: &[u8]) -> Vec<u8> {
    percent_encode(path, PATH).to_string().into_bytes()
}
