//! The integrity of the files that make later git commands and CI steps run code: a git
//! directory's `config`, `hooks/` and `info/`, the work tree's `.git` entry, `.gitmodules`,
//! `.gitattributes` files and `.github/workflows/` and `.github/actions/` (which, see
//! [`watch`]). The sandbox cannot take `.git` out of a writable work tree, and a planted hook
//! or `core.fsmonitor` would run, unconfined and with that step's secrets, at the next git
//! command of a later CI step.
//!
//! Every command runner starts for a task (a Bash call, a hook, a verify check, an MCP server)
//! runs between two checks ([`Integrity::command`]): the watched files are fingerprinted
//! ([`snapshot`]: stat data, content read only where that changed) and compared with the
//! fingerprint taken when the task started. A change no permission rule allows (a write of that
//! path the policy would allow an Edit or Write tool, which for these protected paths takes an
//! allow rule naming them) is undone at once from the bytes kept in memory ([`restore`]),
//! reported (the session records it as `runner_integrity` and ends the task `denied`), and
//! the fingerprint stays what it was.

mod error;
mod restore;
mod snapshot;
pub mod watch;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};

pub use error::IntegrityError;
use snapshot::{Diff, Snapshot};
use watch::{Depth, Watched};

/// One change to a watched file that no permission rule allowed (the `runner_integrity`
/// record, and the result's `integrity` list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IntegrityChange {
    /// The path that changed.
    pub path: PathBuf,
    /// `added`, `removed`, `modified`, `mode_changed`, `replaced`, or `unreadable` (the
    /// fingerprint could not be taken).
    pub change: String,
    /// What changed, in words (e.g. `mode 100644 -> 100755`).
    pub detail: String,
    /// The command after which it was found (`before …` when it was there before that
    /// command started: made by something still running, or between commands).
    pub after: String,
    /// Whether the change was undone.
    pub restored: bool,
    /// Why it could not be undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl IntegrityChange {
    /// The line that describes it.
    pub fn message(&self) -> String {
        let undone = match (&self.error, self.restored) {
            (_, true) => "undone".to_string(),
            (Some(e), false) => format!("NOT undone: {e}"),
            (None, false) => "NOT undone".to_string(),
        };
        format!(
            "{} {} ({}) after {}; {undone}",
            self.path.display(),
            self.change.replace('_', " "),
            self.detail,
            self.after
        )
    }
}

/// How many times a check restores before it gives up on what still differs.
const RESTORE_ROUNDS: usize = 3;

/// Decides whether a change at a path is allowed (the permission policy, asked about a Write
/// of that path).
pub type AllowFn = Box<dyn Fn(&Path) -> bool + Send + Sync>;
/// Told of every change found, as it is found.
pub type ReportFn = Box<dyn Fn(&IntegrityChange) + Send + Sync>;

/// The task's integrity guard: the fingerprint taken at its start and every change found
/// since. Shared by everything that starts commands.
pub struct Integrity {
    snapshot: Mutex<Snapshot>,
    allow: AllowFn,
    report: OnceLock<ReportFn>,
    changes: Mutex<Vec<IntegrityChange>>,
}

impl std::fmt::Debug for Integrity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Integrity")
    }
}

impl Integrity {
    /// Fingerprint the watched files of a task working in `workdir` ([`watch::paths`]).
    pub fn new(workdir: &Path, allow: AllowFn) -> Result<Integrity, IntegrityError> {
        Integrity::with_paths(watch::paths(workdir), allow)
    }

    /// Fingerprint `paths`.
    pub fn with_paths(paths: Vec<Watched>, allow: AllowFn) -> Result<Integrity, IntegrityError> {
        Ok(Integrity {
            snapshot: Mutex::new(Snapshot::take(paths)?),
            allow,
            report: OnceLock::new(),
            changes: Mutex::new(Vec::new()),
        })
    }

    /// Where changes are reported as they are found (set once; told at once of those found
    /// before).
    pub fn on_change(&self, report: ReportFn) {
        if self.report.set(report).is_ok()
            && let Some(r) = self.report.get()
        {
            for c in self.changes() {
                r(&c);
            }
        }
    }

    /// Compare the watched files with the fingerprint; undo, record and return each change
    /// not allowed (`after`: what ran before). An allowed change becomes part of the
    /// fingerprint. A fingerprint that cannot be taken is a change too (nothing vouches for
    /// the files).
    pub fn check(&self, after: &str) -> Vec<IntegrityChange> {
        let mut snap = self.snapshot.lock().unwrap_or_else(|p| p.into_inner());
        let mut found: Vec<IntegrityChange> = Vec::new();
        // A restore can uncover more to restore (a directory put back in place of a symlink
        // holds nothing yet): a few rounds, then what still differs is reported not undone.
        for round in 0..=RESTORE_ROUNDS {
            let mut diffs = match snap.compare() {
                Ok(d) => d,
                Err(e) => {
                    found.push(IntegrityChange {
                        path: PathBuf::new(),
                        change: "unreadable".into(),
                        detail: e.to_string(),
                        after: after.to_string(),
                        restored: false,
                        error: Some(e.to_string()),
                    });
                    break;
                }
            };
            diffs.sort_by(|a, b| a.0.cmp(&b.0));
            for (path, diff) in diffs {
                if round == 0 && (self.allow)(&path) && accept(&mut snap, &path).is_ok() {
                    tracing::info!(path = %path.display(), "integrity: change allowed by the permission policy");
                    continue;
                }
                let last = round == RESTORE_ROUNDS;
                let undone = if last {
                    Err(IntegrityError::Restore(
                        "still differs after the restore".into(),
                    ))
                } else {
                    restore::restore(&snap, &path)
                };
                let (change, detail) = describe(&snap, &path, &diff);
                let error = undone.err().map(|e| e.to_string());
                match found
                    .iter_mut()
                    .find(|c| round > 0 && path.starts_with(&c.path))
                {
                    // Part of a change already recorded (the rest of what it undid).
                    Some(c) => {
                        if error.is_some() {
                            c.restored = false;
                            c.error = error;
                        }
                    }
                    None => found.push(IntegrityChange {
                        path,
                        change,
                        detail,
                        after: after.to_string(),
                        restored: error.is_none(),
                        error,
                    }),
                }
            }
        }
        drop(snap);
        for c in &found {
            tracing::error!("integrity: {}", c.message());
            if let Some(r) = self.report.get() {
                r(c);
            }
        }
        if !found.is_empty() {
            self.changes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(found.iter().cloned());
        }
        found
    }

    /// Every change found so far.
    pub fn changes(&self) -> Vec<IntegrityChange> {
        self.changes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Check now (`before …`: what is found was made since the last check) and again when the
    /// returned value is ended or dropped (after `what`).
    pub fn command(self: &Arc<Self>, what: String) -> CommandCheck {
        self.check(&format!("before {what} (made since the previous check)"));
        CommandCheck {
            guard: Some(self.clone()),
            what,
        }
    }
}

/// The checks around one command of [`Integrity::command`], for `guard` when there is one.
pub fn around(guard: Option<&Arc<Integrity>>, what: impl FnOnce() -> String) -> CommandCheck {
    match guard {
        Some(g) => g.command(what()),
        None => CommandCheck {
            guard: None,
            what: String::new(),
        },
    }
}

/// A command between its two checks: the second runs when this is ended or dropped.
#[derive(Debug)]
pub struct CommandCheck {
    guard: Option<Arc<Integrity>>,
    what: String,
}

impl CommandCheck {
    /// The check after the command; returns what it found.
    pub fn end(mut self) -> Vec<IntegrityChange> {
        match self.guard.take() {
            Some(g) => g.check(&self.what),
            None => Vec::new(),
        }
    }
}

impl Drop for CommandCheck {
    fn drop(&mut self) {
        if let Some(g) = self.guard.take() {
            g.check(&self.what);
        }
    }
}

/// Make the change at `path` part of the fingerprint.
fn accept(snap: &mut Snapshot, path: &Path) -> Result<(), IntegrityError> {
    let root = snap.roots.iter().find(|w| w.path == path).map(|w| w.depth);
    let mut fresh = Snapshot::default();
    fresh.capture(path, root.unwrap_or(Depth::Tree), 0)?;
    snap.forget(path);
    let exists = std::fs::symlink_metadata(path).is_ok();
    for (p, e) in fresh.entries {
        if root.is_some() || exists {
            snap.entries.insert(p, e);
        }
    }
    if root.is_none()
        && let (Some(parent), Some(name)) = (path.parent(), path.file_name())
        && let Some(snapshot::Entry {
            content: snapshot::Content::Dir { names, .. },
            children,
            ..
        }) = snap.entries.get_mut(parent)
    {
        if exists {
            names.insert(name.to_os_string());
        } else {
            names.remove(name);
        }
        *children = snapshot::child_paths(parent, names);
    }
    Ok(())
}

/// The `change` and `detail` of a diff at `path`.
fn describe(snap: &Snapshot, path: &Path, diff: &Diff) -> (String, String) {
    let now = std::fs::symlink_metadata(path).ok();
    let now = snapshot::read(path, now.as_ref(), false)
        .map(|c| describe_content(&c))
        .unwrap_or_else(|e| e.to_string());
    let was = snap
        .entries
        .get(path)
        .map_or_else(|| "nothing".to_string(), |e| describe_content(&e.content));
    match diff {
        Diff::Added => ("added".into(), now),
        Diff::Removed => ("removed".into(), format!("was {was}")),
        Diff::Modified => ("modified".into(), format!("{was} -> {now}")),
        Diff::Mode { from, to } => ("mode_changed".into(), format!("mode {from:o} -> {to:o}")),
        Diff::Replaced { from, to } => {
            ("replaced".into(), format!("{from} replaced by {to}: {now}"))
        }
    }
}

fn describe_content(c: &snapshot::Content) -> String {
    use snapshot::Content::*;
    match c {
        Absent => "nothing".into(),
        File { bytes, mode } => format!("a file of {} bytes, mode {mode:o}", bytes.len()),
        Oversize { size } => format!("a file of {size} bytes"),
        Symlink { target } => format!("a symlink to {}", target.display()),
        Dir { mode, .. } => format!("a directory, mode {mode:o}"),
        Special { mode } => format!("a special file, mode {mode:o}"),
    }
}
