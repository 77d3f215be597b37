//! Content-coding negotiation: which of a resource's representations an
//! `Accept-Encoding` field (RFC 9110 §12.5.3) prefers.
//!
//! Owns the parsing of codings and q-values and the choice between the
//! encodings a resource has. Does not own building the encodings (the
//! snapshot does, at load time) nor the `Vary` header (baked into every
//! negotiable representation's head). Keeps the last field read
//! ([`AcceptMemo`]): browsers repeat theirs. Invariant: the answer is always one of
//! the offered codings, identity, or "nothing acceptable" when identity was
//! refused explicitly.

use crate::fields::{tokens, trim};

/// A content coding tachyon can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Coding {
    Br,
    Zstd,
    Gzip,
    /// Brotli against a dictionary the client holds (RFC 9842 §4.1).
    Dcb,
    /// Zstandard against a dictionary the client holds (RFC 9842 §4.2).
    Dcz,
}

impl Coding {
    /// Every coding a file's bytes alone make, in the server's order of
    /// preference when q-values tie: brotli and zstd are denser than gzip
    /// for web text. The dictionary codings are not among them: they are
    /// chosen by [`delta`], never by [`choose`].
    pub const ALL: [Coding; 3] = [Coding::Br, Coding::Zstd, Coding::Gzip];

    /// The dictionary codings, in the server's order of preference.
    pub const DELTAS: [Coding; 2] = [Coding::Dcb, Coding::Dcz];

    /// Every coding, in declaration order (`coding as usize` indexes it).
    pub const EVERY: [Coding; 5] = [
        Coding::Br,
        Coding::Zstd,
        Coding::Gzip,
        Coding::Dcb,
        Coding::Dcz,
    ];

    /// The token used in `Accept-Encoding` and `Content-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Br => "br",
            Coding::Zstd => "zstd",
            Coding::Gzip => "gzip",
            Coding::Dcb => "dcb",
            Coding::Dcz => "dcz",
        }
    }

    /// True for the dictionary codings.
    pub fn is_delta(self) -> bool {
        matches!(self, Coding::Dcb | Coding::Dcz)
    }

    /// The file-name suffix of a precompressed sibling (`app.js.br`).
    pub fn suffix(self) -> &'static str {
        match self {
            Coding::Br => ".br",
            Coding::Zstd => ".zst",
            Coding::Gzip => ".gz",
            // Never a sibling on disk: a delta depends on what the client has.
            Coding::Dcb => ".dcb",
            Coding::Dcz => ".dcz",
        }
    }

    /// Parses a coding token (case-insensitive; `x-gzip` is gzip, §8.4.1.3).
    pub fn from_token(token: &[u8]) -> Option<Coding> {
        Coding::ALL
            .into_iter()
            .find(|c| token.eq_ignore_ascii_case(c.token().as_bytes()))
            .or_else(|| {
                token
                    .eq_ignore_ascii_case(b"x-gzip")
                    .then_some(Coding::Gzip)
            })
    }
}

/// The representation to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The content as stored.
    Identity,
    /// The representation encoded with this coding.
    Encoded(Coding),
    /// The client refused identity and every coding on offer: 406.
    NotAcceptable,
}

/// Picks among `offered` (codings the resource has) for the request's
/// `Accept-Encoding`. No field means any coding is acceptable, but the
/// client has not said it can decode one, so identity is sent (the RFC
/// allows either; curl without `--compressed` expects identity).
pub fn choose(accept_encoding: Option<&[u8]>, offered: &[Coding]) -> Choice {
    match accept_encoding {
        None => Choice::Identity,
        Some(field) => Accepted::parse(field).choose(offered),
    }
}

/// What one `Accept-Encoding` field accepts: each coding's weight, and
/// those of `*` and `identity`, in thousandths (1000 is q=1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    star: Option<u16>,
    identity: Option<u16>,
    explicit: [Option<u16>; Coding::ALL.len()],
}

impl Accepted {
    /// Reads a field's members; unknown codings are skipped.
    pub fn parse(field: &[u8]) -> Accepted {
        let mut accepted = Accepted {
            star: None,
            identity: None,
            explicit: [None; Coding::ALL.len()],
        };
        for item in tokens(field) {
            let (name, q) = member(item);
            if name == b"*" {
                accepted.star = Some(q);
            } else if name.eq_ignore_ascii_case(b"identity") {
                accepted.identity = Some(q);
            } else if let Some(coding) = Coding::from_token(name) {
                let slot = &mut accepted.explicit[coding as usize];
                // Repeated members: keep the most generous weight.
                *slot = Some(slot.map_or(q, |old| old.max(q)));
            }
        }
        accepted
    }

    /// The representation to send among `offered`.
    pub fn choose(&self, offered: &[Coding]) -> Choice {
        // Deltas are never a plain choice: they depend on what the client holds.
        let weight = |c: Coding| match self.explicit.get(c as usize) {
            Some(q) => q.or(self.star).unwrap_or(0),
            None => 0,
        };
        let best = offered
            .iter()
            .copied()
            .filter(|&c| weight(c) > 0)
            .max_by_key(|&c| (weight(c), std::cmp::Reverse(c)));
        // Identity is acceptable unless refused by name or by `*;q=0`
        // (§12.5.3). Unnamed, it ranks just above zero, so any coding the
        // client named wins.
        let identity_q = self.identity.or(self.star.filter(|&q| q == 0)).unwrap_or(1);
        match best {
            Some(c) if weight(c) >= identity_q => Choice::Encoded(c),
            _ if identity_q > 0 => Choice::Identity,
            Some(c) => Choice::Encoded(c),
            None => Choice::NotAcceptable,
        }
    }
}

/// The last `Accept-Encoding` field read and what it accepts. A browser
/// sends the same field with every request, and reading it again cost
/// more than the rest of the decision (`bench/results/user-time-2026-12-04/`);
/// comparing it with the last one costs a `memcmp`.
#[derive(Debug, Default)]
pub struct AcceptMemo {
    field: Vec<u8>,
    accepted: Option<Accepted>,
}

impl AcceptMemo {
    /// Fields longer than this are read each time, not kept.
    const LONGEST: usize = 256;

    /// What `field` accepts.
    pub fn accepted(&mut self, field: &[u8]) -> Accepted {
        match self.accepted {
            Some(accepted) if self.field == field => accepted,
            _ => {
                let accepted = Accepted::parse(field);
                if field.len() <= Self::LONGEST {
                    self.field.clear();
                    self.field.extend_from_slice(field);
                    self.accepted = Some(accepted);
                }
                accepted
            }
        }
    }
}

/// The dictionary coding to send, if the client named one with a weight
/// above zero (RFC 9842 §4: a client lists `dcb`/`dcz` only when it sends
/// `Available-Dictionary`; `*` does not count, it predates them) and the
/// resource has a delta in it (`offered`, in the server's preference).
pub fn delta(accept_encoding: &[u8], offered: &[Coding]) -> Option<Coding> {
    let mut best: Option<(u16, Coding)> = None;
    for item in tokens(accept_encoding) {
        let (name, q) = member(item);
        let Some(&coding) = offered
            .iter()
            .find(|c| name.eq_ignore_ascii_case(c.token().as_bytes()))
        else {
            continue;
        };
        let rank = |c: Coding| offered.iter().position(|&o| o == c);
        let better = match best {
            None => true,
            Some((bq, bc)) => q > bq || (q == bq && rank(coding) < rank(bc)),
        };
        if q > 0 && better {
            best = Some((q, coding));
        }
    }
    best.map(|(_, coding)| coding)
}

/// The SHA-256 an `Available-Dictionary` field names: a Structured Field
/// byte sequence (`:` base64 `:`, RFC 8941 §3.3.5) of exactly 32 bytes
/// (RFC 9842 §2.2). Anything else is `None`: a malformed field is ignored,
/// never an error.
pub fn available_dictionary(field: &[u8]) -> Option<[u8; 32]> {
    use base64::Engine as _;
    let inner = trim(field).strip_prefix(b":")?.strip_suffix(b":")?;
    // 32 bytes are 44 base64 characters with one `=` of padding.
    if inner.len() != 44 {
        return None;
    }
    let mut hash = [0u8; 32];
    let n = base64::engine::general_purpose::STANDARD
        .decode_slice(inner, &mut hash)
        .ok()?;
    (n == 32).then_some(hash)
}

/// One `Accept-Encoding` member: its coding name and its weight in
/// thousandths (1000 when it has no `q`).
fn member(item: &[u8]) -> (&[u8], u16) {
    let mut parts = item.split(|&b| b == b';');
    let name = trim(parts.next().unwrap_or(b""));
    let mut q = 1000;
    for param in parts {
        let param = trim(param);
        if let Some(value) = param
            .strip_prefix(b"q=")
            .or_else(|| param.strip_prefix(b"Q="))
        {
            // A malformed weight makes the member unusable, not q=1.
            q = qvalue(value).unwrap_or(0);
        }
    }
    (name, q)
}

/// `1`, `1.000`, `0.5`, `0` … as thousandths (RFC 9110 §12.4.2).
fn qvalue(value: &[u8]) -> Option<u16> {
    let value = trim(value);
    let (int, frac) = match value.iter().position(|&b| b == b'.') {
        Some(dot) => (&value[..dot], &value[dot + 1..]),
        None => (value, &b""[..]),
    };
    if int.len() != 1 || frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0'));
    }
    match int[0] {
        b'0' => Some(thousandths),
        b'1' if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Coding::*;

    const ALL: &[Coding] = &[Br, Zstd, Gzip];

    fn pick(field: &str, offered: &[Coding]) -> Choice {
        choose(Some(field.as_bytes()), offered)
    }

    #[test]
    fn no_field_means_identity() {
        assert_eq!(choose(None, ALL), Choice::Identity);
    }

    #[test]
    fn browsers_get_brotli_and_ties_prefer_the_denser_coding() {
        assert_eq!(pick("gzip, deflate, br, zstd", ALL), Choice::Encoded(Br));
        assert_eq!(pick("gzip, zstd", ALL), Choice::Encoded(Zstd));
        assert_eq!(pick("gzip", ALL), Choice::Encoded(Gzip));
        assert_eq!(pick("GZIP", &[Gzip]), Choice::Encoded(Gzip));
        assert_eq!(pick("x-gzip", &[Gzip]), Choice::Encoded(Gzip));
    }

    #[test]
    fn q_values_rank_and_zero_refuses() {
        assert_eq!(pick("br;q=0.5, gzip;q=0.8", ALL), Choice::Encoded(Gzip));
        assert_eq!(pick("br;q=0, gzip", ALL), Choice::Encoded(Gzip));
        assert_eq!(pick("br;q=0", &[Br]), Choice::Identity);
        assert_eq!(pick("br; q=1.000", &[Br]), Choice::Encoded(Br));
        assert_eq!(pick("br;q=2", &[Br]), Choice::Identity, "bad weight");
        assert_eq!(pick("br;q=0.1234", &[Br]), Choice::Identity, "bad weight");
    }

    #[test]
    fn a_delta_needs_its_coding_named_with_weight() {
        let both = &[Dcb, Dcz];
        assert_eq!(delta(b"gzip, deflate, br, zstd, dcb, dcz", both), Some(Dcb));
        assert_eq!(delta(b"br, dcz", both), Some(Dcz));
        assert_eq!(delta(b"dcb;q=0.5, dcz", both), Some(Dcz));
        assert_eq!(delta(b"DCZ", &[Dcz]), Some(Dcz));
        assert_eq!(delta(b"dcb;q=0, dcz;q=0", both), None);
        assert_eq!(delta(b"*", both), None, "a star predates dictionaries");
        assert_eq!(delta(b"br, gzip", both), None);
        assert_eq!(delta(b"dcb", &[Dcz]), None, "not on offer");
        assert_eq!(
            pick("dcb, dcz", ALL),
            Choice::Identity,
            "never chosen as a plain coding"
        );
    }

    #[test]
    fn available_dictionary_is_a_32_byte_sf_binary() {
        let field = b":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:";
        let hash = available_dictionary(field).unwrap();
        assert_eq!(&hash[..4], &[0xa5, 0x91, 0xa6, 0xd4]);
        assert_eq!(
            available_dictionary(b" :pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=: "),
            Some(hash)
        );
        for bad in [
            &b"pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4="[..],
            b":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4:",
            b":AAAA:",
            b":!ZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:",
            b"",
            b"::",
        ] {
            assert_eq!(
                available_dictionary(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn star_and_identity() {
        assert_eq!(pick("*", ALL), Choice::Encoded(Br));
        assert_eq!(pick("*;q=0, gzip", ALL), Choice::Encoded(Gzip));
        assert_eq!(pick("identity", ALL), Choice::Identity);
        assert_eq!(pick("identity;q=0", &[]), Choice::NotAcceptable);
        assert_eq!(pick("*;q=0", &[Gzip]), Choice::NotAcceptable);
        assert_eq!(pick("identity;q=0, gzip", &[Br]), Choice::NotAcceptable);
        assert_eq!(
            pick("identity;q=0", &[Zstd]),
            Choice::NotAcceptable,
            "zstd is not named and there is no *"
        );
        assert_eq!(pick("identity;q=1, br;q=0.5", &[Br]), Choice::Identity);
        assert_eq!(
            pick("", ALL),
            Choice::Identity,
            "empty field: no coding wanted"
        );
    }

    #[test]
    fn the_memo_answers_as_a_fresh_reading_whatever_came_before() {
        let long = format!("gzip;q=0.1, {}br", "x-unknown;q=0.5, ".repeat(20));
        let fields = [
            "gzip, deflate, br, zstd",
            "gzip, deflate, br, zstd",
            "gzip",
            "identity;q=0",
            long.as_str(),
            "gzip",
            long.as_str(),
            "",
            "gzip, deflate, br, zstd",
        ];
        let mut memo = AcceptMemo::default();
        for field in fields {
            let fresh = Accepted::parse(field.as_bytes());
            assert_eq!(memo.accepted(field.as_bytes()), fresh, "{field:?}");
        }
        assert!(long.len() > AcceptMemo::LONGEST);
        assert_eq!(
            memo.field, b"gzip, deflate, br, zstd",
            "a long field is not kept"
        );
        memo.accepted(long.as_bytes());
        assert_eq!(memo.field, b"gzip, deflate, br, zstd");
    }
}
