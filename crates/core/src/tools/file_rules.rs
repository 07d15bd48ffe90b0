//! The sandbox's file rules held against the file tools: Read, Grep, Glob, Write and Edit
//! never read or write what a confined `cat` or `tee` could not (a credential location, a
//! `sandbox.read_deny` path, a path outside the writable roots). The rules are the task's
//! [`crate::sandbox::Sandbox::files`]; a context without a sandbox (unit tests) has none.
//!
//! A call's declared paths are checked once the permission policy has allowed it (a denial is
//! recorded like the policy's); the tools check again where they open files, and a search
//! skips the denied entries of the tree it walks ([`WalkFilter`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Access, CallError, ToolContext};
use crate::sandbox::files::{FileRules, resolve};

/// The task's file rules, when it has a sandbox.
fn rules(ctx: &ToolContext) -> Option<&FileRules> {
    ctx.session.env.sandbox.as_ref().map(|s| s.files())
}

/// Whether the sandbox lets a file tool touch what `access` declares; `Err` carries the
/// reason for the model (naming the rule) and whether a write was refused.
pub(crate) fn check_access(ctx: &ToolContext, access: &Access) -> Result<(), (String, bool)> {
    match access {
        Access::Read(paths) => paths
            .iter()
            .try_for_each(|p| may_read(ctx, p))
            .map_err(|e| (e.0, false)),
        Access::Write(paths) => paths
            .iter()
            .try_for_each(|p| may_write(ctx, p))
            .map_err(|e| (e.0, true)),
        Access::Exec(_) | Access::Other | Access::Internal => Ok(()),
    }
}

/// Whether a file tool may read `path`: `Err` names the rule that denies it.
pub(crate) fn may_read(ctx: &ToolContext, path: &Path) -> Result<(), CallError> {
    match rules(ctx) {
        Some(r) => r.may_read(path).map_err(|e| CallError(e.to_string())),
        None => Ok(()),
    }
}

/// Whether a file tool may write `path`: `Err` names the rule that denies it.
pub(crate) fn may_write(ctx: &ToolContext, path: &Path) -> Result<(), CallError> {
    match rules(ctx) {
        Some(r) => r.may_write(path).map_err(|e| CallError(e.to_string())),
        None => Ok(()),
    }
}

/// What a tree walk (Grep, Glob) may enter: denied directories are not descended, denied
/// files are skipped, symbolic links are judged by where they lead. Entries under the walk's
/// root are checked against only the denied locations inside it (usually none), by their
/// path below the resolved root; only links are resolved one by one.
#[derive(Clone)]
pub(crate) struct WalkFilter {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    /// The walk's root as given, and where it really is.
    root: PathBuf,
    resolved_root: PathBuf,
    /// The denied locations inside the resolved root.
    inside: FileRules,
    /// Every rule, for the targets of links.
    all: FileRules,
}

impl WalkFilter {
    /// The filter of a walk from `root`; `Err` (the reason) when `root` itself is denied.
    pub(crate) fn new(ctx: &ToolContext, root: &Path) -> Result<WalkFilter, CallError> {
        let Some(all) = rules(ctx) else {
            return Ok(WalkFilter { inner: None });
        };
        let resolved_root = resolve(root);
        let inside = all.under(&resolved_root).map_err(|e| e.to_string())?;
        Ok(WalkFilter {
            inner: Some(Arc::new(Inner {
                root: root.to_path_buf(),
                resolved_root,
                inside,
                all: all.clone(),
            })),
        })
    }

    /// Whether the walk may enter (or search) the entry at `path`, a symbolic link or not.
    pub(crate) fn allows(&self, path: &Path, is_symlink: bool) -> bool {
        let Some(f) = &self.inner else {
            return true;
        };
        if is_symlink {
            return f.all.may_read(path).is_ok();
        }
        if f.inside.denies_nothing() {
            return true;
        }
        match path.strip_prefix(&f.root) {
            Ok(rel) => f
                .inside
                .may_read_resolved(&f.resolved_root.join(rel))
                .is_ok(),
            Err(_) => f.all.may_read(path).is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::process::ChildPolicy;
    use crate::sandbox::settings::{NetworkSetting, SandboxMode};
    use crate::sandbox::{Sandbox, SandboxRequest};
    use crate::tools::edit::EditTool;
    use crate::tools::glob::GlobTool;
    use crate::tools::grep::GrepTool;
    use crate::tools::read::ReadTool;
    use crate::tools::util::test_support::{call, ctx};
    use crate::tools::write::WriteTool;

    /// A context whose sandbox (mode `off`: no kernel needed) denies `deny` (workdir-relative)
    /// and the credential locations of `home`.
    async fn sandboxed(deny: &[&str], home: &Path) -> (tempfile::TempDir, ToolContext) {
        let (d, mut ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let sb = Sandbox::start(SandboxRequest {
            mode: SandboxMode::Off,
            network: &NetworkSetting::None,
            workdir: &w,
            write: vec![],
            read_deny: deny.iter().map(|p| w.join(p)).collect(),
            unix_sockets: vec![],
            read: vec![],
            home: Some(home.to_path_buf()),
            attempts: tx,
        })
        .await
        .unwrap();
        Arc::get_mut(&mut ctx.session).unwrap().env = Arc::new(ChildPolicy {
            sandbox: Some(Arc::new(sb)),
            ..ChildPolicy::default()
        });
        (d, ctx)
    }

    #[tokio::test]
    async fn searches_skip_denied_files_directories_and_links_into_them() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "needle KEY\n").unwrap();
        let (_d, ctx) = sandboxed(&["secret.txt", "vault"], &home).await;
        let w = ctx.session.roots.workdir.clone();
        std::fs::write(w.join("secret.txt"), "needle\n").unwrap();
        std::fs::create_dir_all(w.join("vault/deep")).unwrap();
        std::fs::write(w.join("vault/deep/k.txt"), "needle\n").unwrap();
        std::fs::write(w.join("open.txt"), "needle\n").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), w.join("key.txt")).unwrap();
        std::os::unix::fs::symlink(w.join("vault"), w.join("v2")).unwrap();

        let out = call(&GrepTool, json!({"pattern": "needle"}), &ctx)
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains("open.txt"), "{}", out.content);
        for hidden in ["secret.txt", "k.txt", "key.txt", "id_rsa"] {
            assert!(!out.content.contains(hidden), "{hidden}: {}", out.content);
        }
        let out = call(&GlobTool, json!({"pattern": "**/*"}), &ctx)
            .await
            .unwrap();
        assert!(out.content.contains("open.txt"), "{}", out.content);
        for hidden in ["secret.txt", "k.txt", "key.txt", "v2"] {
            assert!(!out.content.contains(hidden), "{hidden}: {}", out.content);
        }
        // A denied search root is an error naming the rule.
        let out = call(
            &GrepTool,
            json!({"pattern": "n", "path": w.join("vault")}),
            &ctx,
        )
        .await
        .unwrap();
        assert!(
            out.is_error && out.content.contains("sandbox.read_deny"),
            "{}",
            out.content
        );
        let out = call(
            &GlobTool,
            json!({"pattern": "*", "path": home.join(".ssh")}),
            &ctx,
        )
        .await
        .unwrap();
        assert!(
            out.is_error && out.content.contains("~/.ssh"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn read_write_and_edit_refuse_denied_paths() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(home.join(".aws/credentials"), "aws_secret=1\n").unwrap();
        let (_d, ctx) = sandboxed(&[".env"], &home).await;
        let w = ctx.session.roots.workdir.clone();
        std::fs::write(w.join(".env"), "TOKEN=1\n").unwrap();
        std::os::unix::fs::symlink(home.join(".aws/credentials"), w.join("c")).unwrap();
        for p in [w.join(".env"), w.join("c"), home.join(".aws/credentials")] {
            let out = call(&ReadTool, json!({"file_path": p}), &ctx)
                .await
                .unwrap();
            assert!(out.is_error, "{}", out.content);
            assert!(!out.content.contains("=1"), "{}", out.content);
        }
        let out = call(
            &WriteTool,
            json!({"file_path": w.join("c"), "content": "x"}),
            &ctx,
        )
        .await
        .unwrap();
        assert!(
            out.is_error && out.content.contains("`~/.aws`"),
            "{}",
            out.content
        );
        let out = call(
            &EditTool,
            json!({"file_path": w.join(".env"), "old_string": "1", "new_string": "2"}),
            &ctx,
        )
        .await
        .unwrap();
        assert!(
            out.is_error && out.content.contains("read_deny"),
            "{}",
            out.content
        );
        assert_eq!(
            std::fs::read_to_string(w.join(".env")).unwrap(),
            "TOKEN=1\n"
        );
        assert_eq!(
            std::fs::read_to_string(home.join(".aws/credentials")).unwrap(),
            "aws_secret=1\n"
        );
        // Everything else is untouched by the rules.
        std::fs::write(w.join("ok.txt"), "fine\n").unwrap();
        let out = call(&ReadTool, json!({"file_path": w.join("ok.txt")}), &ctx)
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.content);
    }

    #[tokio::test]
    async fn declared_access_is_checked_and_says_whether_a_write_was_refused() {
        let home = tempfile::tempdir().unwrap();
        let (_d, ctx) = sandboxed(&["s"], home.path()).await;
        let s = ctx.session.roots.workdir.join("s");
        let (_, write) = check_access(&ctx, &Access::Write(vec![s.clone()])).unwrap_err();
        assert!(write);
        let (why, write) = check_access(&ctx, &Access::Read(vec![s])).unwrap_err();
        assert!(!write && why.contains("sandbox.read_deny"), "{why}");
        assert!(check_access(&ctx, &Access::Exec("cat s".into())).is_ok());
        assert!(
            check_access(
                &ctx,
                &Access::Read(vec![ctx.session.roots.workdir.join("t")])
            )
            .is_ok()
        );
    }
}
