//! Overlay mounts: a task's worktree as a copy-on-write view of a template checkout.
//!
//! The template (lower layer) is a clean checkout of the base tree, made once per batch and
//! never written; each task gets an upper directory of its own, where the kernel puts every
//! file it creates or changes (a file is copied up on its first write) and a whiteout for
//! every file it deletes. So a task sees exactly the base, its writes reach nobody else, and
//! setting it up or tearing it down costs a few system calls whatever the repository's size.
//!
//! Mounting needs `CAP_SYS_ADMIN` (root, or a container that grants it); [`probe`] tries a
//! small mount first so that a batch knows before it starts whether it can use overlays.
//! Mounts are made with `redirect_dir=on` (renaming a directory works as on any file system;
//! the renamed directory is marked with a redirect, see [`is_redirect`]), `metacopy=off` (a
//! changed file is copied up whole) and `volatile` where the kernel has it (no sync of the
//! upper directory at unmount: it is thrown away or kept only for resume).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, UnmountFlags};

use super::error::ProbeError;

/// The mount options a [`probe`] found to work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    /// `volatile` is accepted (Linux 5.10 and later).
    volatile: bool,
    /// `redirect_dir=on` is accepted: directory renames work (else they fail with EXDEV and
    /// tools like `mv` copy instead).
    redirect: bool,
}

/// The option sets tried, best first.
pub(crate) const CANDIDATES: [Options; 4] = [
    Options {
        volatile: true,
        redirect: true,
    },
    Options {
        volatile: false,
        redirect: true,
    },
    Options {
        volatile: true,
        redirect: false,
    },
    Options {
        volatile: false,
        redirect: false,
    },
];

/// The overlay layers of one worktree.
#[derive(Debug, Clone)]
pub(crate) struct Layers<'a> {
    /// The lower layers, highest first (read only).
    pub lower: &'a [PathBuf],
    /// Where the task's changes go.
    pub upper: &'a Path,
    /// The kernel's scratch directory (same file system as `upper`).
    pub work: &'a Path,
}

/// A path as overlayfs takes it in its option string: the characters that separate options
/// and layers (`,` `:` `\`) are not allowed, nor is anything that is not UTF-8.
fn option_path(p: &Path) -> io::Result<String> {
    match p.to_str() {
        Some(s) if !s.contains([',', ':', '\\', '\n']) => Ok(s.to_string()),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} cannot be an overlay layer (its path has `,`, `:` or `\\`, or is not UTF-8)",
                p.display()
            ),
        )),
    }
}

fn data(layers: &Layers<'_>, opts: Options) -> io::Result<CString> {
    let mut s = format!(
        "lowerdir={},upperdir={},workdir={},redirect_dir={},index=off,metacopy=off",
        layers
            .lower
            .iter()
            .map(|l| option_path(l))
            .collect::<io::Result<Vec<_>>>()?
            .join(":"),
        option_path(layers.upper)?,
        option_path(layers.work)?,
        if opts.redirect { "on" } else { "off" },
    );
    if opts.volatile {
        s.push_str(",volatile");
    }
    CString::new(s).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Mount `layers` at `target` (an existing empty directory).
pub(crate) fn mount(layers: &Layers<'_>, target: &Path, opts: Options) -> io::Result<()> {
    let data = data(layers, opts)?;
    rustix::mount::mount(
        SOURCE,
        target,
        "overlay",
        MountFlags::NOSUID | MountFlags::NODEV,
        data.as_c_str(),
    )
    .map_err(io::Error::from)?;
    Ok(())
}

/// Unmount the overlay at `target`; if something still uses it (a process the task left
/// behind with its working directory there), detach it lazily instead.
pub(crate) fn unmount(target: &Path) -> io::Result<()> {
    match rustix::mount::unmount(target, UnmountFlags::empty()) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::BUSY) => {
            tracing::debug!(worktree = %target.display(), "worktree busy; detaching it");
            rustix::mount::unmount(target, UnmountFlags::DETACH).map_err(io::Error::from)
        }
        Err(e) => Err(e.into()),
    }
}

/// After a `volatile` mount the kernel leaves a marker in the work directory that makes a
/// second mount of the same layers fail (the upper directory might be incomplete after a
/// crash). runner never syncs a worktree, with or without overlays, so a resumed task takes
/// the upper directory as it is: the marker is removed before mounting it again.
pub(crate) fn clear_volatile_marker(work: &Path) {
    let _ = std::fs::remove_dir_all(work.join("work").join("incompat"));
}

/// Whether a directory of an upper layer is a renamed directory (its content comes from
/// another place in the lower layer), from the `redirect` extended attribute the kernel sets.
pub(crate) fn is_redirect(upper_dir: &Path) -> bool {
    let mut buf = [0u8; 1];
    for name in ["trusted.overlay.redirect", "user.overlay.redirect"] {
        match rustix::fs::lgetxattr(upper_dir, name, &mut buf[..]) {
            Ok(_) | Err(rustix::io::Errno::RANGE) => return true,
            Err(_) => {}
        }
    }
    false
}

/// Find the overlay options that work with upper directories under `dir`, by mounting a
/// one-file overlay there, writing through it and checking that the write landed in the upper
/// directory only. `Err`: why overlays cannot be used.
pub(crate) fn probe(dir: &Path) -> Result<Options, ProbeError> {
    let root = dir.join("probe");
    let _ = std::fs::remove_dir_all(&root);
    let result = probe_in(&root);
    if let Err(e) = std::fs::remove_dir_all(&root) {
        tracing::debug!("cannot remove {}: {e}", root.display());
    }
    result
}

fn probe_in(root: &Path) -> Result<Options, ProbeError> {
    let [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map(|d| root.join(d));
    for d in [&lower, &upper, &work, &merged] {
        std::fs::create_dir_all(d).map_err(|source| ProbeError::Create {
            path: d.clone(),
            source,
        })?;
    }
    std::fs::write(lower.join("file"), "lower\n").map_err(|source| ProbeError::Write {
        path: lower.clone(),
        source,
    })?;
    let lowers = [lower.clone()];
    let layers = Layers {
        lower: &lowers,
        upper: &upper,
        work: &work,
    };
    let mut last = None;
    for opts in CANDIDATES {
        match mount(&layers, &merged, opts) {
            Ok(()) => {
                let written = std::fs::write(merged.join("file"), "upper\n");
                let _ = unmount(&merged);
                let lower_kept = std::fs::read_to_string(lower.join("file")).ok();
                let upper_got = std::fs::read_to_string(upper.join("file")).ok();
                return match (written, lower_kept.as_deref(), upper_got.as_deref()) {
                    (Ok(()), Some("lower\n"), Some("upper\n")) => Ok(opts),
                    (Err(e), _, _) => Err(ProbeError::WriteThrough(e)),
                    _ => Err(ProbeError::Mixed),
                };
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {
                last = Some(e);
            }
            Err(e) => {
                return Err(ProbeError::Denied(e));
            }
        }
    }
    Err(last.map_or(ProbeError::NoOptions, ProbeError::Mount))
}

/// The name runner's overlay mounts carry as their source, so they can be told apart from
/// every other overlay (containers) in /proc/self/mountinfo.
const SOURCE: &str = "runner-worktree";

/// One overlay mount, from /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountEntry {
    /// Where it is mounted.
    pub target: PathBuf,
    /// Its source (runner's own: [`SOURCE`]).
    source: Vec<u8>,
}

/// Every overlay mount, deepest mount point first (so they can be unmounted in that order).
fn overlay_mounts() -> Vec<MountEntry> {
    let Ok(info) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut out: Vec<MountEntry> = info
        .split(|b| *b == b'\n')
        .filter_map(parse_mountinfo_line)
        .filter(|l| l.fstype == b"overlay")
        .map(|l| MountEntry {
            target: l.target,
            source: l.source,
        })
        .collect();
    out.sort_by_key(|m| std::cmp::Reverse(m.target.as_os_str().len()));
    out
}

/// The overlay mounts whose mount point is `dir` or under it.
pub(crate) fn mounts_under(dir: &Path) -> Vec<MountEntry> {
    overlay_mounts()
        .into_iter()
        .filter(|m| m.target.starts_with(dir))
        .collect()
}

/// runner's worktree overlays, wherever they are.
pub(crate) fn runner_mounts() -> Vec<MountEntry> {
    overlay_mounts()
        .into_iter()
        .filter(|m| m.source == SOURCE.as_bytes())
        .collect()
}

/// Whether `path` is an overlay mount point now.
pub(crate) fn is_mounted(path: &Path) -> bool {
    mounts_under(path).iter().any(|m| m.target == path)
}

/// The fields of one mountinfo line runner looks at.
#[derive(Debug)]
struct MountLine {
    target: PathBuf,
    fstype: Vec<u8>,
    source: Vec<u8>,
}

/// One mountinfo line: the mount point is the fifth field, with spaces, tabs, newlines and
/// backslashes written as octal escapes; the type and the source follow the ` - ` separator.
fn parse_mountinfo_line(line: &[u8]) -> Option<MountLine> {
    let fields: Vec<&[u8]> = line.split(|b| *b == b' ').collect();
    let target = unescape(fields.get(4)?);
    let sep = fields.iter().skip(5).position(|f| *f == b"-")? + 5;
    Some(MountLine {
        target: PathBuf::from(std::ffi::OsStr::from_bytes(&target)),
        fstype: fields.get(sep + 1)?.to_vec(),
        source: unescape(fields.get(sep + 2)?),
    })
}

fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && i + 3 < field.len()
            && field[i + 1..i + 4]
                .iter()
                .all(|c| (b'0'..=b'7').contains(c))
        {
            let v = field[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_parsed_with_escapes() {
        let line = b"36 35 98:0 / /tmp/a\\040b/s1/tree rw,relatime shared:1 - overlay runner-worktree rw,lowerdir=/x";
        let l = parse_mountinfo_line(line).unwrap();
        assert_eq!(l.target, PathBuf::from("/tmp/a b/s1/tree"));
        assert_eq!(l.fstype, b"overlay");
        assert_eq!(l.source, SOURCE.as_bytes());
        let line = b"25 1 0:22 / /dev/shm rw - tmpfs tmpfs rw";
        assert_eq!(parse_mountinfo_line(line).unwrap().fstype, b"tmpfs");
        assert!(parse_mountinfo_line(b"").is_none());
    }

    #[test]
    fn layer_paths_with_separators_are_refused() {
        assert!(option_path(Path::new("/tmp/ok/dir")).is_ok());
        for bad in ["/tmp/a,b", "/tmp/a:b", "/tmp/a\\b"] {
            assert!(option_path(Path::new(bad)).is_err(), "{bad}");
        }
    }
}
