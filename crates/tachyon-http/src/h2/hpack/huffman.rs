//! The Huffman code of HPACK (RFC 7541 §5.2, Appendix B), decoded four
//! bits at a time by a finite-state machine built at compile time.
//!
//! Owns: turning a Huffman-coded string literal back into its octets and
//! the RFC's padding and EOS checks. Does not own: string framing (the
//! length prefix is the caller's). Invariant: [`decode`] appends octets
//! only for a fully valid string; on error what it appended is garbage the
//! caller discards.
//!
//! Hand-written because the decoders on crates.io either allocate per
//! string or, as `loona-hpack` did, build their lookup table per string
//! (bench/results/hpack-2026-11-26).
//!
//! The machine's states are the 256 internal nodes of the code's tree
//! (257 leaves). From any state a nibble reaches at most one leaf, since
//! the shortest code is five bits, so each table entry is the next state
//! and at most one octet: the same shape as nghttp2's and h2o's decoders.

/// (code, length in bits) of each symbol, 0..=255 then EOS (256).
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

const EOS: u16 = 256;
/// A child that is a leaf: `LEAF | symbol`; otherwise the child's node.
const LEAF: u16 = 0x8000;

/// Internal nodes of the code's tree: `[node][bit]`.
const TREE: [[u16; 2]; 256] = build_tree();

const fn build_tree() -> [[u16; 2]; 256] {
    // 0 marks "no child yet": the root (node 0) is nobody's child.
    let mut tree = [[0u16; 2]; 256];
    let mut nodes = 1;
    let mut symbol = 0;
    while symbol < CODES.len() {
        let (code, len) = CODES[symbol];
        let mut node = 0;
        let mut depth = len;
        while depth > 1 {
            depth -= 1;
            let bit = ((code >> depth) & 1) as usize;
            if tree[node][bit] == 0 {
                tree[node][bit] = nodes;
                nodes += 1;
            }
            node = tree[node][bit] as usize;
        }
        tree[node][(code & 1) as usize] = LEAF | symbol as u16;
        symbol += 1;
    }
    assert!(
        nodes == 256,
        "a complete code of 257 symbols has 256 inner nodes"
    );
    tree
}

/// One step of the machine: the state after a nibble, and the octet it
/// completed if any.
#[derive(Clone, Copy)]
struct Step {
    next: u8,
    flags: u8,
    symbol: u8,
}
const EMITS: u8 = 1;
/// The nibble completes EOS, which a string must never hold (§5.2).
const FAILS: u8 = 2;

const STEPS: [[Step; 16]; 256] = build_steps();

const fn build_steps() -> [[Step; 16]; 256] {
    let blank = Step {
        next: 0,
        flags: 0,
        symbol: 0,
    };
    let mut steps = [[blank; 16]; 256];
    let mut state = 0;
    while state < 256 {
        let mut nibble = 0;
        while nibble < 16 {
            let mut node = state;
            let mut step = blank;
            let mut bit = 4;
            while bit > 0 {
                bit -= 1;
                let child = TREE[node][(nibble >> bit) & 1];
                if child & LEAF == 0 {
                    node = child as usize;
                } else if child & !LEAF == EOS {
                    step.flags |= FAILS;
                    node = 0;
                } else {
                    step.flags |= EMITS;
                    step.symbol = (child & !LEAF) as u8;
                    node = 0;
                }
            }
            step.next = node as u8;
            steps[state][nibble] = step;
            nibble += 1;
        }
        state += 1;
    }
    steps
}

/// States where a string may end: the root, or a run of at most seven 1
/// bits from it, which is padding, a prefix of EOS (§5.2).
const ENDS: [bool; 256] = build_ends();

const fn build_ends() -> [bool; 256] {
    let mut ends = [false; 256];
    ends[0] = true;
    let mut node = 0;
    let mut ones = 0;
    while ones < 7 {
        node = TREE[node][1] as usize;
        ends[node] = true;
        ones += 1;
    }
    ends
}

/// Why a Huffman-coded string is not valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanError {
    /// The string holds EOS, or its padding is not 1s or longer than 7 bits.
    Invalid,
}

/// Appends the octets `coded` stands for to `out`.
pub fn decode(coded: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    // Codes are at least five bits: at most eight octets per five coded.
    out.reserve(coded.len() * 8 / 5 + 1);
    let mut state = 0u8;
    let mut fails = 0u8;
    for &byte in coded {
        for nibble in [byte >> 4, byte & 0x0f] {
            let step = STEPS[state as usize][nibble as usize];
            if step.flags & EMITS != 0 {
                out.push(step.symbol);
            }
            fails |= step.flags;
            state = step.next;
        }
    }
    if fails & FAILS != 0 || !ENDS[state as usize] {
        return Err(HuffmanError::Invalid);
    }
    Ok(())
}

/// Appends the Huffman coding of `octets` to `out`, padded with 1s.
pub fn encode(octets: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &octet in octets {
        let (code, len) = CODES[octet as usize];
        acc = (acc << len) | code as u64;
        bits += len as u32;
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
}

/// The length of `octets` Huffman-coded, in bytes.
pub fn encoded_len(octets: &[u8]) -> usize {
    let bits: usize = octets.iter().map(|&o| CODES[o as usize].1 as usize).sum();
    bits.div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::tests::hex;

    fn decoded(coded: &[u8]) -> Result<Vec<u8>, HuffmanError> {
        let mut out = Vec::new();
        decode(coded, &mut out).map(|()| out)
    }

    /// RFC 7541 C.4 and C.6: the Huffman-coded strings of its examples.
    const RFC_EXAMPLES: &[(&str, &str)] = &[
        ("f1e3 c2e5 f23a 6ba0 ab90 f4ff", "www.example.com"),
        ("a8eb 1064 9cbf", "no-cache"),
        ("25a8 49e9 5ba9 7d7f", "custom-key"),
        ("25a8 49e9 5bb8 e8b4 bf", "custom-value"),
        ("6402", "302"),
        ("aec3 771a 4b", "private"),
        (
            "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
            "Mon, 21 Oct 2013 20:13:21 GMT",
        ),
        (
            "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
            "https://www.example.com",
        ),
        ("640e ff", "307"),
        (
            "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
        ),
    ];

    #[test]
    fn the_rfc_examples_decode_and_encode_byte_for_byte() {
        for (coded, plain) in RFC_EXAMPLES {
            assert_eq!(decoded(&hex(coded)).unwrap(), plain.as_bytes(), "{plain}");
            let mut out = Vec::new();
            encode(plain.as_bytes(), &mut out);
            assert_eq!(out, hex(coded), "{plain}");
            assert_eq!(encoded_len(plain.as_bytes()), out.len());
        }
    }

    #[test]
    fn every_octet_round_trips_alone_and_together() {
        let all: Vec<u8> = (0..=255).collect();
        for octet in &all {
            let mut coded = Vec::new();
            encode(&[*octet], &mut coded);
            assert_eq!(decoded(&coded).unwrap(), [*octet]);
        }
        let mut coded = Vec::new();
        encode(&all, &mut coded);
        assert_eq!(decoded(&coded).unwrap(), all);
    }

    #[test]
    fn the_empty_string_is_valid() {
        assert_eq!(decoded(&[]).unwrap(), b"");
    }

    #[test]
    fn padding_longer_than_seven_bits_is_invalid() {
        // 'a' is 00011 (5 bits): 3 bits of padding is fine, then a whole
        // octet of 1s is padding of 11 bits.
        assert_eq!(decoded(&[0x1f]).unwrap(), b"a");
        assert_eq!(decoded(&[0x1f, 0xff]), Err(HuffmanError::Invalid));
        assert_eq!(decoded(&[0xff]), Err(HuffmanError::Invalid));
    }

    #[test]
    fn padding_that_is_not_all_ones_is_invalid() {
        // 'a' then padding 000 instead of 111.
        assert_eq!(decoded(&[0x18]), Err(HuffmanError::Invalid));
    }

    #[test]
    fn eos_inside_a_string_is_invalid() {
        // EOS is thirty 1 bits; 32 of them hold it whole.
        assert_eq!(decoded(&[0xff; 4]), Err(HuffmanError::Invalid));
        // 'a' followed by EOS and padding.
        let mut coded = vec![0x1f];
        coded.extend([0xff; 4]);
        assert_eq!(decoded(&coded), Err(HuffmanError::Invalid));
    }
}
