//! The encoding half of a connection's HPACK state (RFC 7541 §2.3.2, §4):
//! a mirror of the client's dynamic table, so that a field this connection
//! already sent goes as one index octet instead of its literal.
//!
//! Owns the table's entries, its size under the client's
//! SETTINGS_HEADER_TABLE_SIZE, and the size updates that announce a new
//! limit (§6.3). Does not write fields: [`super::Hpack`] writes every
//! head as a stateless block (static indices and literals without
//! indexing, the same bytes on any connection, most of them prepared at
//! load), and [`Encoder::index`] rewrites that block in place for this
//! connection: a field the table holds becomes its index, a new one a
//! literal with incremental indexing that the client adds to its table
//! (but a representation's etag and a response's numbers only when they
//! come twice in a row, which a browser fetching distinct files never
//! sees). Why, and what it saves and costs:
//! `bench/results/hpack-index-2026-12-05`.
//!
//! Invariant: blocks are indexed in the order they are sent on the
//! connection, every one of them, and no rewritten field is longer than
//! the literal it replaces, so the table here is the client's after each
//! block.

use std::collections::VecDeque;

use super::decode::{integer as read_integer, string_octets, STATIC_TABLE};
use super::Integer;

/// §4.1: an entry's size counts 32 octets of overhead.
const ENTRY_OVERHEAD: usize = 32;

/// The most we use of the client's table: its default, what h2o and
/// nginx use too. A client announcing more gets no more.
pub const MAX_TABLE: usize = 4096;

/// Static indices of names whose values belong to one response or one
/// representation (`content-length`, `content-range`, `etag`): a browser
/// fetches a file once per connection, so in the table they would only
/// push out the fields every response repeats, at a cost per response
/// (`bench/results/hpack-index-2026-12-05`). Such a field is indexed only
/// when it equals the last one of its name: a client fetching one file
/// again and again (a poller, a benchmark) gets it as an index from its
/// third response on (`bench/results/hpack-repeat-2026-12-05`).
const ONCE: [usize; 3] = [28, 30, 34];

/// Slots of the tag index: twice the most entries a 4096-octet table
/// holds (32 octets each at least), so probes stay short.
const SLOTS: usize = 256;
/// A slot never used: where a probe for a missing tag stops.
const EMPTY: u32 = u32::MAX;

/// One entry the client's table holds: its field as [`super::Hpack`]
/// wrote it (the key compared against), kept in `Encoder::keys`.
struct Entry {
    tag: u64,
    /// Where its key starts in `keys`, counted (modulo 2^32) from the
    /// first key ever kept (`Encoder::dropped` are gone from the front).
    at: u32,
    len: u16,
    /// Its size in §4.1's measure (at most half of [`MAX_TABLE`]).
    size: u16,
}

/// The encoding half of a connection's HPACK state.
pub struct Encoder {
    /// Oldest first; the newest has index 62 (§2.3.3).
    entries: VecDeque<Entry>,
    /// The entries' keys end to end, oldest first.
    keys: Vec<u8>,
    /// Key octets evicted from the front of `keys` and not yet compacted.
    dropped: usize,
    /// Entries evicted so far: the number of the oldest entry held, the
    /// entries being numbered in the order they were added.
    evicted: u32,
    /// Entries by tag, open addressing with linear probing (a scan of the
    /// table per field cost too much on a site of many paths,
    /// `bench/results/hpack-index-2026-12-05`): each slot holds an entry's
    /// number, or is [`EMPTY`]; a slot whose entry was evicted is reused
    /// by the next insert on its probe path, and the index is rebuilt once
    /// 3/4 of the slots are taken. Allocated with the first entry.
    slots: Vec<u32>,
    taken: usize,
    size: usize,
    /// The table's maximum size as the client last heard it.
    max: usize,
    /// The client's SETTINGS_HEADER_TABLE_SIZE since the last block,
    /// capped at [`MAX_TABLE`]: the lowest and the last, announced at the
    /// next block (§4.2: a reduction, even one raised again, is signalled).
    pending: Option<(usize, usize)>,
    /// For each name of [`ONCE`], the tag of the last such field sent.
    last_once: [u64; ONCE.len()],
}

impl Encoder {
    /// A table of `max` octets, the size both ends start from (§4.2: the
    /// SETTINGS default, 4096).
    pub fn new(max: usize) -> Encoder {
        Encoder {
            entries: VecDeque::new(),
            keys: Vec::new(),
            dropped: 0,
            evicted: 0,
            slots: Vec::new(),
            taken: 0,
            size: 0,
            max,
            pending: None,
            last_once: [0; ONCE.len()],
        }
    }

    /// The client's SETTINGS_HEADER_TABLE_SIZE changed to `setting`.
    pub fn set_limit(&mut self, setting: usize) {
        let max = setting.min(MAX_TABLE);
        let lowest = self.pending.map_or(max, |(lowest, _)| lowest.min(max));
        self.pending = Some((lowest, max));
    }

    /// Rewrites `block`, written by [`super::Hpack`], for this connection:
    /// fields the table holds become indices, new ones are added to it.
    pub fn index(&mut self, block: &mut Vec<u8>) {
        let mut read = 0;
        if let Some((lowest, last)) = self.pending.take() {
            for max in [lowest, last] {
                if max != self.max {
                    // §6.3: a dynamic table size update, in front of the
                    // fields (and after an update written before it).
                    let update = Integer::new(0x20, 5, max);
                    let update = update.octets();
                    block.splice(read..read, update.iter().copied());
                    read += update.len();
                    self.max = max;
                    self.evict_to(max);
                }
            }
        }
        let mut write = read;
        while read < block.len() {
            let start = read;
            let end = match Form::read(block, &mut read) {
                Form::Literal(field) => {
                    write = self.field(block, start..read, &field, write);
                    continue;
                }
                Form::Indexed => read,
                Form::Other => {
                    debug_assert!(false, "unexpected HPACK form {:#x}", block[start]);
                    block.len()
                }
            };
            // Copied as it is: a static index, or the rest of a block in a
            // form this pass does not know (never from our dialect).
            block.copy_within(start..end, write);
            write += end - start;
            read = end;
        }
        block.truncate(write);
    }

    /// Writes the literal at `key` (its bytes in `block`) at `write` as an
    /// index, a literal with incremental indexing, or as it is; returns
    /// where the next field goes.
    fn field(
        &mut self,
        block: &mut [u8],
        key: std::ops::Range<usize>,
        field: &Literal,
        write: usize,
    ) -> usize {
        let size = field.size + ENTRY_OVERHEAD;
        let bytes = &block[key.clone()];
        // A field of more than half the table would push out the rest.
        let tag = (size <= self.max / 2).then(|| tag(bytes));
        let Some(tag) = tag.filter(|&tag| self.repeats(field.name_index, tag)) else {
            block.copy_within(key.clone(), write);
            return write + key.len();
        };
        if let Some(index) = self.find(tag, bytes) {
            let index = Integer::new(0x80, 7, index);
            let index = index.octets();
            block[write..write + index.len()].copy_from_slice(index);
            return write + index.len();
        }
        // Kept before the rewrite below overwrites the literal.
        self.insert(tag, &block[key.clone()], size);
        // §6.2.1: the name's index with a 6-bit prefix, then the rest of
        // the literal (a new name's string, the value) unchanged.
        let name = Integer::new(0x40, 6, field.name_index);
        let n = name.octets().len();
        block.copy_within(field.rest.clone(), write + n);
        block[write..write + n].copy_from_slice(name.octets());
        write + n + field.rest.len()
    }

    /// Whether a field named by static index `name` with `tag` may go to
    /// the table: any field, but one of [`ONCE`] only when it equals the
    /// last of its name (checked before the table, which for a browser's
    /// fetches never holds it; a tag equal by chance only indexes a field
    /// early, which is harmless).
    fn repeats(&mut self, name: usize, tag: u64) -> bool {
        match ONCE.iter().position(|&n| n == name) {
            Some(k) => std::mem::replace(&mut self.last_once[k], tag) == tag,
            None => true,
        }
    }

    /// The index (§2.3.3) of the entry whose key is `bytes`.
    fn find(&self, tag: u64, bytes: &[u8]) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut at = tag as usize % SLOTS;
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            if let Some(p) = self.position(slot) {
                let entry = &self.entries[p];
                if entry.tag == tag && self.key(entry) == bytes {
                    return Some(62 + self.entries.len() - 1 - p);
                }
            }
            at = (at + 1) % SLOTS;
        }
    }

    /// Where entry number `n` is in `entries`, if it is still held.
    fn position(&self, n: u32) -> Option<usize> {
        let p = n.wrapping_sub(self.evicted) as usize;
        (p < self.entries.len()).then_some(p)
    }

    /// Files entry number `n` under `tag`: in the first slot of its probe
    /// path that is empty or whose entry was evicted.
    fn file(&mut self, tag: u64, n: u32) {
        let mut at = tag as usize % SLOTS;
        loop {
            let slot = self.slots[at];
            if slot == EMPTY || self.position(slot).is_none() {
                self.taken += usize::from(slot == EMPTY);
                self.slots[at] = n;
                return;
            }
            at = (at + 1) % SLOTS;
        }
    }

    /// Refiles the entries held into an empty index.
    fn rebuild(&mut self) {
        self.slots.clear();
        self.slots.resize(SLOTS, EMPTY);
        self.taken = 0;
        for p in 0..self.entries.len() {
            let n = self.evicted.wrapping_add(p as u32);
            self.file(self.entries[p].tag, n);
        }
    }

    fn key(&self, entry: &Entry) -> &[u8] {
        let at = entry.at.wrapping_sub(self.dropped as u32) as usize;
        &self.keys[at..at + usize::from(entry.len)]
    }

    /// Adds the field `key` as the newest entry, evicting the oldest
    /// until it fits (§4.4; `size` is at most the table's).
    fn insert(&mut self, tag: u64, key: &[u8], size: usize) {
        self.evict_to(self.max - size);
        self.entries.push_back(Entry {
            tag,
            at: (self.dropped + self.keys.len()) as u32,
            len: key.len() as u16,
            size: size as u16,
        });
        self.keys.extend_from_slice(key);
        self.size += size;
        if self.slots.is_empty() {
            self.slots.resize(SLOTS, EMPTY);
        }
        let n = self.evicted.wrapping_add(self.entries.len() as u32 - 1);
        self.file(tag, n);
        if self.taken > SLOTS * 3 / 4 {
            self.rebuild();
        }
    }

    fn evict_to(&mut self, size: usize) {
        while self.size > size {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.size -= usize::from(old.size);
            self.evicted = self.evicted.wrapping_add(1);
        }
        self.compact();
    }

    /// Drops evicted keys from the front of `keys` once they are most of it.
    fn compact(&mut self) {
        let gone = self.entries.front().map_or(self.keys.len(), |e| {
            e.at.wrapping_sub(self.dropped as u32) as usize
        });
        if gone > 0 && gone * 2 >= self.keys.len() {
            self.keys.drain(..gone);
            self.dropped += gone;
        }
    }
}

/// A literal without indexing as [`super::Hpack`] writes it (§6.2.2).
struct Literal {
    /// The name's static index, 0 for a new name.
    name_index: usize,
    /// After the name's index: a new name's string, then the value's.
    rest: std::ops::Range<usize>,
    /// Name and value octets (§4.1's measure without the overhead).
    size: usize,
}

/// A field's form in a block from [`super::Hpack`].
enum Form {
    /// An indexed field (§6.1): a static entry.
    Indexed,
    Literal(Literal),
    /// Anything else, or a form cut short: `Hpack` writes none.
    Other,
}

impl Form {
    /// Reads the field at `*pos` and moves past it; after `Other` the
    /// caller copies from where the field began.
    fn read(block: &[u8], pos: &mut usize) -> Form {
        match block[*pos] {
            first if first & 0x80 != 0 => match read_integer(block, pos, 7) {
                Ok(_) => Form::Indexed,
                Err(_) => Form::Other,
            },
            first if first & 0xf0 == 0 => {
                Literal::read(block, pos).map_or(Form::Other, Form::Literal)
            }
            _ => Form::Other,
        }
    }
}

impl Literal {
    /// Reads a literal without indexing at `*pos` (advanced past it only
    /// when it is whole).
    fn read(block: &[u8], pos: &mut usize) -> Option<Literal> {
        let mut at = *pos;
        let name_index = read_integer(block, &mut at, 4).ok()?;
        let rest = at;
        let name_len = match name_index {
            0 => raw_string(block, &mut at)?,
            1..=61 => STATIC_TABLE[name_index - 1].0.len(),
            _ => return None,
        };
        let value_len = raw_string(block, &mut at)?;
        *pos = at;
        Some(Literal {
            name_index,
            rest: rest..at,
            size: name_len + value_len,
        })
    }
}

/// Reads a string literal without Huffman coding at `*pos`; its length.
fn raw_string(block: &[u8], pos: &mut usize) -> Option<usize> {
    match string_octets(block, pos).ok()? {
        (false, octets) => Some(octets.len()),
        (true, _) => None,
    }
}

/// A cheap hash of a key, compared before its bytes: its length and its
/// first and last 8 octets (the bytes decide; the tag only spreads them).
fn tag(bytes: &[u8]) -> u64 {
    let (first, last) = match bytes.len() {
        8.. => (word(&bytes[..8]), word(&bytes[bytes.len() - 8..])),
        _ => {
            let mut short = [0u8; 8];
            short[..bytes.len()].copy_from_slice(bytes);
            (u64::from_le_bytes(short), 0)
        }
    };
    let mut h = bytes.len() as u64;
    for w in [first, last] {
        h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23);
    }
    h
}

fn word(eight: &[u8]) -> u64 {
    u64::from_le_bytes(eight.try_into().expect("eight octets"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::h2::hpack::tests::{hex, ok_head};
    use crate::h2::hpack::{Hpack, Prepared};
    use crate::head::Dialect;
    use crate::response::{Field, Name, Status};

    fn reference_decode(
        decoder: &mut loona_hpack::Decoder,
        block: &[u8],
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        decoder
            .decode(block)
            .expect("the reference decoder takes the block")
    }

    /// RFC 7541 C.5's first head as `Hpack` writes it: `:status` 302 or 307
    /// by name, then three literals by static name.
    fn c5_head(status: Status, date: &str) -> Vec<u8> {
        let mut block = Vec::new();
        Hpack::status(&mut block, status);
        Hpack::field(&mut block, &Name::CacheControl, &[b"private"]);
        Hpack::field(&mut block, &Name::Date, &[date.as_bytes()]);
        Hpack::field(&mut block, &Name::Location, &[b"https://www.example.com"]);
        block
    }

    #[test]
    fn rfc7541_c5_responses_index_and_evict_as_the_rfc_does() {
        // C.5: a 256-octet table, no Huffman coding.
        let mut encoder = Encoder::new(256);
        let mut block = c5_head(Status::Found, "Mon, 21 Oct 2013 20:13:21 GMT");
        encoder.index(&mut block);
        let c51 = hex(
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
             2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
             6c65 2e63 6f6d",
        );
        assert_eq!(block, c51);
        assert_eq!(encoder.size, 222);
        // C.5.2: `:status: 307` evicts `:status: 302`; the rest are indices.
        let mut block = c5_head(Status::TemporaryRedirect, "Mon, 21 Oct 2013 20:13:21 GMT");
        encoder.index(&mut block);
        assert_eq!(block, hex("4803 3330 37c1 c0bf"));
        assert_eq!(encoder.size, 222);
        assert_eq!(encoder.entries.len(), 4);
    }

    #[test]
    fn a_repeated_head_is_one_octet_a_field_from_its_third_time() {
        let date = DateCache::new();
        let fields = [Field::new(Name::ETag, "\"640babf1c53cd10e\"").unwrap()];
        let prepared = Prepared::new(&fields, "application/octet-stream", None, 1024);
        let mut encoder = Encoder::new(MAX_TABLE);
        let mut reference = loona_hpack::Decoder::new();
        let mut first = ok_head(&prepared, &date);
        let plain = reference_decode(&mut loona_hpack::Decoder::new(), &first);
        encoder.index(&mut first);
        assert_eq!(reference_decode(&mut reference, &first), plain);
        let mut second = ok_head(&prepared, &date);
        encoder.index(&mut second);
        assert_eq!(reference_decode(&mut reference, &second), plain);
        // `:status`, server, nosniff, content-type, date: an octet each;
        // the etag and `content-length: 1024`, seen once before, are
        // literals the client adds to its table (20 and 6 octets: the
        // name's index takes one octet with §6.2.1's prefix, two without).
        assert_eq!(second.len(), 5 + 20 + 6, "{second:02x?}");
        let mut third = ok_head(&prepared, &date);
        encoder.index(&mut third);
        assert_eq!(reference_decode(&mut reference, &third), plain);
        assert_eq!(third.len(), 7, "{third:02x?}");
        // Heads of a thousand other files evict those entries many times
        // over (and rebuild the tag index); once sent again, the head is
        // found again: indices of one or two octets (past 126).
        for n in 0..1000 {
            let caching = Field::new(Name::CacheControl, &format!("max-age={n}")).unwrap();
            let other = Prepared::new(&[caching], "text/html", None, n);
            let mut block = ok_head(&other, &date);
            let plain = reference_decode(&mut loona_hpack::Decoder::new(), &block);
            encoder.index(&mut block);
            assert_eq!(reference_decode(&mut reference, &block), plain);
        }
        for again in [false, true] {
            let mut block = ok_head(&prepared, &date);
            encoder.index(&mut block);
            assert_eq!(reference_decode(&mut reference, &block), plain);
            assert!(!again || block.len() <= 5 * 2 + 21 + 7, "{block:02x?}");
        }
    }

    #[test]
    fn the_etags_and_lengths_of_distinct_files_stay_out_of_the_table() {
        let date = DateCache::new();
        let mut encoder = Encoder::new(MAX_TABLE);
        let mut reference = loona_hpack::Decoder::new();
        let mut common = None;
        for n in 0..100 {
            let etag = format!("\"{n:016x}\"");
            let fields = [Field::new(Name::ETag, &etag).unwrap()];
            let prepared = Prepared::new(&fields, "text/html", None, 100 + n);
            let mut block = ok_head(&prepared, &date);
            let plain = reference_decode(&mut loona_hpack::Decoder::new(), &block);
            encoder.index(&mut block);
            assert_eq!(reference_decode(&mut reference, &block), plain);
            // The fields every response shares, and nothing more, from
            // the first head on.
            assert_eq!(
                *common.get_or_insert(encoder.size),
                encoder.size,
                "head {n}"
            );
        }
    }

    #[test]
    fn a_smaller_table_setting_is_announced_at_the_next_block_and_obeyed() {
        let date = DateCache::new();
        let prepared = Prepared::new(&[], "text/css", None, 10);
        let mut encoder = Encoder::new(MAX_TABLE);
        let mut reference = loona_hpack::Decoder::new();
        let mut block = ok_head(&prepared, &date);
        encoder.index(&mut block);
        reference_decode(&mut reference, &block);
        encoder.set_limit(0);
        let mut block = ok_head(&prepared, &date);
        let plain = block.clone();
        encoder.index(&mut block);
        assert_eq!(block[0], 0x20, "a size update to 0 first");
        assert_eq!(&block[1..], &plain[..], "nothing indexed in an empty table");
        reference_decode(&mut reference, &block);
        // Lowered and raised in one SETTINGS: both are signalled (§4.2).
        encoder.set_limit(100);
        encoder.set_limit(1 << 20);
        let mut block = ok_head(&prepared, &date);
        encoder.index(&mut block);
        assert_eq!(&block[..5], &[0x3f, 0x45, 0x3f, 0xe1, 0x1f]);
        assert_eq!(encoder.max, MAX_TABLE);
        let mut plain_decoder = loona_hpack::Decoder::new();
        assert_eq!(
            reference_decode(&mut reference, &block),
            reference_decode(&mut plain_decoder, &ok_head(&prepared, &date))
        );
        // A setting equal to the table in use changes nothing.
        encoder.set_limit(MAX_TABLE);
        let mut block = ok_head(&prepared, &date);
        encoder.index(&mut block);
        assert_ne!(block[0] & 0xe0, 0x20);
    }

    /// A small deterministic generator for the differential test.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_heads_decode_the_same_indexed_as_written() {
        let names = [
            Name::ETag,
            Name::CacheControl,
            Name::ContentType,
            Name::Vary,
            Name::Location,
            Name::Custom("x-frame-options".into()),
            Name::Custom("content-security-policy".into()),
        ];
        let statuses = [
            Status::Ok,
            Status::Found,
            Status::NotFound,
            Status::NotModified,
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..200 {
            let mut encoder = Encoder::new(MAX_TABLE);
            let mut reference = loona_hpack::Decoder::new();
            let mut ours = super::super::decode::BlockDecoder::new(MAX_TABLE);
            for _ in 0..50 {
                if rng.below(10) == 0 {
                    encoder.set_limit([0, 64, 200, 4096, 65536][rng.below(5)]);
                }
                let mut block = Vec::new();
                Hpack::status(&mut block, statuses[rng.below(statuses.len())]);
                for _ in 0..rng.below(12) {
                    let value =
                        "v".repeat(rng.below(round % 7 * 300 + 40)) + &rng.below(20).to_string();
                    let name = &names[rng.below(names.len())];
                    Hpack::field(&mut block, name, &[value.as_bytes()]);
                    if rng.below(4) == 0 {
                        Hpack::field(&mut block, &Name::ContentLength, &[b"12345"]);
                    }
                }
                let plain = reference_decode(&mut loona_hpack::Decoder::new(), &block);
                let before = block.len();
                encoder.index(&mut block);
                assert!(block.len() <= before + 6);
                assert_eq!(reference_decode(&mut reference, &block), plain);
                let mut decoded = Vec::new();
                ours.decode(&block, |n, v, _| decoded.push((n.to_vec(), v.to_vec())))
                    .expect("our decoder takes the block");
                assert_eq!(decoded, plain);
                assert!(encoder.size <= encoder.max);
                assert!(encoder.keys.len() <= 2 * MAX_TABLE + 4096);
            }
        }
    }
}
