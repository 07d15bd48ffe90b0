//! Files written whole or not at all: the content goes to a temporary file beside the target,
//! is flushed to disk, and is renamed over the target. A reader never sees half a file, and a
//! write that fails (a full disk) leaves no file behind — not an empty one, and not the
//! temporary one.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically, creating its parent directories.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = temporary(path);
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A temporary name beside `path`, hidden, unique to this process and call (tasks of one
/// batch may write files of the same name at once).
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_nothing_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/x.patch");
        write(&p, b"one").unwrap();
        write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
        // A target that cannot be replaced (a directory): an error, the directory untouched
        // and no temporary file left.
        let d = dir.path().join("d");
        std::fs::create_dir_all(d.join("inner")).unwrap();
        assert!(write(&d, b"x").is_err());
        assert!(d.join("inner").is_dir());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }

    /// A write that fails before it starts creates nothing at the target.
    #[test]
    fn a_failed_write_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.patch");
        // Writing into a path whose parent is a file fails before anything exists.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, b"").unwrap();
        assert!(write(&blocked.join("t.patch"), b"x").is_err());
        assert!(!p.exists());
    }
}
