//! Ids of TCP connections and their endpoints, so that which end of which connection a number
//! means is spelled out at every use instead of computed (`2c + 1`, `ep ^ 1`).
//!
//! Connection `c` joins two endpoints: the client's at the receiver host, which asks for the
//! data, and the server's at a sender host, which answers with it. Workload connections come
//! first, then background flows.
//!
//! Links have an id of their own here too, apart from the topology that numbers them, so that
//! routing (which the topology uses) can name links without importing the topology.

/// A TCP connection: a workload connection (task by task, server by server) or a background
/// flow after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u32);

/// One end of a TCP connection; endpoints of connection `c` are numbered `2c` (the client,
/// at the receiver) and `2c + 1` (the server, a sender).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointId(pub u32);

impl ConnId {
    /// The client's endpoint, at the receiver host: it sends requests and receives the data.
    #[inline]
    pub const fn receiver(self) -> EndpointId {
        EndpointId(2 * self.0)
    }

    /// The server's endpoint, at a sender host: it receives requests and sends the data.
    #[inline]
    pub const fn sender(self) -> EndpointId {
        EndpointId(2 * self.0 + 1)
    }

    /// The connection as an index into per-connection tables.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl EndpointId {
    /// The connection this endpoint belongs to.
    #[inline]
    pub const fn conn(self) -> ConnId {
        ConnId(self.0 / 2)
    }

    /// The other end of the same connection.
    #[inline]
    pub const fn peer(self) -> EndpointId {
        EndpointId(self.0 ^ 1)
    }

    /// Whether this is the server's end, which sends the data (see [`ConnId::sender`]).
    #[inline]
    pub const fn is_sender(self) -> bool {
        self.0 % 2 == 1
    }

    /// The same end (sender or receiver) of connection `conn`.
    #[inline]
    pub const fn same_end_of(self, conn: ConnId) -> EndpointId {
        if self.is_sender() {
            conn.sender()
        } else {
            conn.receiver()
        }
    }

    /// The endpoint as an index into per-endpoint tables.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A link: a NIC or a switch port with the wire behind it, by its index in the network's
/// links (`Network::links`). Its own type, so that a link cannot be taken for a host, a flow
/// or an endpoint (all bare integers once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LinkId(pub u32);

impl LinkId {
    /// Its index in the network's links.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The link a packet goes on to after the one it is crossing, as its arrival event carries it
/// when the fabric worked it out as the packet entered the pipe (an eager trimming port's
/// packet, whose next hop it warms anyway: `Fabric::offer`): one route computation per hop
/// instead of two. Here beside [`LinkId`] so that the engine's events can carry it without
/// importing the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next(u32);

impl Next {
    /// Not worked out: the arrival computes it.
    pub const UNKNOWN: Next = Next(u32::MAX);
    /// The packet's destination is at the far end.
    const LAST: Next = Next(u32::MAX - 1);

    /// `n`, the link after (`None`: the far end is the destination).
    #[inline]
    pub fn known(n: Option<LinkId>) -> Next {
        match n {
            Some(l) => {
                debug_assert!(l.0 < Next::LAST.0);
                Next(l.0)
            }
            None => Next::LAST,
        }
    }

    /// The link after, if known.
    #[inline]
    pub fn get(self) -> Option<Option<LinkId>> {
        match self {
            Next::UNKNOWN => None,
            Next::LAST => Some(None),
            Next(l) => Some(Some(LinkId(l))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connections_ends_know_their_connection_and_each_other() {
        let c = ConnId(5);
        assert_eq!(c.receiver(), EndpointId(10));
        assert_eq!(c.sender(), EndpointId(11));
        assert_eq!(c.sender().conn(), c);
        assert_eq!(c.receiver().conn(), c);
        assert_eq!(c.sender().peer(), c.receiver());
        assert_eq!(c.receiver().peer(), c.sender());
        assert!(c.sender().is_sender() && !c.receiver().is_sender());
        assert_eq!(c.sender().same_end_of(ConnId(2)), ConnId(2).sender());
        assert_eq!(c.receiver().same_end_of(ConnId(2)), ConnId(2).receiver());
    }
}
