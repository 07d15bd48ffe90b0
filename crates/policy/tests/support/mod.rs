//! The policy's test fixture shared by the property tests: a workdir and a home on disk, the
//! task's roots, and the decision for one Bash command.

use std::path::PathBuf;

use runner_policy::roots::SessionRoots;
use runner_policy::{Access, Decision, PermissionMode, Policy, ToolCall};

/// A workdir (with `src/` and a README) and a home (with `.ssh/`) on disk, and the task's roots.
pub struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    roots: SessionRoots,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["work/src", "home/.ssh"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("work/README.md"), "readme\n").unwrap();
        let work = root.join("work");
        Fixture {
            _dir: dir,
            home: root.join("home"),
            roots: SessionRoots {
                spec_dir: work.clone(),
                repo_root: None,
                workdir: work,
                additional_dirs: vec![],
                output_dir: root.join("out"),
                source_root: None,
            },
        }
    }

    /// The decision for the Bash command `cmd` under `mode` and the rules, or `None` when the
    /// rules themselves are refused.
    pub fn try_decide(
        &self,
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
        cmd: &str,
    ) -> Option<Decision> {
        let policy = Policy::new(mode, allow, deny)
            .ok()?
            .with_home(Some(self.home.clone()));
        let access = Access::Exec(cmd.to_string());
        let call = ToolCall {
            tool: "Bash",
            access: &access,
            cwd: &self.roots.workdir,
        };
        Some(policy.decide(&call, &self.roots))
    }
}
