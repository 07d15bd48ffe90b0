//! Watching a checkout for changes while overlay worktrees are layered on it.
//!
//! overlayfs does not expect its lower layer to change under it, and a task must never see a
//! tree that is half the base and half something else. While the checkout is the lower layer,
//! an inotify watch on each of its tracked directories (set before the checkout is found
//! clean, so nothing slips between the two) records every change to a name the tasks can see.
//! The pool looks before it hands out each worktree; after the first change it hands out
//! worktrees of a template checkout instead.

use std::collections::HashMap;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Mutex;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

use super::mask::{Mask, join};

/// The events that change what a directory holds or what its entries are.
fn flags() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::DONT_FOLLOW
        | WatchFlags::ONLYDIR
}

/// The watches on one checkout, in one or more inotify instances: the kernel adds watches
/// to one instance one at a time, so threads that watch a checkout's directories side by side
/// each use one of their own.
#[derive(Debug)]
pub(crate) struct Watch {
    groups: Vec<Group>,
    /// The first change seen (relative path, or what happened), once there was one.
    changed: Mutex<Option<String>>,
}

/// One inotify instance and the directory of each of its watches (relative to the checkout's
/// root).
#[derive(Debug)]
struct Group {
    fd: OwnedFd,
    dirs: Mutex<HashMap<i32, Vec<u8>>>,
}

impl Watch {
    /// A watch on no directory yet, with `groups` inotify instances (at least one) for
    /// [`Watch::add`].
    pub(crate) fn new(groups: usize) -> io::Result<Watch> {
        let groups = (0..groups.max(1))
            .map(|_| {
                Ok(Group {
                    fd: inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?,
                    dirs: Mutex::new(HashMap::new()),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Watch {
            groups,
            changed: Mutex::new(None),
        })
    }

    /// Watch the directory `path`, which is `rel` in the checkout, in the instance `group`
    /// (modulo their number); a symbolic link there is refused, not followed.
    pub(crate) fn add(&self, group: usize, path: &Path, rel: &[u8]) -> io::Result<()> {
        let g = &self.groups[group % self.groups.len()];
        let wd = inotify::add_watch(&g.fd, path, flags())?;
        g.dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(wd, rel.to_vec());
        Ok(())
    }

    /// The first change to the checkout that the tasks could see, if there was one yet
    /// (changes to names `mask` hides or shares do not count).
    pub(crate) fn changed(&self, mask: &Mask) -> Option<String> {
        let mut seen = self.changed.lock().unwrap_or_else(|e| e.into_inner());
        if seen.is_none() {
            *seen = self.groups.iter().find_map(|g| g.changed(mask));
        }
        seen.clone()
    }
}

impl Group {
    /// The first change among this instance's events that the tasks could see.
    fn changed(&self, mask: &Mask) -> Option<String> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(e) => e,
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return None,
                Err(e) => return Some(format!("the watch on the checkout failed: {e}")),
            };
            if event.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                return Some("too many changes to follow".into());
            }
            let dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
            let Some(dir) = dirs.get(&event.wd()) else {
                continue;
            };
            let rel = match event.file_name() {
                Some(name) => join(dir, name.to_bytes()),
                None => dir.clone(),
            };
            if event.file_name().is_some() && mask.ignores(&rel) {
                continue;
            }
            return Some(if rel.is_empty() {
                ".".into()
            } else {
                String::from_utf8_lossy(&rel).into_owned()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_to_visible_names_are_seen_and_hidden_ones_are_not() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        let w = Watch::new(1).unwrap();
        w.add(0, root, b"").unwrap();
        w.add(0, &root.join("src"), b"src").unwrap();
        let mut mask = Mask::default();
        mask.hidden.insert(b".runner".to_vec());
        assert_eq!(w.changed(&mask), None);
        std::fs::create_dir_all(root.join(".runner/x")).unwrap();
        std::fs::write(root.join(".runner/x/t.json"), "{}").unwrap();
        assert_eq!(w.changed(&mask), None);
        std::fs::write(root.join("src/a.rs"), "b").unwrap();
        assert_eq!(w.changed(&mask).as_deref(), Some("src/a.rs"));
        // Once changed, always changed.
        assert_eq!(w.changed(&mask).as_deref(), Some("src/a.rs"));
    }
}
