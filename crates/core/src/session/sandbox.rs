//! The task's sandbox, from the spec's `sandbox:` section and the task's roots.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::prepare::PreparedTask;
use crate::roots::SessionRoots;
use crate::sandbox::{NetworkAttempt, Sandbox, SandboxError, SandboxRequest};

/// Set up the sandbox of `task`: its writable roots are the workdir (the whole worktree when
/// the task is isolated in `worktree`: it is the task's own copy), a private TMPDIR and the
/// spec's `sandbox.write`.
pub(crate) async fn start(
    task: &PreparedTask,
    roots: &SessionRoots,
    worktree: Option<&Path>,
    attempts: UnboundedSender<NetworkAttempt>,
) -> Result<Sandbox, SandboxError> {
    let settings = &task.loaded.spec.sandbox;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let resolve = |p: &PathBuf| resolve_path(p, &roots.spec_dir, home.as_deref());
    Sandbox::start(SandboxRequest {
        mode: settings.mode,
        network: &settings.network,
        workdir: worktree.unwrap_or(&roots.workdir),
        write: settings.write.iter().map(resolve).collect(),
        // What the run took out of the git configuration is kept from every command.
        read_deny: settings
            .read_deny
            .iter()
            .map(resolve)
            .chain(crate::git::credential::private_dirs())
            .collect(),
        unix_sockets: settings.unix_sockets.iter().map(resolve).collect(),
        read: settings.read.iter().map(resolve).collect(),
        home,
        attempts,
    })
    .await
}

/// A spec path: `~/…` under the home directory, relative to the spec's directory, or
/// absolute.
fn resolve_path(p: &Path, spec_dir: &Path, home: Option<&Path>) -> PathBuf {
    if let (Ok(rest), Some(h)) = (p.strip_prefix("~"), home) {
        return h.join(rest);
    }
    spec_dir.join(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_paths_resolve_against_the_spec_dir_or_home() {
        let spec = Path::new("/repo/tasks");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            resolve_path(Path::new("../target"), spec, home),
            PathBuf::from("/repo/tasks/../target")
        );
        assert_eq!(
            resolve_path(Path::new("~/.cache"), spec, home),
            PathBuf::from("/home/u/.cache")
        );
        assert_eq!(
            resolve_path(Path::new("/abs"), spec, home),
            PathBuf::from("/abs")
        );
    }
}
