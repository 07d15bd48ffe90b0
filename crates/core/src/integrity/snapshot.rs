//! The fingerprint of the watched paths and how it is compared: every entry's stat data (device,
//! inode, mode, size, mtime and ctime in nanoseconds) as the fast path, and its content — a
//! file's bytes, a symlink's target, a directory's mode and names — kept in memory for the
//! restore and compared only when the stat data changed.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::IntegrityError;
use super::watch::{Depth, Watched};

/// The largest watched file kept (hooks and configuration files are small).
pub(super) const MAX_FILE_BYTES: u64 = 4 << 20;
/// The most bytes kept for all watched files together.
pub(super) const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// The most entries watched.
pub(super) const MAX_ENTRIES: usize = 20_000;
/// How deep a watched directory is walked.
const MAX_DEPTH: usize = 32;

/// The stat data of an entry: equal data means the entry is taken as unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StatKey {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl StatKey {
    fn of(m: &Metadata) -> StatKey {
        StatKey {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// What an entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Content {
    /// Nothing there.
    Absent,
    /// A regular file: its bytes and permission bits.
    File { bytes: Arc<[u8]>, mode: u32 },
    /// A regular file over [`MAX_FILE_BYTES`] (never equal to anything kept).
    Oversize { size: u64 },
    /// A symlink and its target (never followed).
    Symlink { target: PathBuf },
    /// A directory: its permission bits, and its entries' names when it is walked.
    Dir {
        mode: u32,
        names: BTreeSet<OsString>,
    },
    /// A FIFO, socket or device node.
    Special { mode: u32 },
}

impl Content {
    /// A short name of its kind, for reports.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Content::Absent => "nothing",
            Content::File { .. } | Content::Oversize { .. } => "a file",
            Content::Symlink { .. } => "a symlink",
            Content::Dir { .. } => "a directory",
            Content::Special { .. } => "a special file",
        }
    }

    fn same_kind(&self, other: &Content) -> bool {
        self.kind() == other.kind()
    }
}

/// One watched entry: its stat data when fingerprinted (`None`: absent) and content.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) stat: Option<StatKey>,
    pub(super) content: Content,
    pub(super) depth: Depth,
    /// A walked directory's entries' paths (from `content`'s names), for the comparison.
    pub(super) children: Arc<[PathBuf]>,
}

/// The paths of `names` in `dir`.
pub(super) fn child_paths(dir: &Path, names: &BTreeSet<OsString>) -> Arc<[PathBuf]> {
    names.iter().map(|n| dir.join(n)).collect()
}

/// How an entry differs from its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Diff {
    /// It is there and was not.
    Added,
    /// It was there and is not.
    Removed,
    /// A file's bytes changed.
    Modified,
    /// Only its permission bits changed.
    Mode { from: u32, to: u32 },
    /// Something of another kind is there now.
    Replaced {
        from: &'static str,
        to: &'static str,
    },
}

/// The fingerprint of every watched entry, by path.
#[derive(Debug, Clone, Default)]
pub(super) struct Snapshot {
    pub(super) roots: Vec<Watched>,
    pub(super) entries: HashMap<PathBuf, Entry>,
    bytes: u64,
}

/// `path`'s stat data, `None` when nothing is there.
fn lstat(path: &Path) -> Result<Option<Metadata>, IntegrityError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound) => Ok(None),
        // A path under a file (`ENOTDIR`) has nothing there either.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
        Err(e) => Err(IntegrityError::io(path, e)),
    }
}

/// What `path` holds now (`meta` its stat data); a directory's names are read when `walk`.
pub(super) fn read(
    path: &Path,
    meta: Option<&Metadata>,
    walk: bool,
) -> Result<Content, IntegrityError> {
    let Some(m) = meta else {
        return Ok(Content::Absent);
    };
    let t = m.file_type();
    let mode = m.mode() & 0o7777;
    if t.is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| IntegrityError::io(path, e))?;
        return Ok(Content::Symlink { target });
    }
    if t.is_dir() {
        let mut names = BTreeSet::new();
        if walk {
            for e in std::fs::read_dir(path).map_err(|e| IntegrityError::io(path, e))? {
                let e = e.map_err(|e| IntegrityError::io(path, e))?;
                names.insert(e.file_name());
            }
        }
        return Ok(Content::Dir { mode, names });
    }
    if !t.is_file() {
        return Ok(Content::Special { mode });
    }
    if m.size() > MAX_FILE_BYTES {
        return Ok(Content::Oversize { size: m.size() });
    }
    let bytes = read_nofollow(path)?;
    Ok(Content::File {
        bytes: bytes.into(),
        mode,
    })
}

/// A regular file's bytes, opened without following a symlink put there since its stat.
fn read_nofollow(path: &Path) -> Result<Vec<u8>, IntegrityError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| IntegrityError::io(path, e))?;
    let mut bytes = Vec::new();
    (&mut f)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| IntegrityError::io(path, e))?;
    Ok(bytes)
}

impl Snapshot {
    /// Fingerprint `roots`, keeping their content. Fails on an entry that cannot be read, and
    /// on sizes no hooks directory has (over the caps): the task then does not run.
    pub(super) fn take(roots: Vec<Watched>) -> Result<Snapshot, IntegrityError> {
        let mut s = Snapshot {
            roots: Vec::new(),
            entries: HashMap::new(),
            bytes: 0,
        };
        for w in &roots {
            s.capture(&w.path, w.depth, 0)?;
        }
        s.roots = roots;
        Ok(s)
    }

    /// Fingerprint `path` (and, for a tree, what is below it) into the snapshot.
    pub(super) fn capture(
        &mut self,
        path: &Path,
        depth: Depth,
        level: usize,
    ) -> Result<(), IntegrityError> {
        if self.entries.len() >= MAX_ENTRIES || level > MAX_DEPTH {
            return Err(IntegrityError::TooLarge(format!(
                "more than {MAX_ENTRIES} entries or {MAX_DEPTH} levels under {}",
                path.display()
            )));
        }
        let meta = lstat(path)?;
        let content = match depth {
            Depth::NoSymlink => match meta.as_ref() {
                Some(m) if m.file_type().is_symlink() => read(path, meta.as_ref(), false)?,
                _ => Content::Absent,
            },
            _ => read(path, meta.as_ref(), depth == Depth::Tree)?,
        };
        if let Content::Oversize { size } = content {
            return Err(IntegrityError::TooLarge(format!(
                "{} is {size} bytes (the cap is {MAX_FILE_BYTES})",
                path.display()
            )));
        }
        if let Content::File { bytes, .. } = &content {
            self.bytes += bytes.len() as u64;
            if self.bytes > MAX_TOTAL_BYTES {
                return Err(IntegrityError::TooLarge(format!(
                    "the watched files hold more than {MAX_TOTAL_BYTES} bytes"
                )));
            }
        }
        let names = match &content {
            Content::Dir { names, .. } if depth == Depth::Tree => names.clone(),
            _ => BTreeSet::new(),
        };
        let stat = match depth {
            Depth::NoSymlink => None,
            _ => meta.as_ref().map(StatKey::of),
        };
        self.entries.insert(
            path.to_path_buf(),
            Entry {
                stat,
                content,
                depth,
                children: child_paths(path, &names),
            },
        );
        for n in names {
            self.capture(&path.join(n), Depth::Tree, level + 1)?;
        }
        Ok(())
    }

    /// Forget `path` and everything recorded below it.
    pub(super) fn forget(&mut self, path: &Path) {
        let below: Vec<PathBuf> = self
            .entries
            .keys()
            .filter(|p| p.starts_with(path))
            .cloned()
            .collect();
        for p in below {
            if let Some(Entry {
                content: Content::File { bytes, .. },
                ..
            }) = self.entries.remove(&p)
            {
                self.bytes = self.bytes.saturating_sub(bytes.len() as u64);
            }
        }
    }

    /// Compare every watched entry with its fingerprint: the stat data first, the content only
    /// where that changed. An entry whose content is the same gets its new stat data (a
    /// `touch`, a rewrite with the same bytes); the others are returned, the snapshot keeping
    /// what they held.
    pub(super) fn compare(&mut self) -> Result<Vec<(PathBuf, Diff)>, IntegrityError> {
        let mut out = Vec::new();
        for i in 0..self.roots.len() {
            let w = self.roots[i].clone();
            self.visit(&w.path, &mut out)?;
        }
        Ok(out)
    }

    fn visit(&mut self, path: &Path, out: &mut Vec<(PathBuf, Diff)>) -> Result<(), IntegrityError> {
        let Some(entry) = self.entries.get(path) else {
            return Ok(());
        };
        let depth = entry.depth;
        let meta = lstat(path)?;
        if depth == Depth::NoSymlink {
            let now_link = meta.as_ref().is_some_and(|m| m.file_type().is_symlink());
            let was_link = matches!(entry.content, Content::Symlink { .. });
            if now_link != was_link {
                out.push((
                    path.to_path_buf(),
                    Diff::Replaced {
                        from: if was_link { "a symlink" } else { "a directory" },
                        to: if now_link { "a symlink" } else { "a directory" },
                    },
                ));
            }
            return Ok(());
        }
        let key = meta.as_ref().map(StatKey::of);
        let walk = depth == Depth::Tree;
        if entry.stat == key {
            let children = entry.children.clone();
            for c in children.iter() {
                self.visit(c, out)?;
            }
            return Ok(());
        }
        let now = read(path, meta.as_ref(), walk)?;
        let was = &entry.content;
        let diff = match (was, &now) {
            (Content::Absent, _) => Some(Diff::Added),
            (_, Content::Absent) => Some(Diff::Removed),
            (a, b) if !a.same_kind(b) => Some(Diff::Replaced {
                from: a.kind(),
                to: b.kind(),
            }),
            (_, Content::Oversize { .. }) => Some(Diff::Modified),
            (Content::File { bytes: a, .. }, Content::File { bytes: b, .. }) if a != b => {
                Some(Diff::Modified)
            }
            (Content::Symlink { target: a }, Content::Symlink { target: b }) if a != b => {
                Some(Diff::Modified)
            }
            (
                Content::File { mode: a, .. }
                | Content::Dir { mode: a, .. }
                | Content::Special { mode: a },
                Content::File { mode: b, .. }
                | Content::Dir { mode: b, .. }
                | Content::Special { mode: b },
            ) if a != b => Some(Diff::Mode { from: *a, to: *b }),
            _ => None,
        };
        // A directory of the same kind: its entries are compared one by one, added and
        // removed names being changes of their own.
        if let (Content::Dir { names: old, .. }, Content::Dir { names: new, .. }) = (was, &now) {
            for n in new.difference(old) {
                out.push((path.join(n), Diff::Added));
            }
            let children = entry.children.clone();
            for c in children.iter() {
                self.visit(c, out)?;
            }
            if diff.is_none()
                && let Some(e) = self.entries.get_mut(path)
            {
                e.stat = key;
            }
        } else if diff.is_none()
            && let Some(e) = self.entries.get_mut(path)
        {
            e.stat = key;
        }
        if let Some(d) = diff {
            out.push((path.to_path_buf(), d));
        }
        Ok(())
    }
}
