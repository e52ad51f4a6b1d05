//! Buffers of per-connection queues, lent while a queue is empty. A cluster of H hosts has
//! H(H−1) connections and each has three queues (requests to read, replies waiting out their
//! jitter, replies expected); most of them are empty most of the time, and a buffer kept by
//! each would cost a few hundred bytes a connection (a third of a gigabyte at 1,024 hosts).
//! A queue that empties hands its buffer here and the next push on an empty queue takes one
//! back: memory follows the gets in flight, and a get in flight still allocates nothing once
//! the pool holds as many buffers as the busiest moment needed.

use std::collections::VecDeque;

/// Spare buffers of queues of `T`.
#[derive(Debug)]
pub(super) struct Spare<T>(Vec<VecDeque<T>>);

impl<T> Default for Spare<T> {
    fn default() -> Self {
        Spare(Vec::new())
    }
}

impl<T> Spare<T> {
    /// Append `x` to `q`, with a lent buffer if `q` has none.
    #[inline]
    pub(super) fn push(&mut self, q: &mut VecDeque<T>, x: T) {
        if q.capacity() == 0 {
            if let Some(b) = self.0.pop() {
                *q = b;
            }
        }
        q.push_back(x);
    }

    /// Take `q`'s buffer if it is empty.
    #[inline]
    pub(super) fn lend(&mut self, q: &mut VecDeque<T>) {
        if q.is_empty() && q.capacity() > 0 {
            self.0.push(std::mem::take(q));
        }
    }

    /// Buffers waiting for a queue.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_queue_lends_its_buffer_and_the_next_push_takes_it() {
        let mut spare = Spare::default();
        let mut a: VecDeque<u32> = VecDeque::new();
        spare.push(&mut a, 1);
        spare.lend(&mut a);
        assert_eq!(spare.len(), 0, "a queue holding a value keeps its buffer");
        a.pop_front();
        spare.lend(&mut a);
        assert_eq!((spare.len(), a.capacity()), (1, 0));
        let mut b = VecDeque::new();
        spare.push(&mut b, 7);
        assert_eq!((spare.len(), b.front()), (0, Some(&7)));
        assert!(b.capacity() > 0);
    }
}
