//! Opening a repository for runner's own git work (snapshots, patches, branch commits, worktree
//! checkouts and resets) from what runner recorded before any task ran, never from what a task
//! may have written since.
//!
//! A task's commands can change the repository's `.git/config` and a worktree's `.git` file. If
//! runner followed them, `core.worktree` would point its snapshot at another directory (a
//! private key read into the patch), and a rewritten `.git` file would point its reset of a
//! pooled worktree at another repository and working tree. So:
//! - a repository is [`record`]ed while its tasks are planned: its git directory, common
//!   directory and working tree, and the few settings runner's own work reads ([`KEPT`]);
//! - it is opened by that git directory as a bare repository, its working tree set to the
//!   recorded one, and its configuration replaced by an in-memory one holding only those
//!   recorded settings ([`open`]): `core.worktree`, `include.*`, `filter.*`, `diff.*`,
//!   `core.fsmonitor`, `core.hooksPath`, `core.sshCommand` and anything else written later
//!   are never read by runner's work. (libgit2 runs no filter, textconv, hook or fsmonitor
//!   command in any case, and runner runs no `git` command of its own.)
//! - a worktree is opened by the administrative directory runner made for it, and refused
//!   when that directory's common directory is not the recorded one ([`open_worktree`]).

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use git2::{Config, ConfigLevel, Repository};
use serde::{Deserialize, Serialize};

/// The settings runner's own work keeps from the repository's configuration as it was when the
/// repository was recorded; every other setting reads as unset.
pub(crate) const KEPT: &[&str] = &[
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.filemode",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.excludesfile",
    "core.attributesfile",
    "core.logallrefupdates",
    "user.name",
    "user.email",
];

/// A repository as runner recorded it before any of its tasks ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The working tree's root (canonical).
    pub root: PathBuf,
    /// The repository's own git directory (canonical; a linked worktree's administrative one).
    pub git_dir: PathBuf,
    /// The common git directory (canonical).
    pub common_dir: PathBuf,
    /// The [`KEPT`] settings that were set, with their values then.
    pub settings: Vec<(String, String)>,
}

/// The repositories recorded by this process.
static RECORDED: Mutex<Vec<Recorded>> = Mutex::new(Vec::new());

fn recorded_list() -> std::sync::MutexGuard<'static, Vec<Recorded>> {
    RECORDED.lock().unwrap_or_else(|p| p.into_inner())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Record the repository whose working tree is `root`, unless it already is: called while the
/// run's tasks are planned, before any of them runs.
pub(crate) fn record(root: &Path) -> Result<Recorded, git2::Error> {
    let root = canonical(root);
    if let Some(r) = recorded_list().iter().find(|r| r.root == root) {
        return Ok(r.clone());
    }
    let repo = Repository::open(&root)?;
    let config = repo.config()?.snapshot()?;
    let settings = KEPT
        .iter()
        .filter_map(|k| Some((k.to_string(), config.get_string(k).ok()?)))
        .collect();
    let rec = Recorded {
        root,
        git_dir: canonical(repo.path()),
        common_dir: canonical(repo.commondir()),
        settings,
    };
    adopt(rec.clone());
    Ok(rec)
}

/// Take `rec` as the record of its repository (a resumed run's, recorded when the run began).
pub(crate) fn adopt(rec: Recorded) {
    let mut list = recorded_list();
    list.retain(|r| r.root != rec.root);
    list.push(rec);
}

/// The record of the repository whose working tree is `root`, if there is one.
pub(crate) fn recorded(root: &Path) -> Option<Recorded> {
    let root = canonical(root);
    recorded_list().iter().find(|r| r.root == root).cloned()
}

/// The configuration file of the repository whose working tree is `root` (its common
/// directory's `config`), as recorded: the one a checkout's credential is in.
pub fn config_file(root: &Path) -> Option<PathBuf> {
    recorded(root).map(|r| r.common_dir.join("config"))
}

/// The recorded settings of the repository whose common directory is `common_dir` (none when
/// it was never recorded: every setting at its default).
fn settings_of(common_dir: &Path) -> Vec<(String, String)> {
    let common_dir = canonical(common_dir);
    recorded_list()
        .iter()
        .find(|r| r.common_dir == common_dir)
        .map(|r| r.settings.clone())
        .unwrap_or_default()
}

/// The repository whose working tree is `root`, opened as recorded (recorded now if it was not).
pub fn open_root(root: &Path) -> Result<Repository, git2::Error> {
    let rec = record(root)?;
    open(&rec.git_dir, Some(&rec.root), &rec.settings)
}

/// The repository with the common directory `common_dir`, opened bare.
pub(crate) fn open_common(common_dir: &Path) -> Result<Repository, git2::Error> {
    open(common_dir, None, &settings_of(common_dir))
}

/// The worktree at `work` whose administrative directory is `admin`, of the repository with
/// the common directory `common_dir`. Refused when `admin` names another common directory.
pub(crate) fn open_worktree(
    admin: &Path,
    work: &Path,
    common_dir: &Path,
) -> Result<Repository, git2::Error> {
    let repo = open(admin, Some(work), &settings_of(common_dir))?;
    if canonical(repo.commondir()) != canonical(common_dir) {
        return Err(git2::Error::from_str(&format!(
            "the worktree's git directory {} no longer belongs to the repository {} (its `commondir` was changed); runner does not follow it",
            admin.display(),
            common_dir.display()
        )));
    }
    Ok(repo)
}

/// Open the git directory `git_dir` bare, with the configuration made of `settings` only, and
/// `work` as its working tree.
pub(crate) fn open(
    git_dir: &Path,
    work: Option<&Path>,
    settings: &[(String, String)],
) -> Result<Repository, git2::Error> {
    let repo = Repository::open_bare(git_dir)?;
    repo.set_config(&pinned_config(settings)?)?;
    if let Some(work) = work {
        repo.set_workdir(work, false)?;
    }
    Ok(repo)
}

/// An in-memory configuration holding `settings` and nothing else (read into a snapshot, so
/// nothing reads its source again). The source is an anonymous memory file, or where that
/// cannot be opened by path, a private temporary file; with no setting there is none.
fn pinned_config(settings: &[(String, String)]) -> Result<Config, git2::Error> {
    let text = config_text(settings);
    let mut config = Config::new()?;
    if text.is_empty() {
        return config.snapshot();
    }
    let source = match memory_file(&text) {
        Some(fd) => Source::Memory(fd),
        None => Source::Temporary(temporary_file(&text)?),
    };
    config.add_file(&source.path(), ConfigLevel::Local, true)?;
    config.snapshot()
}

/// The file the pinned configuration's text is read from (held open until it is read).
enum Source {
    Memory(std::os::fd::OwnedFd),
    Temporary(tempfile::NamedTempFile),
}

impl Source {
    fn path(&self) -> PathBuf {
        match self {
            Source::Memory(fd) => PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())),
            Source::Temporary(file) => file.path().to_path_buf(),
        }
    }
}

/// A private temporary file holding `text`.
fn temporary_file(text: &str) -> Result<tempfile::NamedTempFile, git2::Error> {
    let io = |e: std::io::Error| git2::Error::from_str(&format!("pin the configuration: {e}"));
    let mut file = tempfile::NamedTempFile::new().map_err(io)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(io)?;
    Ok(file)
}

/// An anonymous memory file holding `text`, readable through `/proc/self/fd` (`None` where
/// either is missing).
fn memory_file(text: &str) -> Option<std::os::fd::OwnedFd> {
    let fd =
        rustix::fs::memfd_create("runner-pinned-config", rustix::fs::MemfdFlags::CLOEXEC).ok()?;
    let mut file = std::fs::File::from(fd);
    file.write_all(text.as_bytes()).ok()?;
    let fd = std::os::fd::OwnedFd::from(file);
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .filter(|m| m.len() == text.len() as u64)?;
    Some(fd)
}

/// `settings` in git's configuration file syntax (only names from [`KEPT`]).
fn config_text(settings: &[(String, String)]) -> String {
    let mut text = String::new();
    for (key, value) in settings {
        if !KEPT.contains(&key.as_str()) {
            continue;
        }
        let Some((section, name)) = key.split_once('.') else {
            continue;
        };
        // Quoted runs, with each `"` escaped between them (libgit2 misreads `\"` just before
        // a closing quote).
        let mut quoted = String::from("\"");
        for c in value.chars() {
            match c {
                '"' => quoted.push_str("\"\\\"\""),
                '\\' => quoted.push_str("\\\\"),
                '\n' => quoted.push_str("\\n"),
                '\t' => quoted.push_str("\\t"),
                c => quoted.push(c),
            }
        }
        quoted.push('"');
        text.push_str(&format!("[{section}]\n\t{name} = {quoted}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::test_git::git;
    use super::*;

    fn repo(dir: &Path) -> PathBuf {
        let root = dir.join("repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        canonical(&root)
    }

    /// The pinned configuration is read from an anonymous memory file (no file is made on
    /// disk), holds exactly the settings given, and is empty without any.
    #[test]
    fn the_pinned_configuration_is_read_from_memory() {
        let text = "[user]\n\tname = \"Pinned\"\n";
        let fd = memory_file(text).expect("memfd and /proc/self/fd");
        assert_eq!(
            std::fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap(),
            text
        );
        let config = pinned_config(&[("user.name".into(), "Pinned \"R\"".into())]).unwrap();
        assert_eq!(config.get_string("user.name").unwrap(), "Pinned \"R\"");
        assert!(config.get_string("user.email").is_err());
        let empty = pinned_config(&[]).unwrap();
        assert!(empty.get_string("user.name").is_err());
    }

    /// Settings a task writes after the repository was recorded: none of them is read, the
    /// kept ones keep their recorded value.
    #[test]
    fn later_settings_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo(dir.path());
        git(&root, &["config", "user.name", "Recorded \"Name\" R"]);
        git(&root, &["config", "core.autocrlf", "false"]);
        let rec = record(&root).unwrap();
        assert_eq!(rec.git_dir, root.join(".git"));
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let included = dir.path().join("included");
        std::fs::write(&included, "[user]\n\temail = included@example.invalid\n").unwrap();
        for (key, value) in [
            ("core.worktree", elsewhere.to_str().unwrap()),
            ("core.bare", "true"),
            ("core.autocrlf", "true"),
            ("core.fsmonitor", "touch /tmp/marker"),
            ("core.hooksPath", "/tmp"),
            ("core.sshCommand", "touch /tmp/marker"),
            ("filter.x.clean", "touch /tmp/marker"),
            ("diff.x.textconv", "touch /tmp/marker"),
            ("include.path", included.to_str().unwrap()),
            ("user.name", "Task"),
        ] {
            git(&root, &["config", key, value]);
        }
        let repo = open_root(&root).unwrap();
        assert_eq!(canonical(repo.workdir().unwrap()), root);
        assert!(!repo.is_bare());
        let cfg = repo.config().unwrap();
        for key in [
            "core.worktree",
            "core.bare",
            "core.fsmonitor",
            "core.hooksPath",
            "core.sshCommand",
            "filter.x.clean",
            "diff.x.textconv",
            "include.path",
        ] {
            assert!(cfg.get_string(key).is_err(), "{key} is read");
        }
        assert_ne!(
            cfg.get_string("user.email").ok().as_deref(),
            Some("included@example.invalid")
        );
        assert_eq!(cfg.get_string("core.autocrlf").unwrap(), "false");
        assert_eq!(repo.signature().unwrap().name(), Ok("Recorded \"Name\" R"));
    }

    /// A linked worktree's administrative directory whose `commondir` was changed is refused.
    #[test]
    fn a_worktree_of_another_repository_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo(dir.path());
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        git(&other, &["init", "-q"]);
        let work = dir.path().join("wt");
        git(
            &root,
            &["worktree", "add", "-q", "--detach", work.to_str().unwrap()],
        );
        let admin = root.join(".git/worktrees/wt");
        let common = root.join(".git");
        open_worktree(&admin, &work, &common).unwrap();
        std::fs::write(
            admin.join("commondir"),
            format!("{}\n", other.join(".git").display()),
        )
        .unwrap();
        let Err(err) = open_worktree(&admin, &work, &common) else {
            panic!("a changed commondir is followed");
        };
        assert!(err.message().contains("does not follow"), "{err}");
    }

    #[test]
    fn config_text_quotes_values_and_keeps_only_kept_names() {
        let text = config_text(&[
            ("user.name".into(), "a \"b\" \\ c".into()),
            ("core.worktree".into(), "/x".into()),
        ]);
        assert_eq!(text, "[user]\n\tname = \"a \"\\\"\"b\"\\\"\" \\\\ c\"\n");
    }
}
