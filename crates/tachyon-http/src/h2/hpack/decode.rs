//! HPACK decoding (RFC 7541 §3, §6): a header block's bytes to its fields,
//! with the connection's dynamic table.
//!
//! Owns: the representations of §6, integers and string literals (§5),
//! the static table (Appendix A) and the dynamic table (§4) with its size
//! updates. Does not own: what the fields mean (the request checks of RFC
//! 9113 §8 are [`super::Decoder`]'s). Invariant: a block either decodes
//! whole, every field handed to the callback, with the table in step with
//! the encoder's, or fails with [`CompressionError`], after which the
//! table must not be used again (the connection ends).
//!
//! Hand-written because the Rust decoders on crates.io allocate per field
//! or string, and `loona-hpack` built its Huffman table per string; this
//! one allocates only for entries the client adds to its table.

use std::collections::VecDeque;

use super::huffman;
use crate::section::{sound_bytes, FieldBytes};

/// Why a block is not valid HPACK; the connection's table is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionError {
    /// A representation, integer or string runs past the block's end.
    Truncated,
    /// An integer of more than four continuation octets (§5.1 allows a
    /// decoder to limit them).
    IntegerTooLong,
    /// Index 0, or past the end of the tables (§2.3.3).
    BadIndex,
    /// A Huffman-coded string with EOS or bad padding (§5.2).
    BadHuffman,
    /// A dynamic table size update after a field, or ending the block
    /// (§4.2: it comes at the beginning of a block, before the fields).
    MisplacedSizeUpdate,
    /// A size update above our SETTINGS_HEADER_TABLE_SIZE (§6.3).
    SizeAboveSetting,
}

/// RFC 7541 Appendix A: indices 1 to 61.
pub(super) const STATIC_TABLE: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// §4.1: an entry's size counts 32 octets of overhead.
const ENTRY_OVERHEAD: usize = 32;

/// One dynamic-table entry: its name and value in one allocation, and
/// whether they passed the field checks when the entry was made.
struct Entry {
    bytes: Box<[u8]>,
    name_len: usize,
    checked: FieldBytes,
}

impl Entry {
    fn name(&self) -> &[u8] {
        &self.bytes[..self.name_len]
    }

    fn value(&self) -> &[u8] {
        &self.bytes[self.name_len..]
    }

    fn size(&self) -> usize {
        self.bytes.len() + ENTRY_OVERHEAD
    }
}

/// The dynamic table (§2.3.2, §4): newest entry first.
struct Table {
    entries: VecDeque<Entry>,
    size: usize,
    /// The size the encoder chose last (§6.3), at most `allowed`.
    max: usize,
    /// SETTINGS_HEADER_TABLE_SIZE as we announced it.
    allowed: usize,
}

impl Table {
    /// The field at `index` (1-based, static entries first, §2.3.3).
    fn get(&self, index: usize) -> Result<(&[u8], &[u8], FieldBytes), CompressionError> {
        match index {
            0 => Err(CompressionError::BadIndex),
            1..=61 => {
                let (name, value) = STATIC_TABLE[index - 1];
                Ok((name, value, FieldBytes::Checked))
            }
            _ => self
                .entries
                .get(index - 62)
                .map(|e| (e.name(), e.value(), e.checked))
                .ok_or(CompressionError::BadIndex),
        }
    }

    /// §4.4: an entry larger than the table empties it and is not kept.
    fn insert(&mut self, entry: Entry) {
        let size = entry.size();
        self.evict_to(self.max.saturating_sub(size));
        if size <= self.max {
            self.size += size;
            self.entries.push_front(entry);
        }
    }

    fn resize(&mut self, max: usize) -> Result<(), CompressionError> {
        if max > self.allowed {
            return Err(CompressionError::SizeAboveSetting);
        }
        self.max = max;
        self.evict_to(max);
        Ok(())
    }

    fn evict_to(&mut self, size: usize) {
        while self.size > size {
            let Some(old) = self.entries.pop_back() else {
                break;
            };
            self.size -= old.size();
        }
    }
}

/// Reads an integer with an N-bit prefix (§5.1) at `*pos`, the first
/// octet's higher bits being the representation's.
pub(super) fn integer(
    block: &[u8],
    pos: &mut usize,
    prefix_bits: u8,
) -> Result<usize, CompressionError> {
    let max = (1usize << prefix_bits) - 1;
    let first = *block.get(*pos).ok_or(CompressionError::Truncated)? as usize & max;
    *pos += 1;
    if first < max {
        return Ok(first);
    }
    let mut value = max;
    // Four continuation octets reach 2^28, far past any length a block
    // of ours can hold; more is an attack on the arithmetic.
    for shift in (0..=21).step_by(7) {
        let byte = *block.get(*pos).ok_or(CompressionError::Truncated)?;
        *pos += 1;
        value += ((byte & 0x7f) as usize) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(CompressionError::IntegerTooLong)
}

/// Where a decoded string lives: in the block itself, or in a scratch
/// buffer the Huffman decoder wrote.
enum Text {
    Raw(std::ops::Range<usize>),
    Decoded,
}

/// Finds the string literal (§5.2) at `*pos` and moves past it: whether it
/// is Huffman-coded, and where its octets are in `block`.
pub(super) fn string_octets(
    block: &[u8],
    pos: &mut usize,
) -> Result<(bool, std::ops::Range<usize>), CompressionError> {
    let huffman = block.get(*pos).ok_or(CompressionError::Truncated)? & 0x80 != 0;
    let len = integer(block, pos, 7)?;
    let end = pos.checked_add(len).filter(|&end| end <= block.len());
    let end = end.ok_or(CompressionError::Truncated)?;
    let range = *pos..end;
    *pos = end;
    Ok((huffman, range))
}

/// Reads a string literal (§5.2) at `*pos`; a Huffman-coded one is decoded
/// into `scratch`.
fn string(block: &[u8], pos: &mut usize, scratch: &mut Vec<u8>) -> Result<Text, CompressionError> {
    let (huffman, range) = string_octets(block, pos)?;
    if !huffman {
        return Ok(Text::Raw(range));
    }
    scratch.clear();
    huffman::decode(&block[range], scratch).map_err(|_| CompressionError::BadHuffman)?;
    Ok(Text::Decoded)
}

/// The decoding half of a connection's HPACK state.
pub struct BlockDecoder {
    table: Table,
    name: Vec<u8>,
    value: Vec<u8>,
}

/// How a literal's field relates to the dynamic table (§6.2).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Indexing {
    Incremental,
    Without,
}

impl BlockDecoder {
    /// A decoder whose table may grow to `allowed` octets, the value we
    /// announce in SETTINGS_HEADER_TABLE_SIZE (and its starting size).
    pub fn new(allowed: usize) -> BlockDecoder {
        BlockDecoder {
            table: Table {
                entries: VecDeque::new(),
                size: 0,
                max: allowed,
                allowed,
            },
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Decodes one whole header block, handing each field to `field` in
    /// order.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8], FieldBytes),
    ) -> Result<(), CompressionError> {
        let mut pos = 0;
        let mut fields_seen = false;
        let mut resized = false;
        while pos < block.len() {
            let first = block[pos];
            if first & 0x80 != 0 {
                // §6.1: an indexed field.
                let (name, value, checked) = self.table.get(integer(block, &mut pos, 7)?)?;
                field(name, value, checked);
            } else if first & 0xc0 == 0x40 {
                self.literal(block, &mut pos, 6, Indexing::Incremental, &mut field)?;
            } else if first & 0xe0 == 0x20 {
                // §4.2: size updates come before the block's first field.
                if fields_seen {
                    return Err(CompressionError::MisplacedSizeUpdate);
                }
                let max = integer(block, &mut pos, 5)?;
                self.table.resize(max)?;
                resized = true;
                continue;
            } else {
                // §6.2.2 and §6.2.3: without indexing, or never indexed.
                self.literal(block, &mut pos, 4, Indexing::Without, &mut field)?;
            }
            fields_seen = true;
        }
        if resized && !fields_seen {
            return Err(CompressionError::MisplacedSizeUpdate);
        }
        Ok(())
    }

    /// A literal field (§6.2) whose name is indexed when the prefix
    /// integer is not 0.
    fn literal(
        &mut self,
        block: &[u8],
        pos: &mut usize,
        prefix_bits: u8,
        indexing: Indexing,
        field: &mut impl FnMut(&[u8], &[u8], FieldBytes),
    ) -> Result<(), CompressionError> {
        let index = integer(block, pos, prefix_bits)?;
        let name = match index {
            0 => Some(string(block, pos, &mut self.name)?),
            _ => None,
        };
        let value = string(block, pos, &mut self.value)?;
        let name: &[u8] = match &name {
            None => self.table.get(index)?.0,
            Some(Text::Raw(range)) => &block[range.clone()],
            Some(Text::Decoded) => &self.name,
        };
        let value: &[u8] = match &value {
            Text::Raw(range) => &block[range.clone()],
            Text::Decoded => &self.value,
        };
        if indexing == Indexing::Without {
            field(name, value, FieldBytes::Unchecked);
            return Ok(());
        }
        // The entry is made before the insert, which may evict the entry
        // its name came from (§4.4).
        let mut bytes = Vec::with_capacity(name.len() + value.len());
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(value);
        let checked = match sound_bytes(name, value) {
            true => FieldBytes::Checked,
            // Kept anyway (the table must mirror the encoder's), and
            // checked, so refused, each time it is named.
            false => FieldBytes::Unchecked,
        };
        let entry = Entry {
            bytes: bytes.into_boxed_slice(),
            name_len: name.len(),
            checked,
        };
        field(entry.name(), entry.value(), checked);
        self.table.insert(entry);
        Ok(())
    }

    /// The dynamic table's size in §4.1's measure (for tests).
    #[cfg(test)]
    fn table_size(&self) -> usize {
        self.table.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::tests::hex;

    fn decode(
        decoder: &mut BlockDecoder,
        block: &[u8],
    ) -> Result<Vec<(String, String)>, CompressionError> {
        let mut fields = Vec::new();
        decoder.decode(block, |n, v, _| {
            fields.push((
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            ))
        })?;
        Ok(fields)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn integers_follow_rfc7541_c1() {
        // C.1.1: 10 in a 5-bit prefix; C.1.2: 1337; C.1.3: 42 in 8 bits.
        assert_eq!(integer(&[0x0a], &mut 0, 5), Ok(10));
        assert_eq!(integer(&[0x1f, 0x9a, 0x0a], &mut 0, 5), Ok(1337));
        assert_eq!(integer(&[0x2a], &mut 0, 8), Ok(42));
    }

    #[test]
    fn integers_that_overflow_or_stop_short_are_errors() {
        use CompressionError::*;
        assert_eq!(integer(&[0x1f, 0x80], &mut 0, 5), Err(Truncated));
        assert_eq!(
            integer(&[0x1f, 0xff, 0xff, 0xff, 0x7f], &mut 0, 5),
            Ok(31 + (1 << 28) - 1)
        );
        assert_eq!(
            integer(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0x01], &mut 0, 5),
            Err(IntegerTooLong)
        );
        assert_eq!(integer(&[], &mut 0, 5), Err(Truncated));
    }

    /// RFC 7541 C.3 (without Huffman) and C.4 (with): three requests on
    /// one connection, the table checked after each.
    #[test]
    fn the_rfc_request_examples_decode_with_their_tables() {
        for blocks in [
            [
                "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                "8286 84be 5808 6e6f 2d63 6163 6865",
                "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
            ],
            [
                "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
                "8286 84be 5886 a8eb 1064 9cbf",
                "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
            ],
        ] {
            let mut decoder = BlockDecoder::new(4096);
            let first = decode(&mut decoder, &hex(blocks[0])).unwrap();
            assert_eq!(
                first,
                pairs(&[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    (":authority", "www.example.com"),
                ])
            );
            assert_eq!(decoder.table_size(), 57);
            let second = decode(&mut decoder, &hex(blocks[1])).unwrap();
            assert_eq!(second[3], (":authority".into(), "www.example.com".into()));
            assert_eq!(second[4], ("cache-control".into(), "no-cache".into()));
            assert_eq!(decoder.table_size(), 110);
            let third = decode(&mut decoder, &hex(blocks[2])).unwrap();
            assert_eq!(third[1], (":scheme".into(), "https".into()));
            assert_eq!(third[2], (":path".into(), "/index.html".into()));
            assert_eq!(third[4], ("custom-key".into(), "custom-value".into()));
            assert_eq!(decoder.table_size(), 164);
        }
    }

    /// RFC 7541 C.5: responses with a 256-octet table, so entries are
    /// evicted.
    #[test]
    fn the_rfc_eviction_example_keeps_the_newest_entries() {
        let mut decoder = BlockDecoder::new(256);
        let blocks = [
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "4803 3330 37c1 c0bf",
        ];
        decode(&mut decoder, &hex(blocks[0])).unwrap();
        assert_eq!(decoder.table_size(), 222);
        let second = decode(&mut decoder, &hex(blocks[1])).unwrap();
        assert_eq!(
            second,
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
        assert_eq!(decoder.table_size(), 222);
    }

    #[test]
    fn index_zero_and_indices_past_the_table_are_errors() {
        let mut decoder = BlockDecoder::new(4096);
        assert_eq!(
            decode(&mut decoder, &[0x80]),
            Err(CompressionError::BadIndex)
        );
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), &[0xbe]),
            Err(CompressionError::BadIndex)
        );
    }

    #[test]
    fn a_size_update_must_come_first_and_within_the_setting() {
        // 0x3f 0xe1 0x1f = 4096; then an indexed :method GET.
        assert!(decode(&mut BlockDecoder::new(4096), &[0x3f, 0xe1, 0x1f, 0x82]).is_ok());
        // Two at the start are allowed (§4.2).
        assert!(decode(
            &mut BlockDecoder::new(4096),
            &[0x20, 0x3f, 0xe1, 0x1f, 0x82]
        )
        .is_ok());
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), &[0x82, 0x20]),
            Err(CompressionError::MisplacedSizeUpdate)
        );
        // 4097 is more than we allowed.
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), &[0x3f, 0xe2, 0x1f]),
            Err(CompressionError::SizeAboveSetting)
        );
    }

    #[test]
    fn a_size_update_to_zero_empties_the_table() {
        let mut decoder = BlockDecoder::new(4096);
        decode(&mut decoder, b"\x41\x03abc").unwrap();
        assert!(decoder.table_size() > 0);
        decode(&mut decoder, &[0x20, 0x82]).unwrap();
        assert_eq!(decoder.table_size(), 0);
        assert_eq!(
            decode(&mut decoder, &[0xbe]),
            Err(CompressionError::BadIndex)
        );
    }

    #[test]
    fn an_entry_larger_than_the_table_empties_it() {
        let mut decoder = BlockDecoder::new(64);
        decode(&mut decoder, b"\x40\x01a\x01b").unwrap();
        assert_eq!(decoder.table_size(), 34);
        let big = [b"\x40\x01a\x20".as_slice(), &[b'x'; 32]].concat();
        let fields = decode(&mut decoder, &big).unwrap();
        assert_eq!(fields[0].1.len(), 32);
        assert_eq!(decoder.table_size(), 0);
    }

    #[test]
    fn a_literal_may_name_the_entry_its_insert_evicts() {
        // Table of 40: "a: b" (34) is there; a new field named by index 62
        // evicts it while being inserted.
        let mut decoder = BlockDecoder::new(40);
        decode(&mut decoder, b"\x40\x01a\x01b").unwrap();
        let fields = decode(&mut decoder, b"\x7e\x01c").unwrap();
        assert_eq!(fields, pairs(&[("a", "c")]));
        let again = decode(&mut decoder, &[0xbe]).unwrap();
        assert_eq!(again, pairs(&[("a", "c")]));
    }

    #[test]
    fn strings_that_run_past_the_block_are_errors() {
        use CompressionError::Truncated;
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), b"\x00\x05ab"),
            Err(Truncated)
        );
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), b"\x04"),
            Err(Truncated)
        );
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), b"\x00\x7f\xff\xff\xff\x0f"),
            Err(Truncated)
        );
    }

    #[test]
    fn bad_huffman_is_an_error() {
        // A value of one octet of 1s: eight bits of padding.
        assert_eq!(
            decode(&mut BlockDecoder::new(4096), b"\x04\x81\xff"),
            Err(CompressionError::BadHuffman)
        );
    }

    #[test]
    fn never_indexed_literals_are_not_kept() {
        let mut decoder = BlockDecoder::new(4096);
        let fields = decode(&mut decoder, b"\x10\x01a\x01b").unwrap();
        assert_eq!(fields, pairs(&[("a", "b")]));
        assert_eq!(decoder.table_size(), 0);
    }
}
