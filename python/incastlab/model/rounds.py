"""Later overflows (:func:`incastlab.model.burst._burst`): a round that overflows the port by
little cuts only the senders that lost segments of it; the others go on in slow start, and
their next round can overflow the port again.

Drop-tail keeps the first packets of the senders' interleaved bursts and drops what arrives
once the port is full: where that is less than a segment from each sender, the senders whose
segments all came in before it filled lose nothing. They double their windows as before, and
their next round, arriving at twice the link rate, can overflow the port on its own, with its
own timeouts. The simulator at 354 x 44 KB into 2.1 MB (1,365 packets) at 69 Gbps, classic
Reno, IW 4 restarting every block: the first round (1,416 segments) overflows the port by a few
packets, and the block takes one RTO (33 ms) against 3 ms without, with 4.9 RTOs a block. The
first overflow alone accounts for 0.09 of them; with the next round of the senders it left
untouched, 4.6.

Where the port drops whole rounds the overflow is deep, and the serial waits that follow
(:mod:`incastlab.model.serial`) make the block; the rounds of the senders it served there are
not followed (they would meet the waves of retransmissions, which the model does not let share
the port with them).
"""

from __future__ import annotations


def untouched(senders: float, per_sender: float, cap: float) -> float:
    """Of ``senders`` whose interleaved rounds of ``per_sender`` segments overflow a port
    that takes ``cap`` packets of them, those that lost nothing (none where some lost their
    whole round): one segment lost from each of the last to arrive."""
    if senders > cap:
        return 0.0
    lost = max(0.0, senders * per_sender - cap)
    return max(0.0, senders - lost)
