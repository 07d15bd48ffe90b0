//! Watching a checkout for changes while overlay worktrees are layered on it.
//!
//! overlayfs does not expect its lower layer to change under it, and a task must never see a
//! tree that is half the base and half something else. While the checkout is the lower layer,
//! an inotify watch on each of its tracked directories (set before the checkout is found
//! clean, so nothing slips between the two) records every change to a name the tasks can see.
//! The pool looks before it hands out each worktree; after the first change it hands out
//! worktrees of a template checkout instead.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
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

/// The watches on one checkout.
#[derive(Debug)]
pub(crate) struct Watch {
    fd: OwnedFd,
    /// Each watch's directory, relative to the checkout's root.
    dirs: HashMap<i32, Vec<u8>>,
    /// The first change seen (relative path, or what happened), once there was one.
    changed: Mutex<Option<String>>,
}

impl Watch {
    /// Watch the directories `dirs` (relative to `root`; the root is the empty path).
    pub(crate) fn start<'a>(
        root: &Path,
        dirs: impl IntoIterator<Item = &'a Vec<u8>>,
    ) -> io::Result<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        let mut map = HashMap::new();
        for d in dirs {
            let wd = inotify::add_watch(&fd, root.join(OsStr::from_bytes(d)), flags())?;
            map.insert(wd, d.clone());
        }
        Ok(Watch {
            fd,
            dirs: map,
            changed: Mutex::new(None),
        })
    }

    /// The first change to the checkout that the tasks could see, if there was one yet
    /// (changes to names `mask` hides or shares do not count).
    pub(crate) fn changed(&self, mask: &Mask) -> Option<String> {
        let mut seen = self.changed.lock().unwrap_or_else(|e| e.into_inner());
        if seen.is_some() {
            return seen.clone();
        }
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(e) => e,
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => break,
                Err(e) => {
                    *seen = Some(format!("the watch on the checkout failed: {e}"));
                    break;
                }
            };
            if event.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                *seen = Some("too many changes to follow".into());
                break;
            }
            let Some(dir) = self.dirs.get(&event.wd()) else {
                continue;
            };
            let rel = match event.file_name() {
                Some(name) => join(dir, name.to_bytes()),
                None => dir.clone(),
            };
            if event.file_name().is_some() && mask.ignores(&rel) {
                continue;
            }
            let shown = if rel.is_empty() {
                ".".into()
            } else {
                String::from_utf8_lossy(&rel).into_owned()
            };
            *seen = Some(shown);
            break;
        }
        seen.clone()
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
        let dirs = [Vec::new(), b"src".to_vec()];
        let w = Watch::start(root, dirs.iter()).unwrap();
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
