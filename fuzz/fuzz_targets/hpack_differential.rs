//! Differential: tachyon's HPACK decoder against `loona-hpack` on the same
//! sequence of arbitrary header blocks sharing one dynamic table, as on one
//! connection. Where tachyon decodes a block, the reference decodes it to
//! the same fields; where the reference refuses one, tachyon refuses it
//! too. The one place tachyon is stricter: a table size update after a
//! field (RFC 7541 §4.2), which the reference takes unless it ends the
//! block.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h2::hpack::decode::{BlockDecoder, CompressionError};

fuzz_target!(|data: &[u8]| {
    // Both start at HTTP/2's 4096; a first block shrinks the table to 256
    // (and indexes `:method: GET`), so entries are evicted often.
    let mut ours = BlockDecoder::new(4096);
    let mut reference = loona_hpack::Decoder::new();
    reference.set_max_allowed_table_size(4096);
    let shrink = [0x3f, 0xe1, 0x01, 0x82];
    ours.decode(&shrink, |_, _, _| {}).expect("a valid block");
    reference.decode(&shrink).expect("a valid block");
    // Blocks are separated by 0xff bytes, so one input holds several
    // blocks and exercises the table they share.
    for block in data.split(|&b| b == 0xff) {
        let mut mine = Vec::new();
        let verdict = ours.decode(block, |n, v, _| mine.push((n.to_vec(), v.to_vec())));
        let theirs = reference.decode(block);
        match (verdict, theirs) {
            (Ok(()), Ok(fields)) => assert_eq!(mine, fields, "the fields differ"),
            (Ok(()), Err(e)) => panic!("tachyon decoded a block the reference refused: {e:?}"),
            (Err(CompressionError::MisplacedSizeUpdate), Ok(_)) => return,
            (Err(e), Ok(_)) => panic!("tachyon refused ({e:?}) a block the reference decoded"),
            // The connection would end here: the tables are lost.
            (Err(_), Err(_)) => return,
        }
    }
});
