//! TLS 1.3 record protection once the handshake is done (RFC 8446 §5):
//! what kTLS does in the kernel, done here because this kernel offers no
//! `tls` ULP.
//!
//! rustls runs every handshake; when a TLS 1.3 one ends it hands over the
//! keys and sequence numbers through its kernel-connection API, made for
//! this, and keeps the key schedule: on a key update (§4.6.3) the caller
//! asks rustls's `KernelConnection` for the next keys and gives them here
//! ([`Records::rekey_rx`], [`Records::seal_key_update`]). This module holds
//! two keys and two counters. The point is memory: rustls's record layer
//! keeps two expanded AES-GCM keys per connection, which no public API
//! releases; here a direction that has protected no record for a whole
//! sweep (one to two seconds) drops its expanded key and expands it again
//! when traffic resumes (`bench/results/records-2026-11-25`, and
//! `bench/results/code-shape-2026-11-27` for the kernel connection's
//! share). Dropping them at every pause between requests cost a keep-alive
//! request two key expansions, 13% of its instructions
//! (`bench/results/tls-keys-2026-12-04`).
//! The AEADs are ring's, the crate rustls uses; this module only frames
//! records.
//!
//! No I/O: bytes in, bytes out. TLS 1.2 sessions stay with rustls.
//!
//! Invariant: a direction's sequence number counts exactly the records
//! protected under its current key; no record is opened after a key update
//! until the next key is given, and a record that fails to open ends the
//! session (its alert is the last thing sealed).

use ring::aead;
use rustls::CipherSuite;

/// Largest plaintext in one record (RFC 8446 §5.1).
pub const MAX_PLAIN: usize = 16 * 1024;
/// Record header, inner content type, AEAD tag.
pub const OVERHEAD: usize = HEADER + 1 + TAG;
const HEADER: usize = 5;
const TAG: usize = 16;
/// Largest ciphertext a peer may send (RFC 8446 §5.2: 2^14 + 256).
const MAX_CIPHERTEXT: usize = MAX_PLAIN + 256;
/// Records sealed under one AES-GCM key before it is replaced (RFC 8446
/// §5.5 allows 2^24.5 full-size records; rustls uses 2^24 too).
const AES_GCM_LIMIT: u64 = 1 << 24;

const APPLICATION_DATA: u8 = 23;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const KEY_UPDATE: u8 = 24;

/// Why nothing was sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `out` needs this many bytes of room.
    Room(usize),
    /// The sending key is at its limit: a key update must come first
    /// ([`Records::seal_key_update`]).
    KeyDue,
}

/// A sealed key update: its 5-byte message in one record.
const UPDATE_LEN: usize = OVERHEAD + 5;

/// An alert this side ends the session with (RFC 8446 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    UnexpectedMessage = 10,
    BadRecordMac = 20,
    RecordOverflow = 22,
    DecodeError = 50,
    InternalError = 80,
}

/// One direction's keys.
struct Direction {
    key: [u8; 32],
    iv: [u8; aead::NONCE_LEN],
    seq: u64,
    /// The expanded key while traffic flows (560 bytes for AES-GCM);
    /// dropped once unused for a whole sweep.
    expanded: Option<Box<aead::LessSafeKey>>,
    /// A record was protected since the last [`Records::drop_unused_keys`].
    used: bool,
}

/// Keys as rustls hands them over: after the handshake, and on each key
/// update.
pub struct Keys<'a> {
    pub key: &'a [u8],
    pub iv: &'a [u8],
    pub seq: u64,
}

/// What the front of the input held.
#[derive(Debug, PartialEq, Eq)]
pub enum Opened {
    /// Not a whole record yet.
    Partial,
    /// Application data at this range of the input (possibly empty).
    Data {
        len: usize,
        plain: std::ops::Range<usize>,
    },
    /// The peer's key update: nothing more is opened until its next key
    /// is given ([`Records::rekey_rx`]); `reply` when it asked for ours
    /// (see [`Records::seal_key_update`]).
    KeyUpdate { len: usize, reply: bool },
    /// A `close_notify`, or another alert: the session is over (and every
    /// later call says so).
    Closed,
}

/// True for the suites [`Records`] protects (every TLS 1.3 suite rustls
/// offers with ring).
pub fn knows(suite: CipherSuite) -> bool {
    matches!(
        suite,
        CipherSuite::TLS13_AES_128_GCM_SHA256
            | CipherSuite::TLS13_AES_256_GCM_SHA384
            | CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    )
}

/// A TLS 1.3 session after its handshake.
pub struct Records {
    aead: &'static aead::Algorithm,
    limit: u64,
    tx: Direction,
    rx: Direction,
    /// The peer's key update was read and its next key not given yet.
    rx_stale: bool,
    /// The peer's alert was read: nothing after it is.
    closed: bool,
}

impl Records {
    /// The session rustls handed over; `None` for a suite this module does
    /// not know (the caller then keeps rustls).
    pub fn new(suite: CipherSuite, tx: Keys<'_>, rx: Keys<'_>) -> Option<Records> {
        let (aead, limit) = match suite {
            CipherSuite::TLS13_AES_128_GCM_SHA256 => (&aead::AES_128_GCM, AES_GCM_LIMIT),
            CipherSuite::TLS13_AES_256_GCM_SHA384 => (&aead::AES_256_GCM, AES_GCM_LIMIT),
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => (&aead::CHACHA20_POLY1305, u64::MAX),
            _ => return None,
        };
        Some(Records {
            aead,
            limit,
            tx: Direction::new(aead, tx)?,
            rx: Direction::new(aead, rx)?,
            rx_stale: false,
            closed: false,
        })
    }

    /// Takes the peer's next key after its key update.
    pub fn rekey_rx(&mut self, next: Keys<'_>) -> Result<(), Alert> {
        self.rx = Direction::new(self.aead, next).ok_or(Alert::InternalError)?;
        self.rx_stale = false;
        Ok(())
    }

    /// True when the sending key is at its limit: the next seal is refused
    /// until a key update replaces it.
    pub fn tx_due(&self) -> bool {
        self.tx.seq >= self.limit
    }

    /// Called once a sweep: drops the expanded key of each direction that
    /// protected no record since the last call; the next record expands it
    /// again. A connection busy with requests keeps its keys, one idle for
    /// a whole sweep holds only its secrets.
    pub fn drop_unused_keys(&mut self) {
        self.tx.drop_unused_key();
        self.rx.drop_unused_key();
    }

    /// Opens the record at the front of `input` in place.
    pub fn open(&mut self, input: &mut [u8]) -> Result<Opened, Alert> {
        if self.closed {
            return Ok(Opened::Closed);
        }
        if self.rx_stale {
            return Err(Alert::InternalError);
        }
        let Some(header) = input.get(..HEADER) else {
            return Ok(Opened::Partial);
        };
        let header: [u8; HEADER] = header.try_into().map_err(|_| Alert::InternalError)?;
        let body = usize::from(u16::from_be_bytes([header[3], header[4]]));
        // §5.2: every protected record says application_data; a
        // change_cipher_spec is only tolerated before the peer's Finished.
        if header[0] != APPLICATION_DATA {
            return Err(Alert::UnexpectedMessage);
        }
        if body > MAX_CIPHERTEXT {
            return Err(Alert::RecordOverflow);
        }
        if body < TAG + 1 {
            return Err(Alert::DecodeError);
        }
        let len = HEADER + body;
        let Some(record) = input.get_mut(HEADER..len) else {
            return Ok(Opened::Partial);
        };
        let nonce = self.rx.nonce();
        let key = expanded(self.aead, &mut self.rx);
        let inner = key
            .open_in_place(nonce, aead::Aad::from(header), record)
            .map_err(|_| Alert::BadRecordMac)?;
        self.rx.seq += 1;
        // §5.4: the content type is the last non-zero byte; zeros after it
        // are padding.
        let Some(at) = inner.iter().rposition(|&b| b != 0) else {
            return Err(Alert::UnexpectedMessage);
        };
        if at > MAX_PLAIN {
            return Err(Alert::RecordOverflow);
        }
        match inner[at] {
            APPLICATION_DATA => Ok(Opened::Data {
                len,
                plain: HEADER..HEADER + at,
            }),
            // Any alert ends the session: close_notify, a fatal one, or a
            // warning-level one (§6: all but close_notify and user_canceled
            // are fatal in TLS 1.3; user_canceled is followed by a close).
            ALERT => {
                self.closed = true;
                Ok(Opened::Closed)
            }
            HANDSHAKE => {
                // The only handshake message a client sends after its
                // Finished is a key update (no post-handshake
                // authentication is asked for): one whole message per
                // record, as every client sends it.
                let reply = match inner[..at] {
                    [KEY_UPDATE, 0, 0, 1, 0] => false,
                    [KEY_UPDATE, 0, 0, 1, 1] => true,
                    [KEY_UPDATE, ..] => return Err(Alert::DecodeError),
                    _ => return Err(Alert::UnexpectedMessage),
                };
                self.rx_stale = true;
                Ok(Opened::KeyUpdate { len, reply })
            }
            _ => Err(Alert::UnexpectedMessage),
        }
    }

    /// Room [`Records::seal_parts`] needs for `plain` bytes.
    pub fn sealed_len(plain: usize) -> usize {
        plain.div_ceil(MAX_PLAIN).max(1) * OVERHEAD + plain
    }

    /// Seals `plain` as application data records into `out`; returns the
    /// bytes written.
    #[cfg(test)]
    fn seal(&mut self, plain: &[u8], out: &mut [u8]) -> Result<usize, Refused> {
        let (_, written) = self.seal_parts(&[plain], usize::MAX, out)?;
        Ok(written)
    }

    /// Seals up to `limit` bytes of `parts`, in order, as application
    /// data records filled to [`MAX_PLAIN`] whatever the parts' bounds:
    /// each record's plaintext is copied once, from the parts into `out`,
    /// and sealed where it lies (ring seals only in place; gathering first
    /// would copy it twice). Returns the plaintext taken and the bytes
    /// written. Nothing is sealed when refused.
    pub fn seal_parts<P>(
        &mut self,
        parts: &[P],
        limit: usize,
        out: &mut [u8],
    ) -> Result<(usize, usize), Refused>
    where
        P: std::ops::Deref<Target = [u8]>,
    {
        let total = parts
            .iter()
            .map(|part| part.len())
            .sum::<usize>()
            .min(limit);
        if total == 0 {
            return Ok((0, 0));
        }
        if self.tx_due() {
            return Err(Refused::KeyDue);
        }
        let need = Records::sealed_len(total);
        if out.len() < need {
            return Err(Refused::Room(need));
        }
        let mut parts = parts.iter().map(|part| &part[..]);
        let mut current: &[u8] = &[];
        let (mut left, mut written) = (total, 0);
        while left > 0 {
            let size = left.min(MAX_PLAIN);
            let body = &mut out[written + HEADER..written + HEADER + size];
            let mut filled = 0;
            while filled < size {
                if current.is_empty() {
                    // `total` counted these bytes: the parts hold them.
                    current = parts.next().unwrap_or_default();
                    continue;
                }
                let n = current.len().min(size - filled);
                body[filled..filled + n].copy_from_slice(&current[..n]);
                current = &current[n..];
                filled += n;
            }
            written += self.seal_placed(APPLICATION_DATA, size, &mut out[written..]);
            left -= size;
        }
        Ok((total, written))
    }

    /// Seals a fatal alert (or `close_notify` when `alert` is `None`).
    pub fn seal_alert(&mut self, alert: Option<Alert>, out: &mut [u8]) -> Result<usize, Refused> {
        let body = match alert {
            None => [1, 0],
            Some(alert) => [2, alert as u8],
        };
        let need = Records::sealed_len(body.len());
        if out.len() < need {
            return Err(Refused::Room(need));
        }
        Ok(self.seal_record(ALERT, &body, out))
    }

    /// Seals a key update under the current sending key and moves to
    /// `next` (§4.6.3): `request` asks the peer to update its own.
    pub fn seal_key_update(
        &mut self,
        request: bool,
        next: Keys<'_>,
        out: &mut [u8],
    ) -> Result<usize, Refused> {
        if out.len() < UPDATE_LEN {
            return Err(Refused::Room(UPDATE_LEN));
        }
        let next = Direction::new(self.aead, next).ok_or(Refused::KeyDue)?;
        let message = [KEY_UPDATE, 0, 0, 1, u8::from(request)];
        let written = self.seal_record(HANDSHAKE, &message, out);
        self.tx = next;
        Ok(written)
    }

    /// One record; `out` has room (checked by the callers).
    fn seal_record(&mut self, kind: u8, plain: &[u8], out: &mut [u8]) -> usize {
        out[HEADER..HEADER + plain.len()].copy_from_slice(plain);
        self.seal_placed(kind, plain.len(), out)
    }

    /// One record whose `plain` bytes are already in place after the
    /// header's room; `out` has room (checked by the callers).
    fn seal_placed(&mut self, kind: u8, plain: usize, out: &mut [u8]) -> usize {
        let body = plain + 1 + TAG;
        let len = HEADER + body;
        let header = record_header(body);
        out[..HEADER].copy_from_slice(&header);
        out[HEADER + plain] = kind;
        let nonce = self.tx.nonce();
        let key = expanded(self.aead, &mut self.tx);
        let (inner, tag) = out[HEADER..len].split_at_mut(plain + 1);
        match key.seal_in_place_separate_tag(nonce, aead::Aad::from(header), inner) {
            Ok(sealed) => tag.copy_from_slice(sealed.as_ref()),
            // ring refuses only an input longer than the AEAD's limit
            // (gigabytes); a record is at most 16 KiB.
            Err(_) => unreachable!("a TLS record is within every AEAD's input limit"),
        }
        self.tx.seq += 1;
        len
    }
}

fn record_header(body: usize) -> [u8; HEADER] {
    let [hi, lo] = (body as u16).to_be_bytes();
    [APPLICATION_DATA, 3, 3, hi, lo]
}

/// The direction's expanded key, made now if it was given back.
fn expanded<'d>(
    aead: &'static aead::Algorithm,
    direction: &'d mut Direction,
) -> &'d aead::LessSafeKey {
    direction.used = true;
    direction.expanded.get_or_insert_with(|| {
        let key = aead::UnboundKey::new(aead, &direction.key[..aead.key_len()])
            .expect("the key length was checked when the session was made");
        Box::new(aead::LessSafeKey::new(key))
    })
}

impl Direction {
    /// Keys of `aead`'s lengths, or None.
    fn new(aead: &'static aead::Algorithm, keys: Keys<'_>) -> Option<Direction> {
        let mut key = [0; 32];
        (keys.key.len() == aead.key_len()).then_some(())?;
        key.get_mut(..keys.key.len())?.copy_from_slice(keys.key);
        Some(Direction {
            key,
            iv: keys.iv.try_into().ok()?,
            seq: keys.seq,
            expanded: None,
            used: false,
        })
    }

    /// Second chance: the key survives a sweep in which it was used.
    fn drop_unused_key(&mut self) {
        if !std::mem::take(&mut self.used) {
            self.expanded = None;
        }
    }

    /// §5.3: the IV XOR the sequence number, left-padded.
    fn nonce(&self) -> aead::Nonce {
        let mut nonce = self.iv;
        for (n, s) in nonce[aead::NONCE_LEN - 8..]
            .iter_mut()
            .zip(self.seq.to_be_bytes())
        {
            *n ^= s;
        }
        aead::Nonce::assume_unique_for_key(nonce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key and IV made of `fill`, for `suite`'s AEAD.
    fn material(suite: CipherSuite, fill: u8) -> (Vec<u8>, Vec<u8>) {
        let len = match suite {
            CipherSuite::TLS13_AES_128_GCM_SHA256 => 16,
            _ => 32,
        };
        (vec![fill; len], vec![fill ^ 0x55; aead::NONCE_LEN])
    }

    fn keys(material: &(Vec<u8>, Vec<u8>)) -> Keys<'_> {
        Keys {
            key: &material.0,
            iv: &material.1,
            seq: 0,
        }
    }

    /// A server and a client of one session.
    fn pair(suite: CipherSuite) -> (Records, Records) {
        let (a, b) = (material(suite, 7), material(suite, 9));
        (
            Records::new(suite, keys(&a), keys(&b)).unwrap(),
            Records::new(suite, keys(&b), keys(&a)).unwrap(),
        )
    }

    fn open_all(records: &mut Records, mut input: Vec<u8>) -> Result<Vec<u8>, Alert> {
        let mut plain = Vec::new();
        while !input.is_empty() {
            match records.open(&mut input)? {
                Opened::Data { len, plain: range } => {
                    plain.extend_from_slice(&input[range]);
                    input.drain(..len);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        Ok(plain)
    }

    #[test]
    fn sealed_records_open_on_the_other_side_in_order() {
        for suite in [
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        ] {
            let (mut server, mut client) = pair(suite);
            let body: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
            let mut out = vec![0; Records::sealed_len(body.len())];
            let n = server.seal(&body, &mut out).unwrap();
            assert_eq!(n, out.len());
            assert_eq!(open_all(&mut client, out).unwrap(), body);
            assert_eq!((server.tx.seq, client.rx.seq), (3, 3));
        }
    }

    #[test]
    fn a_key_unused_for_a_whole_sweep_is_dropped_and_expanded_again() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let exchange = |server: &mut Records, client: &mut Records, text: &[u8]| {
            let mut out = vec![0; Records::sealed_len(text.len())];
            server.seal(text, &mut out).unwrap();
            assert_eq!(open_all(client, out).unwrap(), text);
        };
        let held = |r: &Records| (r.tx.expanded.is_some(), r.rx.expanded.is_some());
        exchange(&mut server, &mut client, b"first");
        assert_eq!(held(&server), (true, false));
        // Used since the last sweep: kept.
        server.drop_unused_keys();
        assert_eq!(held(&server), (true, false));
        // A whole sweep without a record: dropped.
        server.drop_unused_keys();
        assert_eq!(held(&server), (false, false));
        // The next record expands it again, under the next sequence number.
        exchange(&mut server, &mut client, b"second");
        exchange(&mut client, &mut server, b"reply");
        assert_eq!(held(&server), (true, true));
        assert_eq!((server.tx.seq, server.rx.seq), (2, 1));
        server.drop_unused_keys();
        exchange(&mut client, &mut server, b"only the client");
        server.drop_unused_keys();
        assert_eq!(held(&server), (false, true));
    }

    #[test]
    fn parts_are_sealed_as_full_records_whatever_their_bounds() {
        // HTTP/2's shape: a 9-byte frame header before each 16 KiB of body.
        let data = pattern_of(2 * MAX_PLAIN + 40);
        let bounds = [9, MAX_PLAIN, 0, 9, MAX_PLAIN, 9, 13];
        let mut parts = Vec::new();
        let mut at = 0;
        for len in bounds {
            parts.push(&data[at..at + len]);
            at += len;
        }
        let limit = 2 * MAX_PLAIN + 20;
        let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
        let (mut server, mut client) = pair(suite);
        let (mut reference, _) = pair(suite);
        let mut out = vec![0; Records::sealed_len(limit)];
        let (taken, n) = server.seal_parts(&parts, limit, &mut out).unwrap();
        assert_eq!((taken, n), (limit, out.len()));
        // Byte for byte what sealing the joined bytes record by record
        // gives: full records, the last one short.
        let mut expected = vec![0; out.len()];
        let mut written = 0;
        for chunk in data[..limit].chunks(MAX_PLAIN) {
            written += reference.seal_record(APPLICATION_DATA, chunk, &mut expected[written..]);
        }
        assert_eq!(out, expected);
        assert_eq!(open_all(&mut client, out).unwrap(), &data[..limit]);
        assert_eq!(server.tx.seq, 3);
    }

    #[test]
    fn parts_without_room_are_refused_and_nothing_is_sealed() {
        let (mut server, _) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let data = pattern_of(MAX_PLAIN + 1);
        let parts = [&data[..5], &data[5..]];
        let need = Records::sealed_len(data.len());
        let mut out = vec![0; need - 1];
        let refused = server.seal_parts(&parts, usize::MAX, &mut out);
        assert_eq!(refused, Err(Refused::Room(need)));
        assert_eq!(server.tx.seq, 0);
        let none: [&[u8]; 2] = [&[], &[]];
        assert_eq!(server.seal_parts(&none, usize::MAX, &mut out), Ok((0, 0)));
    }

    fn pattern_of(len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(31) >> 2) as u8)
            .collect()
    }

    #[test]
    fn a_flipped_bit_or_a_replayed_record_is_a_bad_record_mac() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut out = vec![0; 64];
        let n = server.seal(b"hello", &mut out).unwrap();
        let record = out[..n].to_vec();
        let mut flipped = record.clone();
        flipped[7] ^= 1;
        assert_eq!(client.open(&mut flipped), Err(Alert::BadRecordMac));
        let (_, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        assert!(open_all(&mut client, record.clone()).is_ok());
        assert_eq!(open_all(&mut client, record), Err(Alert::BadRecordMac));
    }

    #[test]
    fn a_short_record_waits_and_an_oversized_one_is_refused() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut out = vec![0; 64];
        let n = server.seal(b"hello", &mut out).unwrap();
        assert_eq!(client.open(&mut out[..n - 1]), Ok(Opened::Partial));
        assert_eq!(client.open(&mut out[..3]), Ok(Opened::Partial));
        let mut huge = vec![23, 3, 3, 0x48, 0x01];
        assert_eq!(client.open(&mut huge), Err(Alert::RecordOverflow));
        let mut plain = vec![22, 3, 3, 0, 40];
        assert_eq!(client.open(&mut plain), Err(Alert::UnexpectedMessage));
    }

    #[test]
    fn a_key_update_moves_both_sides_to_the_next_keys() {
        let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
        let (mut server, mut client) = pair(suite);
        let next = material(suite, 11);
        let mut out = vec![0; 256];
        let mut n = server.seal(b"before", &mut out).unwrap();
        n += server
            .seal_key_update(true, keys(&next), &mut out[n..])
            .unwrap();
        n += server.seal(b"after", &mut out[n..]).unwrap();
        let mut input = out[..n].to_vec();
        let mut seen = Vec::new();
        while !input.is_empty() {
            let opened = client.open(&mut input).unwrap();
            let len = match &opened {
                Opened::Data { len, plain } => {
                    seen.extend_from_slice(&input[plain.clone()]);
                    *len
                }
                Opened::KeyUpdate { len, reply } => {
                    assert!(reply);
                    // Nothing opens until the next key is given.
                    let mut rest = input[*len..].to_vec();
                    assert_eq!(client.open(&mut rest), Err(Alert::InternalError));
                    client.rekey_rx(keys(&next)).unwrap();
                    *len
                }
                other => panic!("unexpected {other:?}"),
            };
            input.drain(..len);
        }
        assert_eq!(seen, b"beforeafter");
        assert_eq!((server.tx.seq, client.rx.seq), (1, 1));
        assert_eq!(server.tx.key, client.rx.key);
    }

    #[test]
    fn a_key_at_its_limit_is_refused_until_replaced() {
        let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
        let (mut server, mut client) = pair(suite);
        server.tx.seq = AES_GCM_LIMIT;
        client.rx.seq = AES_GCM_LIMIT;
        let mut out = vec![0; 256];
        assert!(server.tx_due());
        assert_eq!(server.seal(b"data", &mut out), Err(Refused::KeyDue));
        let next = material(suite, 12);
        let mut n = server
            .seal_key_update(false, keys(&next), &mut out)
            .unwrap();
        n += server.seal(b"data", &mut out[n..]).unwrap();
        let mut input = out[..n].to_vec();
        let Opened::KeyUpdate { len, reply: false } = client.open(&mut input).unwrap() else {
            panic!("expected a key update first");
        };
        input.drain(..len);
        client.rekey_rx(keys(&next)).unwrap();
        assert_eq!(open_all(&mut client, input).unwrap(), b"data");
    }

    /// A record sealed by hand with this inner plaintext (content and
    /// type and padding), as a peer may send it.
    fn sealed_by_hand(server: &mut Records, inner: &[u8]) -> Vec<u8> {
        let header = record_header(inner.len() + TAG);
        let nonce = server.tx.nonce();
        let key = expanded(server.aead, &mut server.tx);
        let mut sealed = inner.to_vec();
        let tag = key
            .seal_in_place_separate_tag(nonce, aead::Aad::from(header), &mut sealed)
            .unwrap();
        server.tx.seq += 1;
        let mut record = header.to_vec();
        record.extend_from_slice(&sealed);
        record.extend_from_slice(tag.as_ref());
        record
    }

    #[test]
    fn padding_is_stripped_and_an_all_padding_record_is_refused() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let padded = sealed_by_hand(&mut server, &[b'h', b'i', APPLICATION_DATA, 0, 0, 0]);
        assert_eq!(open_all(&mut client, padded).unwrap(), b"hi");
        let mut empty = sealed_by_hand(&mut server, &[0, 0, 0]);
        assert_eq!(client.open(&mut empty), Err(Alert::UnexpectedMessage));
    }

    #[test]
    fn an_alert_closes_and_a_stray_handshake_message_is_refused() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut out = vec![0; 64];
        let n = server.seal_alert(None, &mut out).unwrap();
        assert_eq!(client.open(&mut out[..n]), Ok(Opened::Closed));
        // Nothing after the alert is read.
        assert_eq!(client.open(&mut [0xff; 40]), Ok(Opened::Closed));
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut ticket = sealed_by_hand(&mut server, &[4, 0, 0, 0, HANDSHAKE]);
        assert_eq!(client.open(&mut ticket), Err(Alert::UnexpectedMessage));
    }
}
