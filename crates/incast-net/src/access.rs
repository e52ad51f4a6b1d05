//! Who may use a block server: an allow-list of address blocks (`--allow`) and a shared
//! token carried after the request header (`--token-file`).
//!
//! The token keeps out peers that do not know it; it is sent in the clear (the block
//! protocol has no encryption), so anyone who can watch the path can copy it. It is a fence
//! for a shared lab network, not authentication against an eavesdropper.

use std::fmt;
use std::net::IpAddr;

use crate::protocol::TOKEN_LEN;

/// An address block, `10.0.0.0/8` or `fd00::/64`; a bare address is a block of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parse one block; the error names what is wrong (no flag name: the caller adds it).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let t = text.trim();
        let shown: String = t.chars().take(60).collect();
        let (addr, prefix) = match t.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (t, None),
        };
        let net: IpAddr = addr.parse().map_err(|_| {
            format!("{shown:?} is not an address block (allowed: 10.0.0.0/8, 192.0.2.7, fd00::/64)")
        })?;
        let bits = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => match p.parse::<u8>() {
                Ok(n) if n <= bits => n,
                _ => {
                    return Err(format!(
                        "{shown:?}: the prefix length must be 0..{bits} for this address"
                    ))
                }
            },
        };
        if mask(net, prefix) != net {
            return Err(format!(
                "{shown:?}: host bits set after /{prefix} (did you mean {}/{prefix}?)",
                mask(net, prefix)
            ));
        }
        Ok(Cidr { net, prefix })
    }

    /// Parse a comma-separated list; an empty list is refused (omit the flag to allow all).
    pub fn parse_list(text: &str) -> Result<Vec<Cidr>, String> {
        let parts: Vec<&str> = text.split(',').filter(|p| !p.trim().is_empty()).collect();
        if parts.is_empty() {
            return Err("no address block given (omit the flag to accept every address)".into());
        }
        if parts.len() > 4096 {
            return Err(format!("{} address blocks, at most 4096", parts.len()));
        }
        parts.into_iter().map(Cidr::parse).collect()
    }

    /// Whether `ip` is inside the block. An IPv4 peer seen on an IPv6 socket
    /// (`::ffff:a.b.c.d`) matches IPv4 blocks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        ip.is_ipv4() == self.net.is_ipv4() && mask(ip, self.prefix) == self.net
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

/// Whether `ip` may connect: an empty list allows every address.
pub fn allowed(list: &[Cidr], ip: IpAddr) -> bool {
    list.is_empty() || list.iter().any(|c| c.contains(ip))
}

/// Fewest bytes a token may have: shorter ones are guessable by a patient flood.
pub const TOKEN_MIN: usize = 16;

/// A shared token: 16..=64 printable ASCII characters without spaces, zero-padded on the wire
/// (a NUL cannot be part of one, so padding is unambiguous).
#[derive(Clone, PartialEq, Eq)]
pub struct Token([u8; TOKEN_LEN]);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret.
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token from a token file's text (surrounding whitespace and a final newline ignored).
    pub fn parse(text: &str) -> Result<Token, String> {
        let t = text.trim();
        if t.len() < TOKEN_MIN || t.len() > TOKEN_LEN {
            return Err(format!(
                "the token has {} characters; {TOKEN_MIN}..{TOKEN_LEN} allowed \
                 (e.g. `head -c 24 /dev/urandom | base64`)",
                t.chars().count()
            ));
        }
        if let Some(c) = t.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(format!(
                "the token holds {c:?}: only printable ASCII without spaces is allowed"
            ));
        }
        let mut b = [0u8; TOKEN_LEN];
        b[..t.len()].copy_from_slice(t.as_bytes());
        Ok(Token(b))
    }

    /// The token's wire form.
    pub fn wire(&self) -> &[u8; TOKEN_LEN] {
        &self.0
    }

    /// Compare with what a peer sent, in time independent of where they differ.
    pub fn matches(&self, sent: &[u8]) -> bool {
        sent.len() == TOKEN_LEN && self.0.iter().zip(sent).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_parse_and_match() {
        let c = Cidr::parse("10.1.0.0/16").unwrap();
        assert!(c.contains("10.1.200.3".parse().unwrap()));
        assert!(!c.contains("10.2.0.1".parse().unwrap()));
        assert!(c.contains("::ffff:10.1.0.9".parse().unwrap()));
        assert!(!c.contains("fd00::1".parse().unwrap()));
        let one = Cidr::parse("127.0.0.7").unwrap();
        assert!(one.contains("127.0.0.7".parse().unwrap()));
        assert!(!one.contains("127.0.0.8".parse().unwrap()));
        assert!(Cidr::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8".parse().unwrap()));
        let v6 = Cidr::parse("fd00::/64").unwrap();
        assert!(v6.contains("fd00::abcd".parse().unwrap()));
        assert_eq!(v6.to_string(), "fd00::/64");
        let l = Cidr::parse_list("127.0.0.2/32, 10.0.0.0/8").unwrap();
        assert!(allowed(&l, "10.9.9.9".parse().unwrap()));
        assert!(!allowed(&l, "127.0.0.1".parse().unwrap()));
        assert!(allowed(&[], "127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn bad_blocks_are_named() {
        for (bad, says) in [
            ("10.0.0.0/33", "0..32"),
            ("fd00::/129", "0..128"),
            ("10.0.0.1/8", "did you mean 10.0.0.0/8"),
            ("banana", "not an address block"),
            ("10.0.0.0/-1", "prefix length"),
            ("10.0.0.0/", "prefix length"),
        ] {
            let e = Cidr::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(Cidr::parse_list(" , ")
            .unwrap_err()
            .contains("no address block"));
    }

    #[test]
    fn tokens_are_checked_and_compared() {
        let t = Token::parse("  0123456789abcdef\n").unwrap();
        let mut sent = [0u8; TOKEN_LEN];
        sent[..16].copy_from_slice(b"0123456789abcdef");
        assert!(t.matches(&sent));
        sent[15] = b'g';
        assert!(!t.matches(&sent));
        assert!(!t.matches(&sent[..10]));
        assert!(Token::parse("short").unwrap_err().contains("16..64"));
        assert!(Token::parse(&"x".repeat(65))
            .unwrap_err()
            .contains("16..64"));
        assert!(Token::parse("0123456789 abcdef")
            .unwrap_err()
            .contains("printable"));
        assert!(Token::parse("0123456789abcdé€")
            .unwrap_err()
            .contains("printable"));
        assert_eq!(format!("{t:?}"), "Token(..)");
    }
}
