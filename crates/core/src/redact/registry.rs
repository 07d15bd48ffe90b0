//! The process-wide set of secrets: every task registers its own when it starts, for output
//! written outside a task's sinks (the log, spill files, patches).

use std::path::Path;
use std::sync::RwLock;

use super::Redactor;

/// Secrets of every task started so far.
static LOG_SECRETS: RwLock<Option<Redactor>> = RwLock::new(None);

/// A redactor for every secret registered so far ([`register_for_logs`]): for output that is
/// written outside a task's own sinks (spill files, patches). Cheap: the compiled search is
/// shared.
pub fn registered() -> Redactor {
    with_registered(|r| r.cloned().unwrap_or_default())
}

/// Redact the file at `path` in place with every registered secret (a spill file). Bytes
/// that are not UTF-8 are kept as they are.
pub fn redact_file(path: &Path) -> std::io::Result<()> {
    let red = registered();
    if red.is_empty() {
        return Ok(());
    }
    let bytes = std::fs::read(path)?;
    match red.redact_bytes(&bytes) {
        std::borrow::Cow::Borrowed(_) => Ok(()),
        std::borrow::Cow::Owned(out) => std::fs::write(path, out),
    }
}

/// Redact `redactor`'s secrets in every log line from now on, and in spill files (logs are
/// process-wide; a task registers its secrets when it starts).
pub fn register_for_logs(redactor: &Redactor) {
    if redactor.is_empty() {
        return;
    }
    // Spilled command output is redacted in place before anyone reads it.
    crate::process::set_spill_filter(redact_file);
    let mut all = match LOG_SECRETS.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let mut pairs = all.as_ref().map(|r| r.pairs().to_vec()).unwrap_or_default();
    let before = pairs.len();
    for pair in redactor.pairs() {
        if !pairs.iter().any(|(_, v)| *v == pair.1) {
            pairs.push(pair.clone());
        }
    }
    if all.is_none() || pairs.len() != before {
        *all = Some(Redactor::new(pairs));
    }
}

/// Run `f` with the redactor of every secret registered so far ([`register_for_logs`]), if
/// any, without copying it (the log writer calls this for each line).
pub(crate) fn with_registered<R>(f: impl FnOnce(Option<&Redactor>) -> R) -> R {
    let secrets = match LOG_SECRETS.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    f(secrets.as_ref())
}
