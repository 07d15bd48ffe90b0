//! Project instructions (`instructions:`): the AGENTS.md / CLAUDE.md files of the workdir and
//! the directories above it up to the repository root, nearest first, capped in size, sent as
//! a system reminder at the start of the first user message and recorded with their hashes.
//!
//! They are text from the repository: on a pull-request run the pull request chooses them,
//! which is why they are off unless the spec turns them on.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::events::InstructionFile;

/// Most bytes of instructions one prompt carries (all files together); a file past it is cut,
/// later ones are left out.
pub(crate) const MAX_INSTRUCTIONS_BYTES: usize = 40_000;

/// The instructions found for a task: the reminder the first prompt starts with, and what
/// was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instructions {
    /// The `<system-reminder>` block.
    pub reminder: String,
    /// The files, in the order the reminder holds them.
    pub files: Vec<InstructionFile>,
}

/// The directories looked in: `workdir`, then each parent up to `root` (when `workdir` is
/// inside it; only `workdir` otherwise).
fn directories(workdir: &Path, root: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![workdir.to_path_buf()];
    let Some(root) = root.filter(|r| workdir.starts_with(r)) else {
        return dirs;
    };
    let mut d = workdir;
    while d != root {
        match d.parent() {
            Some(p) => {
                dirs.push(p.to_path_buf());
                d = p;
            }
            None => break,
        }
    }
    dirs
}

/// Find and read the files `names` in `workdir` and up to `root`, nearest first (in each
/// directory in the order of `names`); `None` when there is none. A file read twice (a
/// symlink to another) is sent once; a file `readable` refuses (the sandbox's file rules: a
/// `CLAUDE.md` that is a link to `~/.ssh/id_rsa`) is left out.
pub(crate) fn load(
    names: &[String],
    workdir: &Path,
    root: Option<&Path>,
    readable: &dyn Fn(&Path) -> bool,
) -> Option<Instructions> {
    let mut files = Vec::new();
    let mut texts = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut left = MAX_INSTRUCTIONS_BYTES;
    for dir in directories(workdir, root) {
        for name in names {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&real) {
                continue;
            }
            if !readable(&real) {
                tracing::warn!(file = %path.display(), "instruction file left out: the sandbox's file rules deny reading it");
                continue;
            }
            seen.push(real);
            if left == 0 {
                tracing::warn!(file = %path.display(), "instruction file left out: the {MAX_INSTRUCTIONS_BYTES}-byte cap is reached");
                continue;
            }
            let read = match read(&path, left) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(file = %path.display(), "instruction file not read: {e}");
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&read.head);
            let kept = cut(&text, left);
            let truncated = read.size > kept.len() as u64;
            if truncated {
                tracing::warn!(file = %path.display(), bytes = read.size, "instruction file cut: the {MAX_INSTRUCTIONS_BYTES}-byte cap is reached");
            }
            left = if truncated { 0 } else { left - kept.len() };
            texts.push((path.clone(), kept.to_string(), truncated));
            files.push(InstructionFile {
                path,
                sha256: read.sha256,
                bytes: read.size,
                truncated,
            });
        }
    }
    if files.is_empty() {
        return None;
    }
    Some(Instructions {
        reminder: reminder(&texts),
        files,
    })
}

/// A file as read: its first bytes, its size and its hash.
struct Read {
    head: Vec<u8>,
    size: u64,
    sha256: String,
}

/// Read a file: keep its first `keep` bytes (and a few more, so a cut character is whole),
/// hash all of it.
fn read(path: &Path, keep: usize) -> std::io::Result<Read> {
    let mut f = std::fs::File::open(path)?;
    let mut hash = Sha256::new();
    let mut head = Vec::new();
    let mut size = 0u64;
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = f.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hash.update(&chunk[..n]);
        size += n as u64;
        let room = (keep + 4).saturating_sub(head.len());
        head.extend_from_slice(&chunk[..n.min(room)]);
    }
    Ok(Read {
        head,
        size,
        sha256: hash.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    })
}

/// The longest start of `text` of at most `max` bytes ending on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The system reminder holding the files' text, as Claude Code words it for CLAUDE.md.
fn reminder(texts: &[(PathBuf, String, bool)]) -> String {
    let mut s = String::from(
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n\
         Codebase instructions are shown below. Be sure to adhere to these instructions. \
         IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them \
         exactly as written.\n",
    );
    for (path, text, truncated) in texts {
        s.push_str(&format!(
            "\nContents of {} (project instructions, checked into the codebase):\n\n{}\n",
            path.display(),
            text.trim_end()
        ));
        if *truncated {
            s.push_str("[… cut here: the instructions exceed runner's size limit]\n");
        }
    }
    s.push_str("</system-reminder>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["AGENTS.md".to_string(), "CLAUDE.md".to_string()]
    }

    #[test]
    fn nearest_first_up_to_the_root() {
        let d = tempfile::tempdir().unwrap();
        let above = d.path();
        let root = above.join("repo");
        let sub = root.join("crates/core");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(above.join("AGENTS.md"), "above the root").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root agents").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "root claude").unwrap();
        std::fs::write(root.join("crates/CLAUDE.md"), "crates claude").unwrap();
        std::fs::write(sub.join("AGENTS.md"), "core agents").unwrap();
        let got = load(&names(), &sub, Some(&root), &|_| true).unwrap();
        let paths: Vec<PathBuf> = got.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            [
                sub.join("AGENTS.md"),
                root.join("crates/CLAUDE.md"),
                root.join("AGENTS.md"),
                root.join("CLAUDE.md"),
            ]
        );
        assert!(got.reminder.starts_with("<system-reminder>"));
        let order = ["core agents", "crates claude", "root agents", "root claude"]
            .map(|t| got.reminder.find(t).unwrap());
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(!got.reminder.contains("above the root"));
        // sha256("core agents")
        assert_eq!(
            got.files[0].sha256,
            format!("{:x}", Sha256::digest(b"core agents"))
        );
        assert_eq!(got.files[0].bytes, 11);
        // Outside a repository: the workdir alone.
        let alone = load(&names(), &sub, None, &|_| true).unwrap();
        assert_eq!(alone.files.len(), 1);
        assert!(
            load(&names(), above.join("repo/crates").as_path(), None, &|_| {
                true
            })
            .is_some()
        );
        assert!(load(&["NONE.md".to_string()], &sub, Some(&root), &|_| true).is_none());
    }

    #[test]
    fn the_cap_cuts_one_file_and_leaves_out_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("AGENTS.md"), "small").unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "é".repeat(MAX_INSTRUCTIONS_BYTES)).unwrap();
        std::fs::write(root.join("AGENTS.md"), "left out").unwrap();
        let got = load(&names(), &sub, Some(root), &|_| true).unwrap();
        assert_eq!(got.files.len(), 2);
        assert!(!got.files[0].truncated);
        assert!(got.files[1].truncated);
        assert_eq!(got.files[1].bytes as usize, 2 * MAX_INSTRUCTIONS_BYTES);
        assert!(got.reminder.len() < MAX_INSTRUCTIONS_BYTES + 1_000);
        assert!(!got.reminder.contains("left out"));
        assert!(got.reminder.contains("cut here"));
    }

    #[test]
    fn a_file_the_sandbox_denies_is_left_out() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let key = root.join("id_rsa");
        std::fs::write(&key, "PRIVATE KEY").unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::os::unix::fs::symlink(&key, work.join("CLAUDE.md")).unwrap();
        std::fs::write(work.join("AGENTS.md"), "plain").unwrap();
        let rules = crate::sandbox::FileRules::new(None, std::slice::from_ref(&key), None, &[]);
        let readable = |p: &Path| rules.may_read(p).is_ok();
        let got = load(&names(), &work, None, &readable).unwrap();
        assert_eq!(got.files.len(), 1);
        assert!(!got.reminder.contains("PRIVATE KEY"));
        assert!(got.reminder.contains("plain"));
    }
}
