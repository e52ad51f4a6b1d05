//! Network namespaces by name (as `ip netns add` makes them, under /var/run/netns).
//!
//! A socket belongs to the namespace it was created in, for good: a thread that enters a
//! namespace with `setns(2)`, opens a socket there and leaves hands back a socket that lives in
//! that namespace whichever thread then uses it. This is how one process serves every sender
//! namespace of an emulation from one readiness loop. `setns` changes the calling thread only,
//! so the entering is done by a short-lived thread of its own and no other thread moves.

use std::io;

/// Where `ip netns` keeps its named namespaces.
pub const NETNS_DIR: &str = "/var/run/netns";

/// Network namespaces are Linux's: elsewhere entering one is refused, naming it.
#[cfg(not(target_os = "linux"))]
pub fn enter(name: &str) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("no namespace {name:?} here: network namespaces need Linux"),
    ))
}

/// Move the calling thread into the network namespace `name`. Only a thread that is about to
/// end (or that is meant to stay there) should call this; see [`in_each`].
#[cfg(target_os = "linux")]
pub fn enter(name: &str) -> io::Result<()> {
    use std::os::fd::AsRawFd;

    let path = format!("{NETNS_DIR}/{name}");
    let f = std::fs::File::open(&path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("no namespace {name:?} ({path}: {e}); see `ip netns list`"),
        )
    })?;
    // SAFETY: setns on a valid descriptor of a network namespace; it changes only this
    // thread's namespace.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    if r != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot enter namespace {name:?}: {e} (needs root)"),
        ));
    }
    Ok(())
}

/// Run `f(i, item)` for each item, inside namespace `ns(item)` (or the caller's namespace
/// where that is `None`), on one helper thread that ends afterwards: the caller's thread never
/// changes namespace. Stops at the first error.
pub fn in_each<I, T, F>(
    items: &[I],
    ns: impl Fn(&I) -> Option<&str> + Sync,
    f: F,
) -> io::Result<Vec<T>>
where
    I: Sync,
    T: Send,
    F: Fn(usize, &I) -> io::Result<T> + Sync,
{
    // A thread that setns'd cannot go back without the original's descriptor; a thread that
    // never entered one runs the items without a namespace first, so they see the caller's.
    let home: Vec<usize> = (0..items.len())
        .filter(|&i| ns(&items[i]).is_none())
        .collect();
    let away: Vec<usize> = (0..items.len())
        .filter(|&i| ns(&items[i]).is_some())
        .collect();
    let mut out: Vec<Option<T>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        s.spawn(|| -> io::Result<()> {
            for &i in home.iter().chain(&away) {
                if let Some(name) = ns(&items[i]) {
                    enter(name)?;
                }
                out[i] = Some(f(i, &items[i])?);
            }
            Ok(())
        })
        .join()
        .map_err(|_| io::Error::other("the namespace helper thread panicked"))?
    })?;
    Ok(out
        .into_iter()
        .map(|x| x.expect("every item ran"))
        .collect())
}

/// The text of `/proc/thread-self/net/<file>` (e.g. `netstat`, `snmp`: the namespace's TCP
/// counters) in each namespace, in one pass: `result[i][j]` is `files[j]` in `names[i]`.
/// Cheaper by far than a process per namespace (`ip netns exec NS cat ...`).
pub fn read_proc_net(names: &[String], files: &[String]) -> io::Result<Vec<Vec<String>>> {
    if let Some(bad) = files
        .iter()
        .find(|f| f.is_empty() || f.contains('/') || f.starts_with('.'))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a file of /proc/net: {bad:?}"),
        ));
    }
    in_each(
        names,
        |n| Some(n.as_str()),
        |_, _| {
            files
                .iter()
                .map(|f| std::fs::read_to_string(format!("/proc/thread-self/net/{f}")))
                .collect()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_is_named() {
        let e = enter("incastlab-no-such-namespace").unwrap_err();
        assert!(
            e.to_string().contains("\"incastlab-no-such-namespace\""),
            "{e}"
        );
    }

    #[test]
    fn items_without_a_namespace_run_in_the_callers_in_order() {
        let got = in_each(&[1, 2, 3], |_| None, |i, x| Ok(i * 10 + x)).unwrap();
        assert_eq!(got, vec![1, 12, 23]);
    }

    #[test]
    fn only_plain_proc_net_files_are_read() {
        let e = read_proc_net(&[], &["../../etc/passwd".into()]).unwrap_err();
        assert!(e.to_string().contains("not a file of /proc/net"), "{e}");
    }

    #[test]
    fn the_first_error_stops_the_rest() {
        let items = [None, Some("incastlab-no-such-namespace")];
        let e = in_each(&items, |x| *x, |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("no namespace"), "{e}");
    }
}
