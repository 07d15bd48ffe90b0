//! Undoing a change to a watched entry from the bytes kept before the command: what is there
//! now is removed (a symlink itself, never its target; a directory with what is in it), and
//! what was there is written back — a file through a new file renamed into place, with its
//! permission bits; a symlink with its target; a directory with every entry recorded below it.
//! Nothing is written through a directory that has become a symlink since it was recorded.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::error::IntegrityError;
use super::snapshot::{Content, Snapshot};
use super::watch::Depth;

/// Put `path` back to what `snap` recorded for it (and below it).
pub(super) fn restore(snap: &Snapshot, path: &Path) -> Result<(), IntegrityError> {
    let io = |e| IntegrityError::io(path, e);
    let Some(entry) = snap.entries.get(path) else {
        // Not recorded: an entry that was added inside a watched directory.
        return remove(path);
    };
    safe_parents(path)?;
    let now = std::fs::symlink_metadata(path).ok();
    if entry.depth == Depth::NoSymlink {
        // Only a symlink put there goes; a real directory is never touched.
        return match (&entry.content, &now) {
            (Content::Absent, Some(m)) if m.file_type().is_symlink() => remove(path),
            _ => Ok(()),
        };
    }
    // A directory on the way that was removed with the change (a symlinked `.github`).
    if !matches!(entry.content, Content::Absent)
        && let Some(parent) = path.parent()
        && std::fs::symlink_metadata(parent).is_err()
    {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    match &entry.content {
        Content::Dir { mode, .. } => {
            if now.as_ref().is_some_and(|m| m.file_type().is_dir()) {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                    .map_err(io)?;
                return Ok(());
            }
            remove(path)?;
            std::fs::create_dir(path).map_err(io)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).map_err(io)?;
            // What was recorded in it (each restoring what is below it in turn).
            for child in entry.children.iter() {
                restore(snap, child)?;
            }
            Ok(())
        }
        Content::File { bytes, mode } => write_file(path, bytes, *mode),
        Content::Symlink { target } => {
            if now.is_some() {
                remove(path)?;
            }
            std::os::unix::fs::symlink(target, path).map_err(io)
        }
        Content::Absent => remove(path),
        Content::Special { .. } | Content::Oversize { .. } => Err(IntegrityError::Restore(
            format!("{} cannot be recreated", path.display()),
        )),
    }
}

/// Remove whatever is at `path`, without following a symlink.
fn remove(path: &Path) -> Result<(), IntegrityError> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let r = if m.file_type().is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(IntegrityError::io(path, e)),
        _ => Ok(()),
    }
}

/// Write `bytes` with `mode` to a new file next to `path` and rename it over `path` (which
/// replaces a symlink or file there rather than writing through it).
fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), IntegrityError> {
    let io = |e| IntegrityError::io(path, e);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir()) {
        remove(path)?;
    }
    let dir = path
        .parent()
        .ok_or_else(|| IntegrityError::Restore(format!("{} has no parent", path.display())))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.runner-restore-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .map_err(io)?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.set_permissions(std::fs::Permissions::from_mode(mode)))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// Refuse to write below a symlink: every directory above `path` must be a real one (the
/// watched paths were recorded with their symlinks resolved, so a symlink there is new).
fn safe_parents(path: &Path) -> Result<(), IntegrityError> {
    for dir in path.ancestors().skip(1) {
        if dir.as_os_str().is_empty() {
            break;
        }
        if let Ok(m) = std::fs::symlink_metadata(dir)
            && m.file_type().is_symlink()
        {
            return Err(IntegrityError::Restore(format!(
                "{} is now a symlink; nothing is written through it",
                dir.display()
            )));
        }
    }
    Ok(())
}
