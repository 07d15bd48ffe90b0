//! An index file written from entries, in git's index format version 4.
//!
//! Every overlay worktree of a batch starts from a copy of one index: the base tree's entries
//! with the lower layer's stat data, so that git finds the worktree clean without reading a
//! file. libgit2 writes an index entry by entry through its in-memory index (a path check, a
//! map insertion and a sort per entry: tens of milliseconds for 20,000 entries, before the
//! first worktree can be made); the format is simple enough to write in one pass.
//!
//! The format (git's `gitformat-index`): a header (`DIRC`, the version, the entry count), the
//! entries sorted by path bytes and stage, then a SHA-1 over everything before it. Version 4
//! stores each path as the number of bytes to drop from the end of the previous path (git's
//! offset varint) and the bytes to append, NUL-terminated, with no padding; an entry with
//! extended flags (skip-worktree, intent-to-add) carries them in two more bytes. Versions 2
//! and 3 store each path whole, NUL-padded to a multiple of eight bytes per entry.
//!
//! [`paths`] reads the paths back from any of the three versions, without the checksum and
//! the stat data: what a task's start needs from its worktree's index (which files are
//! `.gitattributes`), at a fraction of a full read.

use std::io::{self, Write};
use std::path::Path;

/// The flags bits kept from an entry: assume-valid and the stage.
const KEPT_FLAGS: u16 = 0x8000 | 0x3000;
/// The flag that says extended flags follow.
const EXTENDED: u16 = 0x4000;
/// The extended flags that are written (skip-worktree and intent-to-add); the others are
/// libgit2's in-memory state.
const EXTENDED_FLAGS: u16 = 0x4000 | 0x2000;
/// The longest path length the flags can hold.
const NAME_MASK: u16 = 0x0fff;

/// Write `entries` as an index file at `path` (replacing it), written whole to a temporary
/// file beside it first and renamed, so that a reader never sees part of it.
pub(crate) fn write(entries: &[git2::IndexEntry], path: &Path) -> io::Result<()> {
    let bytes = encode(entries);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The paths of the entries of the index file `path` (versions 2 to 4, SHA-1 object names),
/// in the file's order; `Err` when it cannot be read, is not such an index, or does not hold
/// every path itself (a split or sparse index).
pub fn paths(path: &Path) -> io::Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path)?;
    decode_paths(&bytes).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a git index (versions 2 to 4)", path.display()),
        )
    })
}

/// The bytes of an entry before its flags: ten 32-bit stat fields and a SHA-1.
const STAT_AND_ID: usize = 40 + 20;

fn decode_paths(bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = word(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = word(8)? as usize;
    let mut out = Vec::with_capacity(count.min(bytes.len() / 62));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags_at = start + STAT_AND_ID;
        let flags = u16::from_be_bytes(bytes.get(flags_at..flags_at + 2)?.try_into().ok()?);
        at = flags_at + 2;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            at += 2;
        }
        if version == 4 {
            let (strip, used) = read_varint(bytes.get(at..)?)?;
            at += used;
            let keep = previous.len().checked_sub(usize::try_from(strip).ok()?)?;
            let len = bytes.get(at..)?.iter().position(|&b| b == 0)?;
            previous.truncate(keep);
            previous.extend_from_slice(&bytes[at..at + len]);
            at += len + 1;
            out.push(previous.clone());
        } else {
            let len = bytes.get(at..)?.iter().position(|&b| b == 0)?;
            out.push(bytes[at..at + len].to_vec());
            // NUL-padded to a multiple of eight bytes from the entry's start.
            at = start + ((at + len - start + 8) & !7);
        }
    }
    // A split index keeps most entries in another file, a sparse one whole directories in one
    // entry: neither lists every path here.
    let end = bytes.len().checked_sub(20)?;
    while at + 8 <= end {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" || signature == b"sdir" {
            return None;
        }
        at += 8 + word(at + 4)? as usize;
    }
    Some(out)
}

/// git's offset varint at the start of `bytes`: its value and how many bytes it took.
fn read_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut used = 0;
    let mut c = *bytes.first()?;
    let mut value = u64::from(c & 127);
    while c & 128 != 0 {
        used += 1;
        c = *bytes.get(used)?;
        value = value.checked_add(1)?.checked_mul(128)? | u64::from(c & 127);
    }
    Some((value, used + 1))
}

/// The index file's bytes for `entries`.
fn encode(entries: &[git2::IndexEntry]) -> Vec<u8> {
    let mut sorted: Vec<&git2::IndexEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path).then(stage(a).cmp(&stage(b))));
    let mut out = Vec::with_capacity(12 + entries.len() * 72);
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&4u32.to_be_bytes());
    out.extend_from_slice(&(sorted.len() as u32).to_be_bytes());
    let mut previous: &[u8] = &[];
    for e in sorted {
        for word in [
            e.ctime.seconds() as u32,
            e.ctime.nanoseconds(),
            e.mtime.seconds() as u32,
            e.mtime.nanoseconds(),
            e.dev,
            e.ino,
            e.mode,
            e.uid,
            e.gid,
            e.file_size,
        ] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out.extend_from_slice(e.id.as_bytes());
        let extended = e.flags_extended & EXTENDED_FLAGS;
        let mut flags = (e.flags & KEPT_FLAGS) | (e.path.len().min(NAME_MASK as usize) as u16);
        if extended != 0 {
            flags |= EXTENDED;
        }
        out.extend_from_slice(&flags.to_be_bytes());
        if extended != 0 {
            out.extend_from_slice(&extended.to_be_bytes());
        }
        let common = previous
            .iter()
            .zip(&e.path)
            .take_while(|(a, b)| a == b)
            .count();
        push_varint(&mut out, (previous.len() - common) as u64);
        out.extend_from_slice(&e.path[common..]);
        out.push(0);
        previous = &e.path;
    }
    let sum = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &out);
    out.extend_from_slice(sum.as_ref());
    out
}

/// An entry's stage (0 unless it is a side of a conflict).
fn stage(e: &git2::IndexEntry) -> u16 {
    (e.flags & 0x3000) >> 12
}

/// git's offset varint: seven bits a byte, most significant first, every byte but the last
/// with its high bit set, and one subtracted from each higher group (so that every value has
/// exactly one encoding).
fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    let mut bytes = [0u8; 10];
    let mut pos = bytes.len() - 1;
    bytes[pos] = (value & 127) as u8;
    value >>= 7;
    while value != 0 {
        value -= 1;
        pos -= 1;
        bytes[pos] = 128 | (value & 127) as u8;
        value >>= 7;
    }
    out.extend_from_slice(&bytes[pos..]);
}

#[cfg(test)]
mod tests {
    use super::super::test_git::git;
    use super::*;

    /// What git itself reads from an index: every entry with its stage data, object and flags
    /// (`ls-files --debug`), and which are skip-worktree (`ls-files -v`).
    fn as_git_reads(root: &Path, index: &Path) -> (String, String) {
        let run = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(root)
                .env("GIT_INDEX_FILE", index)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        (
            run(&["ls-files", "--stage", "--debug"]),
            run(&["ls-files", "-v"]),
        )
    }

    /// An index written here reads, for git and for libgit2, as the one git wrote: the same
    /// entries, stat data, objects and flags (a skip-worktree entry among them), with paths
    /// that share long prefixes and ones that do not.
    #[test]
    fn git_and_libgit2_read_the_written_index_as_git_s_own() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap().join("repo");
        let long = format!("deep/{}/file.txt", "very-long-directory-name/".repeat(8));
        for p in [
            "a.txt",
            "b/one.rs",
            "b/one.rs.orig",
            "b/two/three.rs",
            "b-c.txt",
            "z",
            long.as_str(),
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, p.display().to_string()).unwrap();
        }
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        git(&root, &["update-index", "--skip-worktree", "b/one.rs"]);
        let theirs = root.join(".git/index");
        let entries: Vec<git2::IndexEntry> = git2::Index::open(&theirs).unwrap().iter().collect();
        let ours = d.path().join("index");
        write(&entries, &ours).unwrap();
        let bytes = std::fs::read(&ours).unwrap();
        assert_eq!(&bytes[..8], b"DIRC\0\0\0\x04");
        assert_eq!(as_git_reads(&root, &ours), as_git_reads(&root, &theirs));
        assert!(as_git_reads(&root, &ours).1.contains("S b/one.rs"));
        let back: Vec<git2::IndexEntry> = git2::Index::open(&ours).unwrap().iter().collect();
        assert_eq!(back.len(), entries.len());
        for (a, b) in back.iter().zip(&entries) {
            assert_eq!(
                (
                    &a.path,
                    a.id,
                    a.mode,
                    a.ino,
                    a.file_size,
                    a.mtime,
                    a.flags_extended & 0x6000
                ),
                (
                    &b.path,
                    b.id,
                    b.mode,
                    b.ino,
                    b.file_size,
                    b.mtime,
                    b.flags_extended & 0x6000
                )
            );
        }
    }

    #[test]
    fn varints_are_git_s_offset_encoding() {
        let enc = |v: u64| {
            let mut out = Vec::new();
            push_varint(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(128), [128, 0]);
        assert_eq!(enc(255), [128, 127]);
        assert_eq!(enc(16511), [255, 127]);
        assert_eq!(enc(16512), [128, 128, 0]);
        for v in [0, 1, 127, 128, 255, 16511, 16512, 1 << 40] {
            assert_eq!(read_varint(&enc(v)), Some((v, enc(v).len())), "{v}");
        }
    }

    /// The paths read back from an index git wrote in each version (a long path, an
    /// extended entry among them) are git's, in git's order; a cut file is refused.
    #[test]
    fn the_paths_of_every_index_version_are_read_back() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let long = format!("deep/{0}/{0}/.gitattributes", "x".repeat(200));
        let names = [
            "a.txt",
            "b/.gitattributes",
            "b/one.rs",
            "b-c.txt",
            long.as_str(),
        ];
        for p in names {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        let mut want: Vec<Vec<u8>> = names.iter().map(|n| n.as_bytes().to_vec()).collect();
        want.sort();
        let index = root.join(".git/index");
        for version in ["2", "3", "4"] {
            git(&root, &["update-index", "--index-version", version]);
            if version == "3" {
                git(&root, &["update-index", "--skip-worktree", "b/one.rs"]);
            }
            assert_eq!(paths(&index).unwrap(), want, "version {version}");
        }
        let bytes = std::fs::read(&index).unwrap();
        assert!(decode_paths(&bytes[..bytes.len() / 2]).is_none());
        // A split index lists only what changed since its shared part: not read here.
        git(&root, &["update-index", "--split-index"]);
        assert!(paths(&index).is_err());
        assert!(decode_paths(b"DIRC\0\0\0\x05\0\0\0\0").is_none());
    }

    /// The index the worktrees copy is version 4, and git reads it as the checkout's own:
    /// every file listed, none changed.
    #[test]
    fn the_worktrees_index_is_version_4_and_git_finds_the_checkout_clean() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap().join("repo");
        for p in [
            "src/a/one.rs",
            "src/a/two.rs",
            "src/b/three.rs",
            "README.md",
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, p.display().to_string()).unwrap();
        }
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let repo = git2::Repository::open(&root).unwrap();
        let entries: Vec<git2::IndexEntry> = repo.index().unwrap().iter().collect();
        let path = d.path().join("index");
        write(&entries, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"DIRC\0\0\0\x04");
        let with_index = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_INDEX_FILE", &path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(
            with_index(&["ls-files"]).lines().collect::<Vec<_>>(),
            [
                "README.md",
                "src/a/one.rs",
                "src/a/two.rs",
                "src/b/three.rs"
            ]
        );
        assert_eq!(with_index(&["status", "--porcelain"]), "");
    }
}
