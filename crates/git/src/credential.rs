//! The credential a checkout leaves in its repository's configuration, hidden for the length
//! of a run and put back after it.
//!
//! `actions/checkout` (unless `persist-credentials: false`) writes the job's token into
//! `.git/config` as `http.https://github.com/.extraheader = AUTHORIZATION: basic BASE64`, and
//! other checkouts put it in a remote or `url.*.insteadOf` URL. Any command allowed to read the
//! workdir could hand it to the model in a form redaction cannot recognise (`tr`, `cut`, one
//! character a line). So for the run those entries are taken out of the configuration of each
//! repository a task works in (its common directory's `config`, which its worktrees share), and
//! put back at the end: byte for byte when nothing else changed the file meanwhile, else
//! appended to it as it is then.
//!
//! What was taken out is written first to a file of runner's own under the transcript
//! directory ([`STATE_DIR`], which no confined command may read): a run that was killed leaves
//! it, and the next run (or `runner resume`) in that transcript directory puts the entries back
//! before anything else ([`restore_left`]). The values stay secrets for the run's redaction
//! ([`secrets`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// runner's directory under the transcript directory holding what a run took out.
pub const STATE_DIR: &str = ".git-credentials-hidden";

/// The file in [`STATE_DIR`].
const STATE_FILE: &str = "hidden.json";

/// The lock file in [`STATE_DIR`]: held by the run hiding credentials, so that another run
/// started meanwhile in the same transcript directory does not put them back under it.
const LOCK_FILE: &str = "lock";

/// One configuration file's entries taken out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Hidden {
    /// The configuration file.
    config: PathBuf,
    /// Its content before.
    original: String,
    /// Its content as runner wrote it, without the entries.
    stripped: String,
    /// The entries taken out, each under its section header, in git's syntax: what is
    /// appended when the file changed meanwhile.
    removed: String,
    /// The secret values in the entries (for redaction).
    secrets: Vec<String>,
}

/// What a run took out, as written to the state file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    hidden: Vec<Hidden>,
}

/// The secrets of the entries hidden by this process (for every task's redaction) and the
/// state directories to keep confined commands out of.
static ACTIVE: Mutex<(Vec<String>, Vec<PathBuf>)> = Mutex::new((Vec::new(), Vec::new()));

fn active() -> std::sync::MutexGuard<'static, (Vec<String>, Vec<PathBuf>)> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The values of the credentials hidden now, as `(name, value)` pairs for a redactor.
pub fn secrets() -> Vec<(String, String)> {
    active()
        .0
        .iter()
        .map(|v| ("GIT_CHECKOUT_CREDENTIAL".to_string(), v.clone()))
        .collect()
}

/// The state directories of runs hiding credentials now: no confined command may read them.
pub fn private_dirs() -> Vec<PathBuf> {
    active().1.clone()
}

/// The credentials hidden for a run; put back by [`Guard::restore`], or when dropped.
#[derive(Debug)]
pub struct Guard {
    state_dir: PathBuf,
    hidden: Vec<Hidden>,
    /// The state directory's lock, held while anything is hidden.
    lock: Option<std::fs::File>,
}

/// Take the credential entries out of the configuration files `configs` for the run whose
/// transcript directory is `transcript_dir`. Files without any are left alone; a file that
/// cannot be changed is reported and left as it is.
pub fn hide(configs: &[PathBuf], transcript_dir: &Path) -> Guard {
    let state_dir = transcript_dir.join(STATE_DIR);
    let mut guard = Guard {
        state_dir: state_dir.clone(),
        hidden: Vec::new(),
        lock: None,
    };
    let mut seen = Vec::new();
    for config in configs {
        let config = std::fs::canonicalize(config).unwrap_or_else(|_| config.clone());
        if seen.contains(&config) {
            continue;
        }
        seen.push(config.clone());
        let Ok(original) = std::fs::read_to_string(&config) else {
            continue;
        };
        let Some((stripped, removed, secrets)) = strip(&original) else {
            continue;
        };
        let h = Hidden {
            config: config.clone(),
            original,
            stripped,
            removed,
            secrets,
        };
        // Recorded before the file changes: a run killed from here on is put right by the next.
        let mut all = guard.hidden.clone();
        all.push(h.clone());
        if guard.lock.is_none() {
            match lock(&state_dir) {
                Some(l) => guard.lock = Some(l),
                None => {
                    tracing::warn!(dir = %state_dir.display(), "another run holds the checkout credential's state directory; the credential stays in the configuration");
                    break;
                }
            }
        }
        if let Err(e) = write_state(&state_dir, &all) {
            tracing::warn!(config = %config.display(), "cannot record the checkout credential to hide it ({e}); it stays in the configuration");
            continue;
        }
        if let Err(e) = write_keeping_mode(&config, h.stripped.as_bytes()) {
            tracing::warn!(config = %config.display(), "cannot hide the checkout credential: {e}");
            let _ = write_state(&state_dir, &guard.hidden);
            continue;
        }
        tracing::warn!(config = %config.display(), "the git configuration holds a checkout credential (an http extraheader or a token in a URL) that any command in the workdir could read: taken out for the run, put back at its end. In GitHub Actions, check out with `persist-credentials: false` when no later step needs it");
        let mut a = active();
        a.0.extend(h.secrets.iter().cloned());
        if !a.1.contains(&state_dir) {
            a.1.push(state_dir.clone());
        }
        drop(a);
        guard.hidden.push(h);
    }
    if guard.hidden.is_empty() && guard.lock.take().is_some() {
        remove_state(&state_dir);
    }
    guard
}

/// The state directory's lock, exclusive, if no other live run holds it.
fn lock(state_dir: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(state_dir).ok()?;
    std::fs::set_permissions(state_dir, std::fs::Permissions::from_mode(0o700)).ok()?;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state_dir.join(LOCK_FILE))
        .ok()?;
    rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(f)
}

impl Guard {
    /// Put every hidden entry back, and remove the state file.
    pub fn restore(mut self) {
        self.restore_all();
    }

    fn restore_all(&mut self) {
        if self.hidden.is_empty() {
            return;
        }
        let hidden = std::mem::take(&mut self.hidden);
        if put_back(&hidden) {
            remove_state(&self.state_dir);
        }
        self.lock = None;
        let mut a = active();
        for h in &hidden {
            a.0.retain(|s| !h.secrets.contains(s));
        }
        a.1.retain(|d| d != &self.state_dir);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.restore_all();
    }
}

/// Put back what a run that was killed took out in `transcript_dir` (its state file), before
/// this run reads any configuration.
pub fn restore_left(transcript_dir: &Path) {
    let state_dir = transcript_dir.join(STATE_DIR);
    if !state_dir.join(STATE_FILE).exists() {
        return;
    }
    // A run that is still going holds the lock: what it hid is its own to put back.
    let Some(_lock) = lock(&state_dir) else {
        return;
    };
    let Ok(text) = std::fs::read_to_string(state_dir.join(STATE_FILE)) else {
        return;
    };
    match serde_json::from_str::<State>(&text) {
        Ok(state) => {
            tracing::warn!(dir = %state_dir.display(), "an earlier run ended before it put the checkout credential back; putting it back now");
            if put_back(&state.hidden) {
                remove_state(&state_dir);
            }
        }
        Err(e) => {
            tracing::error!(file = %state_dir.join(STATE_FILE).display(), "cannot read what an earlier run hid from the git configuration ({e}); put it back by hand")
        }
    }
}

/// Put each entry back; whether all went back.
fn put_back(hidden: &[Hidden]) -> bool {
    let mut all = true;
    for h in hidden {
        let now = std::fs::read_to_string(&h.config).unwrap_or_default();
        let text = if now == h.stripped {
            h.original.clone()
        } else if now.contains(h.removed.trim_end()) {
            // Already back (an earlier restore got this far).
            continue;
        } else {
            // Changed meanwhile: the entries go at its end.
            let mut t = now;
            if !t.is_empty() && !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str(&h.removed);
            t
        };
        if let Err(e) = write_keeping_mode(&h.config, text.as_bytes()) {
            tracing::error!(config = %h.config.display(), "cannot put the checkout credential back: {e}");
            all = false;
        }
    }
    all
}

/// Write `bytes` over `path` at once, keeping its permissions.
fn write_keeping_mode(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let perms = std::fs::metadata(path).map(|m| m.permissions());
    crate::atomic_file::write(path, bytes)?;
    if let Ok(p) = perms {
        std::fs::set_permissions(path, p)?;
    }
    Ok(())
}

fn write_state(state_dir: &Path, hidden: &[Hidden]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(state_dir)?;
    std::fs::set_permissions(state_dir, std::fs::Permissions::from_mode(0o700))?;
    let state = State {
        hidden: hidden.to_vec(),
    };
    let text = serde_json::to_vec_pretty(&state).map_err(std::io::Error::other)?;
    crate::atomic_file::write(&state_dir.join(STATE_FILE), &text)
}

fn remove_state(state_dir: &Path) {
    let _ = std::fs::remove_file(state_dir.join(STATE_FILE));
    let _ = std::fs::remove_file(state_dir.join(LOCK_FILE));
    let _ = std::fs::remove_dir(state_dir);
}

/// `text` without its credential entries: `(stripped, removed entries under their headers,
/// secret values)`, or `None` when it has none. Taken out: `extraheader` in any `[http]`
/// section, a `[url "…"]` section whose URL carries a password (its whole body), and any
/// `url`, `pushurl` or `insteadOf` value carrying one.
fn strip(text: &str) -> Option<(String, String, Vec<String>)> {
    let mut kept = String::with_capacity(text.len());
    let mut removed = String::new();
    let mut secrets = Vec::new();
    let mut section = String::new();
    let mut header = String::new();
    let mut header_written = false;
    // The section being dropped whole, and a value continued on the next line.
    let mut drop_section = false;
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if continued {
            continued = body.ends_with('\\');
            removed.push_str(line);
            continue;
        }
        let t = body.trim_start();
        if t.starts_with('[') {
            section = t.to_string();
            header = line.to_string();
            header_written = false;
            let url = subsection(t);
            drop_section = section_name(t) == "url" && url.as_deref().is_some_and(has_password);
            if drop_section {
                if let Some(p) = url.as_deref().and_then(password) {
                    secrets.push(p.to_string());
                }
                removed.push_str(&line_ending(line));
                header_written = true;
                continue;
            }
            kept.push_str(line);
            continue;
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim()),
            None => (t.trim().to_ascii_lowercase(), ""),
        };
        let name = section_name(&section);
        let value_unquoted = value.trim_matches('"');
        let is_header = name == "http" && key == "extraheader";
        let is_url =
            matches!(key.as_str(), "url" | "pushurl" | "insteadof") && has_password(value_unquoted);
        if drop_section || is_header || is_url {
            if !header_written {
                removed.push_str(&line_ending(&header));
                header_written = true;
            }
            removed.push_str(&line_ending(line));
            continued = body.ends_with('\\');
            if is_header {
                secrets.extend(header_secrets(value_unquoted));
            } else if let Some(p) = password(value_unquoted) {
                secrets.push(p.to_string());
            }
            continue;
        }
        kept.push_str(line);
    }
    if removed.is_empty() {
        return None;
    }
    secrets.retain(|s| !s.is_empty());
    Some((kept, removed, secrets))
}

/// `line` ending with a newline.
fn line_ending(line: &str) -> String {
    if line.ends_with('\n') || line.is_empty() {
        line.to_string()
    } else {
        format!("{line}\n")
    }
}

/// The section's name, lower case: `http` of `[http "https://github.com/"]`.
fn section_name(header: &str) -> String {
    header
        .trim_start_matches('[')
        .split(|c: char| c == ']' || c == '"' || c.is_whitespace() || c == '.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The quoted subsection of a header: `https://github.com/` of `[http "https://github.com/"]`.
fn subsection(header: &str) -> Option<String> {
    let start = header.find('"')?;
    let end = header.rfind('"')?;
    (end > start).then(|| header[start + 1..end].to_string())
}

/// The password of a URL's user information (`https://user:PASSWORD@host/`), if any.
fn password(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, pass) = userinfo.split_once(':')?;
    (!pass.is_empty()).then_some(pass)
}

fn has_password(url: &str) -> bool {
    password(url).is_some()
}

/// The secrets of an `extraheader` value: its last word (`basic BASE64`'s BASE64), and the
/// password (or token) it decodes to.
fn header_secrets(value: &str) -> Vec<String> {
    let Some(cred) = value.split_whitespace().last() else {
        return Vec::new();
    };
    let mut out = vec![cred.to_string()];
    if let Ok(decoded) = STANDARD.decode(cred)
        && let Ok(text) = String::from_utf8(decoded)
        && let Some((_, token)) = text.split_once(':')
    {
        out.push(token.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghs_0123456789abcdefghijklmnopqrstuvwxyzAB";

    fn checkout_config() -> String {
        let b64 = STANDARD.encode(format!("x-access-token:{TOKEN}"));
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/o/r\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {b64}\n[user]\n\tname = ci\n"
        )
    }

    #[test]
    fn strip_takes_out_every_form_of_the_credential() {
        let b64 = STANDARD.encode(format!("x-access-token:{TOKEN}"));
        let cases: Vec<(String, Vec<&str>)> = vec![
            (checkout_config(), vec![b64.as_str(), TOKEN]),
            (
                format!(
                    "[url \"https://x-access-token:{TOKEN}@github.com/\"]\n\tinsteadOf = https://github.com/\n[core]\n\tbare = false\n"
                ),
                vec![TOKEN],
            ),
            (
                format!(
                    "[remote \"origin\"]\n\turl = https://x-access-token:{TOKEN}@github.com/o/r\n\tfetch = x\n"
                ),
                vec![TOKEN],
            ),
            (
                format!("[http]\n\tExtraHeader = \"AUTHORIZATION: bearer {TOKEN}\"\n"),
                vec![TOKEN],
            ),
        ];
        for (text, want) in cases {
            let (kept, removed, secrets) = strip(&text).unwrap();
            assert!(!kept.contains(TOKEN) && !kept.contains(&b64), "{kept}");
            for w in want {
                assert!(secrets.iter().any(|s| s == w), "{w} not in {secrets:?}");
                assert!(removed.contains(w) || removed.contains(&b64), "{removed}");
            }
            // What is kept is still a valid configuration, with its other settings.
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("c"), &kept).unwrap();
            let cfg = git2::Config::open(&dir.path().join("c")).unwrap();
            assert!(cfg.entries(None).is_ok());
        }
        assert!(
            strip("[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://github.com/o/r\n")
                .is_none()
        );
    }

    /// Hidden, then back byte for byte; back with the run's own change kept when the file
    /// changed meanwhile; and back from the state file after a run that never restored.
    #[test]
    fn hidden_and_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let transcripts = dir.path().join("t");
        let original = checkout_config();
        std::fs::write(&config, &original).unwrap();
        let guard = hide(std::slice::from_ref(&config), &transcripts);
        let during = std::fs::read_to_string(&config).unwrap();
        assert!(!during.contains("extraheader"), "{during}");
        assert!(secrets().iter().any(|(_, v)| v == TOKEN));
        assert!(transcripts.join(STATE_DIR).join(STATE_FILE).exists());
        guard.restore();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
        assert!(!transcripts.join(STATE_DIR).exists());
        assert!(!secrets().iter().any(|(_, v)| v == TOKEN));

        // Changed during the run: the change stays, the credential comes back.
        let guard = hide(std::slice::from_ref(&config), &transcripts);
        let mut changed = std::fs::read_to_string(&config).unwrap();
        changed.push_str("[task]\n\tx = 1\n");
        std::fs::write(&config, &changed).unwrap();
        drop(guard);
        let after = git2::Config::open(&config).unwrap();
        assert_eq!(after.get_string("task.x").unwrap(), "1");
        assert!(
            after
                .get_string("http.https://github.com/.extraheader")
                .unwrap()
                .starts_with("AUTHORIZATION: basic ")
        );

        // Another run started while one hides: it leaves the live run's state alone.
        std::fs::write(&config, &original).unwrap();
        let guard = hide(std::slice::from_ref(&config), &transcripts);
        restore_left(&transcripts);
        assert!(
            !std::fs::read_to_string(&config)
                .unwrap()
                .contains("extraheader")
        );
        drop(guard);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), original);

        // A run killed while hiding: the next one puts it back first.
        std::fs::write(&config, &original).unwrap();
        let mut guard = hide(std::slice::from_ref(&config), &transcripts);
        // Killed: its lock goes with the process, its state file stays, nothing is put back.
        guard.lock = None;
        guard.hidden.clear();
        drop(guard);
        assert!(
            !std::fs::read_to_string(&config)
                .unwrap()
                .contains("extraheader")
        );
        restore_left(&transcripts);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
        assert!(!transcripts.join(STATE_DIR).exists());
    }
}
