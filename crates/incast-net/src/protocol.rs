//! The block protocol: fixed 24-byte, versioned, little-endian messages.
//!
//! ```text
//! request:  "INCB" | version u8 | kind u8 (1 = read) | flags u16     | id u64 | bytes u64
//!           then, when flags has FLAG_TOKEN (0x0002), the shared token: 64 bytes, zero-padded
//! response: "INCB" | version u8 | status u8          | flags u16 (0) | id u64 | bytes u64
//!           then `bytes` synthetic bytes when the status is OK
//! ```
//!
//! The token flag was a reserved bit of version 1, so the version did not change: a client
//! without a token sends what it always sent and a server without a token serves it; a
//! server built before tokens refuses a request carrying one as "reserved flags set".
//!
//! A server parses every request with [`parse_request`], which never panics and names what
//! is wrong; a client checks every response header with [`parse_response`].

use std::fmt;

/// First four bytes of every message.
pub const MAGIC: [u8; 4] = *b"INCB";
/// Protocol version this build speaks.
pub const VERSION: u8 = 1;
/// Bytes of a request or a response header.
pub const HEADER_LEN: usize = 24;
/// The only request kind: read `bytes` synthetic bytes.
pub const KIND_READ: u8 = 1;
/// Request flag: the shared token (`TOKEN_LEN` bytes) follows the header.
pub const FLAG_TOKEN: u16 = 0x0002;
/// Bytes of the token that follows a header with [`FLAG_TOKEN`].
pub const TOKEN_LEN: usize = 64;
/// Longest request on the wire: a header and a token.
pub const MAX_REQUEST_LEN: usize = HEADER_LEN + TOKEN_LEN;

/// A read request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Chosen by the client, echoed in the response.
    pub id: u64,
    /// Bytes wanted.
    pub bytes: u64,
}

/// Outcome carried by a response header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// The payload follows.
    Ok = 0,
    /// The request was not understood; the connection closes.
    Malformed = 1,
    /// The request's protocol version is not this server's; the connection closes.
    WrongVersion = 2,
    /// More bytes than the server allows in one request; the connection closes.
    TooLarge = 3,
    /// The server is at its connection limit; the connection closes.
    Busy = 4,
    /// The server wants a token and the request carried none or another one; it closes.
    Unauthorized = 5,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// It does not start with [`MAGIC`].
    BadMagic([u8; 4]),
    /// Another protocol version.
    WrongVersion(u8),
    /// An unknown request kind.
    BadKind(u8),
    /// Reserved flags set.
    BadFlags(u16),
    /// Zero bytes asked for.
    Empty,
    /// More than the server's limit.
    TooLarge {
        /// Bytes asked for.
        asked: u64,
        /// The limit.
        max: u64,
    },
    /// The server wants a token and the request carried none.
    NoToken,
    /// The request carried a token other than the server's.
    WrongToken,
}

impl ProtocolError {
    /// The status a server answers with.
    pub fn status(&self) -> Status {
        match self {
            ProtocolError::WrongVersion(_) => Status::WrongVersion,
            ProtocolError::TooLarge { .. } => Status::TooLarge,
            ProtocolError::NoToken | ProtocolError::WrongToken => Status::Unauthorized,
            _ => Status::Malformed,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::BadMagic(m) => write!(f, "not an incastlab request (magic {m:02x?})"),
            ProtocolError::WrongVersion(v) => {
                write!(f, "protocol version {v}, this server speaks {VERSION}")
            }
            ProtocolError::BadKind(k) => write!(f, "unknown request kind {k}"),
            ProtocolError::BadFlags(x) => write!(f, "reserved flags set ({x:#06x})"),
            ProtocolError::Empty => write!(f, "a request for zero bytes"),
            ProtocolError::TooLarge { asked, max } => {
                write!(f, "{asked} bytes asked for, at most {max} allowed")
            }
            ProtocolError::NoToken => write!(f, "no token (this server has --token-file)"),
            ProtocolError::WrongToken => write!(f, "a wrong token"),
        }
    }
}

impl std::error::Error for ProtocolError {}

fn header(byte5: u8, id: u64, bytes: u64) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[..4].copy_from_slice(&MAGIC);
    b[4] = VERSION;
    b[5] = byte5;
    b[8..16].copy_from_slice(&id.to_le_bytes());
    b[16..24].copy_from_slice(&bytes.to_le_bytes());
    b
}

/// The wire form of a request.
pub fn encode_request(r: &Request) -> [u8; HEADER_LEN] {
    header(KIND_READ, r.id, r.bytes)
}

/// The wire form of a response header.
pub fn encode_response(status: Status, id: u64, bytes: u64) -> [u8; HEADER_LEN] {
    header(status as u8, id, bytes)
}

fn u64_at(b: &[u8; HEADER_LEN], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The wire form of a request carrying a token: header with [`FLAG_TOKEN`], then the token.
pub fn encode_request_with_token(r: &Request, token: &[u8; TOKEN_LEN]) -> [u8; MAX_REQUEST_LEN] {
    let mut b = [0u8; MAX_REQUEST_LEN];
    b[..HEADER_LEN].copy_from_slice(&header(KIND_READ, r.id, r.bytes));
    b[6..8].copy_from_slice(&FLAG_TOKEN.to_le_bytes());
    b[HEADER_LEN..].copy_from_slice(token);
    b
}

/// Parse a request, allowing at most `max_bytes` in one request; no flag may be set (the
/// form every client without a token sends).
pub fn parse_request(b: &[u8; HEADER_LEN], max_bytes: u64) -> Result<Request, ProtocolError> {
    match parse_request_header(b, max_bytes)? {
        (_, true) => Err(ProtocolError::BadFlags(FLAG_TOKEN)),
        (r, false) => Ok(r),
    }
}

/// Parse a request header as a server does: the request, and whether a token of
/// [`TOKEN_LEN`] bytes follows it (the only flag allowed).
pub fn parse_request_header(
    b: &[u8; HEADER_LEN],
    max_bytes: u64,
) -> Result<(Request, bool), ProtocolError> {
    let magic = [b[0], b[1], b[2], b[3]];
    if magic != MAGIC {
        return Err(ProtocolError::BadMagic(magic));
    }
    if b[4] != VERSION {
        return Err(ProtocolError::WrongVersion(b[4]));
    }
    if b[5] != KIND_READ {
        return Err(ProtocolError::BadKind(b[5]));
    }
    let flags = u16::from_le_bytes([b[6], b[7]]);
    if flags & !FLAG_TOKEN != 0 {
        return Err(ProtocolError::BadFlags(flags));
    }
    let bytes = u64_at(b, 16);
    if bytes == 0 {
        return Err(ProtocolError::Empty);
    }
    if bytes > max_bytes {
        return Err(ProtocolError::TooLarge {
            asked: bytes,
            max: max_bytes,
        });
    }
    let r = Request {
        id: u64_at(b, 8),
        bytes,
    };
    Ok((r, flags & FLAG_TOKEN != 0))
}

/// Parse a response header: (status, id, bytes), or what is wrong with it.
pub fn parse_response(b: &[u8; HEADER_LEN]) -> Result<(Status, u64, u64), String> {
    if b[..4] != MAGIC {
        return Err("the server's answer is not an incastlab response".into());
    }
    if b[4] != VERSION {
        return Err(format!("the server speaks protocol version {}", b[4]));
    }
    let status = match b[5] {
        0 => Status::Ok,
        1 => Status::Malformed,
        2 => Status::WrongVersion,
        3 => Status::TooLarge,
        4 => Status::Busy,
        5 => Status::Unauthorized,
        s => return Err(format!("unknown response status {s}")),
    };
    Ok((status, u64_at(b, 8), u64_at(b, 16)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_request_round_trips() {
        let r = Request {
            id: 7,
            bytes: 256_000,
        };
        assert_eq!(parse_request(&encode_request(&r), 1 << 30), Ok(r));
    }

    #[test]
    fn each_defect_is_named() {
        let good = encode_request(&Request { id: 1, bytes: 10 });
        let mut b = good;
        b[0] = b'X';
        assert!(matches!(
            parse_request(&b, 100),
            Err(ProtocolError::BadMagic(_))
        ));
        let mut b = good;
        b[4] = 9;
        assert_eq!(parse_request(&b, 100), Err(ProtocolError::WrongVersion(9)));
        assert_eq!(
            ProtocolError::WrongVersion(9).status(),
            Status::WrongVersion
        );
        let mut b = good;
        b[5] = 2;
        assert_eq!(parse_request(&b, 100), Err(ProtocolError::BadKind(2)));
        let mut b = good;
        b[6] = 1;
        assert_eq!(parse_request(&b, 100), Err(ProtocolError::BadFlags(1)));
        let b = encode_request(&Request { id: 1, bytes: 0 });
        assert_eq!(parse_request(&b, 100), Err(ProtocolError::Empty));
        assert_eq!(
            parse_request(&good, 5),
            Err(ProtocolError::TooLarge { asked: 10, max: 5 })
        );
        assert_eq!(
            ProtocolError::TooLarge { asked: 10, max: 5 }.to_string(),
            "10 bytes asked for, at most 5 allowed"
        );
    }

    /// The request corpus kept in the repository (`fuzz/corpus/request`, shared with the
    /// stable fuzz test `tests/fuzz_request.rs` and the cargo-fuzz target): `ok--WHY.bin` is
    /// accepted (a header, or a header and a token), `bad--VARIANT--WHY.bin` refused with
    /// that [`ProtocolError`] variant, each at a 64 MiB limit.
    #[test]
    fn the_corpus_gives_what_each_file_says() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let data = std::fs::read(&path).unwrap();
            let mut raw = [0u8; HEADER_LEN];
            let k = data.len().min(HEADER_LEN);
            raw[..k].copy_from_slice(&data[..k]);
            let got = parse_request_header(&raw, 64 << 20);
            let parts: Vec<&str> = name.split("--").collect();
            match (parts.as_slice(), &got) {
                (["ok", ..], Ok((r, false))) => assert_eq!(encode_request(r), raw, "{name}"),
                (["ok", ..], Ok((r, true))) => {
                    let mut token = [0u8; TOKEN_LEN];
                    token.copy_from_slice(&data[HEADER_LEN..]);
                    assert_eq!(encode_request_with_token(r, &token)[..], data[..], "{name}");
                }
                (["bad", variant, ..], Err(e)) => {
                    assert!(format!("{e:?}").starts_with(variant), "{name}: {e:?}")
                }
                _ => panic!("{name}: got {got:?}"),
            }
            n += 1;
        }
        assert!(n >= 14, "the corpus holds {n} files");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The request parser as a fuzz target: any 24 bytes give a request within the
        /// limit or a named error, never a panic; an accepted request re-encodes to itself.
        #[test]
        fn any_bytes_parse_or_are_refused_by_name(
            mut raw in proptest::array::uniform24(any::<u8>()),
            framed in any::<bool>(),
            max in 1u64..u64::MAX,
        ) {
            if framed {
                // Most random bytes fail at the magic; half the cases get past it.
                raw[..4].copy_from_slice(&MAGIC);
                raw[4] = VERSION;
            }
            match parse_request(&raw, max) {
                Ok(r) => {
                    prop_assert!(r.bytes >= 1 && r.bytes <= max);
                    prop_assert_eq!(encode_request(&r), raw);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            let _ = parse_response(&raw);
        }
    }
}
