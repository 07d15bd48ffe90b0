//! What runner's own file tools (Read, Grep, Glob, Write, Edit) may read and write: the same
//! rules the kernel enforces on confined commands, asked as a pure query on a path, so that no
//! file tool reads or writes what a confined `cat` or `tee` could not.
//!
//! The rules come from the [`super::plan::Plan`] (or, with `sandbox.mode: off`, from the same
//! credential list and `sandbox.read_deny`): a path is unreadable when it lies in a credential
//! location or a `read_deny` path; writable when it is readable and lies under a writable root
//! (or is one of the harmless devices). The query needs no kernel, so it holds where commands
//! run unconfined too. Paths are resolved the way the kernel would ([`resolve`]) before the
//! check: a symbolic link planted in the workdir that points into `~/.ssh` is denied.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use super::paths::{HOME_CREDENTIALS, SYSTEM_CREDENTIALS};

/// Most symbolic links followed while resolving one path (the kernel's limit).
const MAX_LINKS: usize = 40;

/// Why a path is unreadable: the rule that denies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyRule {
    /// A credential location under the home directory (`~/.ssh`, `~/.aws/credentials`, …),
    /// by its spelling under `~`.
    HomeCredential(&'static str),
    /// A system credential file (`/etc/shadow`, the SSH host keys, …).
    SystemCredential(&'static str),
    /// The spec's `sandbox.read_deny`, by its resolved path.
    ReadDeny(PathBuf),
    /// A tree that is closed but for the toolchain locations, the writable roots and
    /// `sandbox.read` (the home directory, `$RUNNER_TEMP`).
    Closed(PathBuf),
}

impl fmt::Display for DenyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DenyRule::HomeCredential(rel) => {
                write!(
                    f,
                    "the credential location `~/{rel}` (built-in sandbox rule)"
                )
            }
            DenyRule::SystemCredential(p) => {
                write!(
                    f,
                    "the system credential file `{p}` (built-in sandbox rule)"
                )
            }
            DenyRule::ReadDeny(p) => write!(f, "sandbox.read_deny (`{}`)", p.display()),
            DenyRule::Closed(p) => write!(
                f,
                "`{}`, which is closed but for its toolchain locations, the writable roots and sandbox.read (built-in sandbox rule)",
                p.display()
            ),
        }
    }
}

/// One unreadable location.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Denied {
    /// Resolved: nothing at or under it may be read.
    path: PathBuf,
    rule: DenyRule,
}

/// A file access refused by the sandbox's rules, for the model and the record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileDenial {
    /// The path is unreadable (so also unwritable).
    #[error(
        "`{path}` is in {rule}: no file tool or command may read or write it",
        path = path.display()
    )]
    Unreadable {
        /// The path asked for, resolved.
        path: PathBuf,
        /// The rule that denies it.
        rule: DenyRule,
    },
    /// The path lies outside every writable root.
    #[error(
        "`{path}` is outside the sandbox's writable roots ({roots}): no file tool or command may write it (add it to sandbox.write to allow it)",
        path = path.display()
    )]
    NotWritable {
        /// The path asked for, resolved.
        path: PathBuf,
        /// The writable roots, listed.
        roots: String,
    },
}

/// The file rules of one task: what file tools may read and write.
#[derive(Debug, Clone, Default)]
pub struct FileRules {
    denied: Vec<Denied>,
    /// Trees closed but for `open` (resolved).
    closed: Vec<PathBuf>,
    /// What stays readable inside the closed trees (resolved).
    open: Vec<PathBuf>,
    /// The writable roots (resolved); `None`: writes are not limited to roots
    /// (`sandbox.mode: off`), only kept out of the unreadable locations.
    writable: Option<Vec<PathBuf>>,
    /// Devices every command may write.
    devices: Vec<PathBuf>,
}

impl FileRules {
    /// The rules for the credential locations of `home`, the system credential files and
    /// `read_deny` (absolute paths), with writes limited to `writable` when it is `Some`.
    /// Locations that do not exist yet are kept: a file made there later stays unreadable.
    pub fn new(
        home: Option<&Path>,
        read_deny: &[PathBuf],
        writable: Option<&[PathBuf]>,
        devices: &[PathBuf],
    ) -> FileRules {
        let mut denied: Vec<Denied> = Vec::new();
        let mut add = |raw: PathBuf, rule: DenyRule| {
            let path = resolve(&raw);
            if !denied.iter().any(|d| d.path == path) {
                denied.push(Denied { path, rule });
            }
        };
        for p in read_deny {
            add(p.clone(), DenyRule::ReadDeny(p.clone()));
        }
        if let Some(h) = home {
            for rel in HOME_CREDENTIALS {
                add(h.join(rel), DenyRule::HomeCredential(rel));
            }
        }
        for p in SYSTEM_CREDENTIALS {
            add(PathBuf::from(p), DenyRule::SystemCredential(p));
        }
        FileRules {
            denied,
            closed: Vec::new(),
            open: Vec::new(),
            writable: writable.map(|w| w.iter().map(|p| resolve(p)).collect()),
            devices: devices.to_vec(),
        }
    }

    /// The same rules with `closed` trees unreadable but for the `open` paths inside them (see
    /// [`super::home::HomeRules`]).
    pub fn with_closed(mut self, closed: &[PathBuf], open: &[PathBuf]) -> FileRules {
        self.closed = closed.iter().map(|p| resolve(p)).collect();
        self.open = open.iter().map(|p| resolve(p)).collect();
        self
    }

    /// Whether a file tool may read `path` (absolute); resolves it first.
    pub fn may_read(&self, path: &Path) -> Result<(), FileDenial> {
        self.may_read_resolved(&resolve(path))
    }

    /// Whether a file tool may write `path` (absolute; it need not exist yet); resolves it
    /// first.
    pub fn may_write(&self, path: &Path) -> Result<(), FileDenial> {
        self.may_write_resolved(&resolve(path))
    }

    /// [`FileRules::may_read`] of a path already resolved (see [`resolve`]).
    pub fn may_read_resolved(&self, path: &Path) -> Result<(), FileDenial> {
        if let Some(d) = self.denied.iter().find(|d| path.starts_with(&d.path)) {
            return Err(FileDenial::Unreadable {
                path: path.to_path_buf(),
                rule: d.rule.clone(),
            });
        }
        if let Some(c) = self.closed.iter().find(|c| path.starts_with(c))
            && !self.open.iter().any(|o| path.starts_with(o))
        {
            return Err(FileDenial::Unreadable {
                path: path.to_path_buf(),
                rule: DenyRule::Closed(c.clone()),
            });
        }
        Ok(())
    }

    /// [`FileRules::may_write`] of a path already resolved (see [`resolve`]).
    pub fn may_write_resolved(&self, path: &Path) -> Result<(), FileDenial> {
        self.may_read_resolved(path)?;
        let Some(roots) = &self.writable else {
            return Ok(());
        };
        if roots.iter().any(|r| path.starts_with(r)) || self.devices.iter().any(|d| d == path) {
            return Ok(());
        }
        Err(FileDenial::NotWritable {
            path: path.to_path_buf(),
            roots: if roots.is_empty() {
                "none".to_string()
            } else {
                roots
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
    }

    /// The rules that matter under `dir` (resolved), for a walk: `Err` when `dir` itself is
    /// unreadable; otherwise the rules of only the unreadable locations inside it (usually
    /// none, so a walk checks each entry against nothing).
    pub fn under(&self, dir: &Path) -> Result<FileRules, FileDenial> {
        self.may_read_resolved(dir)?;
        // `dir` is readable, so it lies in no closed tree or in an open path: only closed
        // trees below it matter, with every open path.
        let closed: Vec<PathBuf> = self
            .closed
            .iter()
            .filter(|c| c.starts_with(dir) && !self.open.iter().any(|o| c.starts_with(o)))
            .cloned()
            .collect();
        Ok(FileRules {
            denied: self
                .denied
                .iter()
                .filter(|d| d.path.starts_with(dir))
                .cloned()
                .collect(),
            open: if closed.is_empty() {
                Vec::new()
            } else {
                self.open.clone()
            },
            closed,
            writable: None,
            devices: Vec::new(),
        })
    }

    /// Whether nothing is denied (a walk then needs no check at all but for symbolic links).
    pub fn denies_nothing(&self) -> bool {
        self.denied.is_empty() && self.closed.is_empty()
    }
}

/// `path` (absolute) as the kernel resolves it: every symbolic link followed (also a dangling
/// one: a write through it lands on its target), `.` and `..` applied after the link before
/// them is followed. Parts that do not exist are kept as written, so a file not yet created
/// resolves too. A relative `path` is taken from `/`.
pub fn resolve(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    // Components still to walk, last first.
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    push_components(path, &mut out, &mut rest);
    let mut links = 0;
    while let Some(part) = rest.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        let link = match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() && links < MAX_LINKS => {
                std::fs::read_link(&next).ok()
            }
            _ => None,
        };
        match link {
            Some(target) => {
                links += 1;
                push_components(&target, &mut out, &mut rest);
            }
            None => out = next,
        }
    }
    out
}

/// Queue `path`'s components (last first) onto `rest`; an absolute path restarts `out` at `/`.
fn push_components(path: &Path, out: &mut PathBuf, rest: &mut Vec<std::ffi::OsString>) {
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {
                *out = PathBuf::from("/");
                parts.clear();
            }
            Component::CurDir => {}
            Component::ParentDir => parts.push(std::ffi::OsString::from("..")),
            Component::Normal(n) => parts.push(n.to_os_string()),
        }
    }
    rest.extend(parts.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        (d, root)
    }

    #[test]
    fn resolve_follows_links_and_keeps_missing_parts() {
        let (_d, root) = setup();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("w/sub")).unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("w/keys")).unwrap();
        std::os::unix::fs::symlink("../../home", root.join("w/sub/up")).unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh/new"), root.join("w/dangling")).unwrap();
        assert_eq!(
            resolve(&root.join("w/keys/id_rsa")),
            root.join("home/.ssh/id_rsa")
        );
        assert_eq!(resolve(&root.join("w/sub/up/.ssh")), root.join("home/.ssh"));
        assert_eq!(
            resolve(&root.join("w/dangling")),
            root.join("home/.ssh/new")
        );
        // `..` after a link applies to the link's target, as the kernel does.
        assert_eq!(resolve(&root.join("w/keys/../x")), root.join("home/x"));
        assert_eq!(resolve(&root.join("w/./a/../b")), root.join("w/b"));
        assert_eq!(
            resolve(&root.join("w/nope/deeper")),
            root.join("w/nope/deeper")
        );
    }

    #[test]
    fn a_link_loop_ends() {
        let (_d, root) = setup();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let _ = resolve(&root.join("a/x"));
    }

    #[test]
    fn reads_are_denied_in_credential_locations_and_read_deny_only() {
        let (_d, root) = setup();
        let home = root.join("home");
        let w = root.join("w");
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::create_dir_all(&w).unwrap();
        std::os::unix::fs::symlink(home.join(".aws/credentials"), w.join("creds")).unwrap();
        let rules = FileRules::new(
            Some(&home),
            &[w.join("secret.txt")],
            Some(std::slice::from_ref(&w)),
            &[],
        );
        let err = rules.may_read(&w.join("secret.txt")).unwrap_err();
        assert!(err.to_string().contains("sandbox.read_deny"), "{err}");
        let err = rules.may_read(&w.join("creds")).unwrap_err();
        assert!(err.to_string().contains("`~/.aws`"), "{err}");
        // `~/.ssh` does not exist yet: a key made there later stays unreadable.
        assert!(rules.may_read(&home.join(".ssh/id_rsa")).is_err());
        assert!(rules.may_read(Path::new("/etc/shadow")).is_err());
        assert!(rules.may_read(&w.join("secret.txt.bak")).is_ok());
        assert!(rules.may_read(&home.join(".bashrc")).is_ok());
        assert!(rules.may_read(&w.join("src/main.rs")).is_ok());
    }

    #[test]
    fn writes_stay_under_the_writable_roots_and_off_the_denied_paths() {
        let (_d, root) = setup();
        let w = root.join("w");
        std::fs::create_dir_all(&w).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), w.join("out")).unwrap();
        let dev = vec![PathBuf::from("/dev/null")];
        let rules = FileRules::new(
            None,
            &[w.join(".env")],
            Some(std::slice::from_ref(&w)),
            &dev,
        );
        assert!(rules.may_write(&w.join("new/file.rs")).is_ok());
        assert!(rules.may_write(Path::new("/dev/null")).is_ok());
        let err = rules.may_write(&root.join("elsewhere.txt")).unwrap_err();
        assert!(matches!(err, FileDenial::NotWritable { .. }));
        assert!(err.to_string().contains("sandbox.write"), "{err}");
        // A link in the workdir does not carry a write outside.
        assert!(rules.may_write(&w.join("out/x")).is_err());
        assert!(matches!(
            rules.may_write(&w.join(".env")),
            Err(FileDenial::Unreadable { .. })
        ));
        // Unlimited roots (`sandbox.mode: off`) still keep writes off the denied paths.
        let off = FileRules::new(None, &[w.join(".env")], None, &[]);
        assert!(off.may_write(&root.join("elsewhere.txt")).is_ok());
        assert!(off.may_write(&w.join(".env")).is_err());
    }

    #[test]
    fn under_keeps_only_what_lies_inside() {
        let (_d, root) = setup();
        let w = root.join("w");
        let rules = FileRules::new(None, &[w.join("a/secret"), root.join("x")], None, &[]);
        let inside = rules.under(&w).unwrap();
        assert!(!inside.denies_nothing());
        assert!(inside.may_read_resolved(&w.join("a/secret/k")).is_err());
        assert!(inside.may_read_resolved(&root.join("x")).is_ok());
        assert!(
            rules
                .under(&w.join("b"))
                .unwrap()
                .may_read_resolved(&w.join("b/c"))
                .is_ok()
        );
        assert!(rules.under(&root.join("x/y")).is_err());
    }
}
