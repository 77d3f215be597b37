//! TLS 1.3 record protection once the handshake is done (RFC 8446 §5),
//! with key updates (§4.6.3, §7.2): what kTLS does in the kernel, done
//! here because this kernel offers no `tls` ULP.
//!
//! rustls runs every handshake; when a TLS 1.3 one ends it hands over the
//! keys and sequence numbers (its kernel-connection API, made for this),
//! and the session is this: two traffic secrets, two keys, two counters.
//! The point is memory: rustls's session state is 3.4 KB per idle
//! connection (its connection struct and two expanded AES-GCM keys, which
//! no public API releases); here an idle connection keeps 250 bytes and
//! expands its keys again when traffic resumes (a few hundred nanoseconds
//! against the microseconds of the system calls around it). The AEADs are
//! ring's, the crate rustls uses; this module only frames records and
//! derives the next keys on a key update.
//!
//! No I/O: bytes in, bytes out. TLS 1.2 sessions stay with rustls.
//!
//! Invariant: a direction's sequence number counts exactly the records
//! protected under its current key, and a record that fails to open ends
//! the session (its alert is the last thing sealed).

use std::cell::RefCell;

use ring::hkdf::KeyType;
use ring::{aead, hkdf};
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
    /// A key update without the secret the next key comes from (the
    /// handshake did not hand it over).
    NoSecret,
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

/// A traffic secret: 32 bytes (SHA-256 suites) or 48 (SHA-384).
#[derive(Clone)]
pub struct Secret {
    bytes: [u8; 48],
    len: u8,
}

impl Secret {
    pub fn new(bytes: &[u8]) -> Option<Secret> {
        let mut secret = Secret {
            bytes: [0; 48],
            len: u8::try_from(bytes.len()).ok()?,
        };
        secret.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(secret)
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The application traffic secrets of the handshake running on this
/// thread, as rustls derives them: rustls offers them through its key-log
/// hook only, which it calls from inside the `process_tls_records` call of
/// the session being handshaken, so a session that takes them after each
/// of its calls takes its own.
#[derive(Default)]
pub struct Handed {
    pub client: Option<Secret>,
    pub server: Option<Secret>,
}

impl Handed {
    /// Keeps what `now` has, over what was kept.
    pub fn take(&mut self, now: Handed) {
        self.client = now.client.or(self.client.take());
        self.server = now.server.or(self.server.take());
    }
}

thread_local! {
    static HANDED: RefCell<Handed> = RefCell::new(Handed::default());
}

/// What the handshake just run on this thread handed over, if anything.
pub fn take_handed() -> Option<Handed> {
    HANDED.with(|handed| {
        let mut handed = handed.borrow_mut();
        (handed.client.is_some() || handed.server.is_some()).then(|| std::mem::take(&mut *handed))
    })
}

/// The key-log hook that hands the TLS 1.3 traffic secrets over (and
/// nothing else: no file, no other label).
#[derive(Debug)]
pub struct Handover;

impl rustls::KeyLog for Handover {
    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        HANDED.with(|handed| {
            let mut handed = handed.borrow_mut();
            match label {
                "CLIENT_TRAFFIC_SECRET_0" => handed.client = Secret::new(secret),
                "SERVER_TRAFFIC_SECRET_0" => handed.server = Secret::new(secret),
                _ => {}
            }
        });
    }

    fn will_log(&self, label: &str) -> bool {
        matches!(label, "CLIENT_TRAFFIC_SECRET_0" | "SERVER_TRAFFIC_SECRET_0")
    }
}

/// One direction's keys.
struct Direction {
    /// Where the next key comes from on a key update; `None` when the
    /// handshake did not hand it over (then a key update ends the session).
    secret: Option<Secret>,
    key: [u8; 32],
    iv: [u8; aead::NONCE_LEN],
    seq: u64,
    /// The expanded key while traffic flows (560 bytes for AES-GCM);
    /// dropped when the connection goes quiet.
    expanded: Option<Box<aead::LessSafeKey>>,
}

/// Keys as rustls hands them over after the handshake.
pub struct Keys<'a> {
    pub key: &'a [u8],
    pub iv: &'a [u8],
    pub seq: u64,
    pub secret: Option<Secret>,
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
    /// The peer's key update was applied; `reply` when it asked for ours
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
    hkdf: hkdf::Algorithm,
    limit: u64,
    tx: Direction,
    rx: Direction,
    /// The peer's alert was read: nothing after it is.
    closed: bool,
}

impl Records {
    /// The session rustls handed over; `None` for a suite this module does
    /// not know (the caller then keeps rustls).
    pub fn new<'a>(suite: CipherSuite, tx: Keys<'a>, rx: Keys<'a>) -> Option<Records> {
        let (aead, hkdf, limit) = match suite {
            CipherSuite::TLS13_AES_128_GCM_SHA256 => {
                (&aead::AES_128_GCM, hkdf::HKDF_SHA256, AES_GCM_LIMIT)
            }
            CipherSuite::TLS13_AES_256_GCM_SHA384 => {
                (&aead::AES_256_GCM, hkdf::HKDF_SHA384, AES_GCM_LIMIT)
            }
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => {
                (&aead::CHACHA20_POLY1305, hkdf::HKDF_SHA256, u64::MAX)
            }
            _ => return None,
        };
        let direction = |keys: Keys<'_>| {
            let mut key = [0; 32];
            key.get_mut(..keys.key.len())?.copy_from_slice(keys.key);
            Some(Direction {
                secret: keys.secret,
                key,
                iv: keys.iv.try_into().ok()?,
                seq: keys.seq,
                expanded: None,
            })
        };
        (tx.key.len() == aead.key_len() && rx.key.len() == aead.key_len()).then_some(())?;
        // The secrets came by a side door (see [`Handover`]): kept only
        // when they make the very keys rustls handed over.
        let checked = |keys: Keys<'a>| Keys {
            secret: keys
                .secret
                .filter(|secret| derives(aead, hkdf, secret, keys.key, keys.iv)),
            ..keys
        };
        let (tx, rx) = (checked(tx), checked(rx));
        Some(Records {
            aead,
            hkdf,
            limit,
            tx: direction(tx)?,
            rx: direction(rx)?,
            closed: false,
        })
    }

    /// Gives back the expanded keys; the next record expands them again.
    pub fn settle(&mut self) {
        self.tx.expanded = None;
        self.rx.expanded = None;
    }

    /// Opens the record at the front of `input` in place.
    pub fn open(&mut self, input: &mut [u8]) -> Result<Opened, Alert> {
        if self.closed {
            return Ok(Opened::Closed);
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
                self.rx.update(self.aead, self.hkdf)?;
                Ok(Opened::KeyUpdate { len, reply })
            }
            _ => Err(Alert::UnexpectedMessage),
        }
    }

    /// Room [`Records::seal`] needs for `plain` bytes.
    pub fn sealed_len(plain: usize) -> usize {
        plain.div_ceil(MAX_PLAIN).max(1) * OVERHEAD + plain
    }

    /// Seals `plain` as application data records into `out`; returns the
    /// bytes written. A key at its limit is replaced first, with a key
    /// update sealed before the data. Nothing is sealed when refused.
    pub fn seal(&mut self, plain: &[u8], out: &mut [u8]) -> Result<usize, Refused> {
        let update = self.tx.seq >= self.limit;
        let need = Records::sealed_len(plain.len()) + if update { UPDATE_LEN } else { 0 };
        if out.len() < need {
            return Err(Refused::Room(need));
        }
        let mut written = 0;
        if update {
            written = self.seal_key_update(false, out)?;
        }
        for chunk in plain.chunks(MAX_PLAIN) {
            written += self.seal_record(APPLICATION_DATA, chunk, &mut out[written..]);
        }
        Ok(written)
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

    /// Seals a key update and moves to the next sending key (§4.6.3):
    /// `request` asks the peer to update its own.
    pub fn seal_key_update(&mut self, request: bool, out: &mut [u8]) -> Result<usize, Refused> {
        if self.tx.secret.is_none() {
            return Err(Refused::NoSecret);
        }
        if out.len() < UPDATE_LEN {
            return Err(Refused::Room(UPDATE_LEN));
        }
        let message = [KEY_UPDATE, 0, 0, 1, u8::from(request)];
        let written = self.seal_record(HANDSHAKE, &message, out);
        // Cannot fail: the secret is there, and the lengths are the suite's.
        self.tx
            .update(self.aead, self.hkdf)
            .map_err(|_| Refused::NoSecret)?;
        Ok(written)
    }

    /// One record; `out` has room (checked by the callers).
    fn seal_record(&mut self, kind: u8, plain: &[u8], out: &mut [u8]) -> usize {
        let body = plain.len() + 1 + TAG;
        let len = HEADER + body;
        let header = record_header(body);
        out[..HEADER].copy_from_slice(&header);
        out[HEADER..HEADER + plain.len()].copy_from_slice(plain);
        out[HEADER + plain.len()] = kind;
        let nonce = self.tx.nonce();
        let key = expanded(self.aead, &mut self.tx);
        let (inner, tag) = out[HEADER..len].split_at_mut(plain.len() + 1);
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
    direction.expanded.get_or_insert_with(|| {
        let key = aead::UnboundKey::new(aead, &direction.key[..aead.key_len()])
            .expect("the key length was checked when the session was made");
        Box::new(aead::LessSafeKey::new(key))
    })
}

impl Direction {
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

    /// §7.2: the next traffic secret, and its key and IV; the sequence
    /// number starts again at 0.
    fn update(
        &mut self,
        aead: &'static aead::Algorithm,
        hkdf: hkdf::Algorithm,
    ) -> Result<(), Alert> {
        let secret = self.secret.as_ref().ok_or(Alert::InternalError)?;
        let len = hkdf.len();
        let mut next = [0u8; 48];
        expand_label(hkdf, secret.bytes(), b"traffic upd", &mut next[..len])?;
        let next = Secret::new(&next[..len]).ok_or(Alert::InternalError)?;
        (self.key, self.iv) = traffic_keys(aead, hkdf, &next)?;
        self.secret = Some(next);
        self.seq = 0;
        self.expanded = None;
        Ok(())
    }
}

/// True when `secret` derives this key and IV (RFC 8446 §7.3).
fn derives(
    aead: &'static aead::Algorithm,
    hkdf: hkdf::Algorithm,
    secret: &Secret,
    key: &[u8],
    iv: &[u8],
) -> bool {
    traffic_keys(aead, hkdf, secret).is_ok_and(|(k, i)| &k[..aead.key_len()] == key && i[..] == *iv)
}

/// The key (its first `aead.key_len()` bytes) and IV a traffic secret
/// makes (RFC 8446 §7.3).
fn traffic_keys(
    aead: &'static aead::Algorithm,
    hkdf: hkdf::Algorithm,
    secret: &Secret,
) -> Result<([u8; 32], [u8; aead::NONCE_LEN]), Alert> {
    let mut key = [0u8; 32];
    let mut iv = [0u8; aead::NONCE_LEN];
    expand_label(hkdf, secret.bytes(), b"key", &mut key[..aead.key_len()])?;
    expand_label(hkdf, secret.bytes(), b"iv", &mut iv)?;
    Ok((key, iv))
}

/// HKDF-Expand-Label with an empty context (RFC 8446 §7.1).
fn expand_label(
    hkdf: hkdf::Algorithm,
    secret: &[u8],
    label: &[u8],
    out: &mut [u8],
) -> Result<(), Alert> {
    struct Len(usize);
    impl hkdf::KeyType for Len {
        fn len(&self) -> usize {
            self.0
        }
    }
    let length = (out.len() as u16).to_be_bytes();
    let label_len = [(b"tls13 ".len() + label.len()) as u8];
    let info: [&[u8]; 5] = [&length, &label_len, b"tls13 ", label, &[0]];
    hkdf::Prk::new_less_safe(hkdf, secret)
        .expand(&info, Len(out.len()))
        .and_then(|okm| okm.fill(out))
        .map_err(|_| Alert::InternalError)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(suite: CipherSuite) -> (Records, Records) {
        let a = Secret::new(&[7; 32]).unwrap();
        let b = Secret::new(&[9; 32]).unwrap();
        let aead = match suite {
            CipherSuite::TLS13_AES_128_GCM_SHA256 => &aead::AES_128_GCM,
            _ => &aead::CHACHA20_POLY1305,
        };
        let keys = |secret: &Secret| {
            let (key, iv) = traffic_keys(aead, hkdf::HKDF_SHA256, secret).unwrap();
            (key, iv, aead.key_len())
        };
        let (ka, ia, len) = keys(&a);
        let (kb, ib, _) = keys(&b);
        let side = |tx: (&[u8], &[u8], &Secret), rx: (&[u8], &[u8], &Secret)| {
            Records::new(
                suite,
                Keys {
                    key: tx.0,
                    iv: tx.1,
                    seq: 0,
                    secret: Some(tx.2.clone()),
                },
                Keys {
                    key: rx.0,
                    iv: rx.1,
                    seq: 0,
                    secret: Some(rx.2.clone()),
                },
            )
            .unwrap()
        };
        (
            side((&ka[..len], &ia, &a), (&kb[..len], &ib, &b)),
            side((&kb[..len], &ib, &b), (&ka[..len], &ia, &a)),
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
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut out = vec![0; 256];
        let mut n = server.seal(b"before", &mut out).unwrap();
        n += server.seal_key_update(true, &mut out[n..]).unwrap();
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
                    *len
                }
                other => panic!("unexpected {other:?}"),
            };
            input.drain(..len);
        }
        assert_eq!(seen, b"beforeafter");
        assert_eq!((server.tx.seq, client.rx.seq), (1, 1));
        assert_ne!(server.tx.key, client.tx.key);
    }

    #[test]
    fn a_key_at_its_limit_is_replaced_before_sealing() {
        let (mut server, mut client) = pair(CipherSuite::TLS13_AES_128_GCM_SHA256);
        server.tx.seq = AES_GCM_LIMIT;
        client.rx.seq = AES_GCM_LIMIT;
        let mut out = vec![0; 256];
        let n = server.seal(b"data", &mut out).unwrap();
        let mut input = out[..n].to_vec();
        let Opened::KeyUpdate { len, reply: false } = client.open(&mut input).unwrap() else {
            panic!("expected a key update first");
        };
        input.drain(..len);
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
