//! Kernel confinement of every command runner starts — the Bash tool's commands, hooks and
//! verify checks — applied in one place: [`crate::process::spawn`] asks the task's [`Sandbox`]
//! for a [`Confinement`] and enters it in the child, between `fork` and `exec`.
//!
//! On Linux with Landlock, a confined command:
//! - reads the whole file system except the credential locations (`~/.ssh`, `~/.aws`,
//!   `~/.config/gh`, `/etc/shadow`, … and the spec's `sandbox.read_deny`);
//! - writes only under the writable roots (the workdir or the task's worktree, a private
//!   `TMPDIR`, the spec's `sandbox.write`), and only when the permission decision allowed it
//!   to write (`Scope::Write`: a rule, the mode or a hook allowed it); a command allowed as
//!   read-only writes nowhere;
//! - reaches the network as the spec says: not at all (`none`, the default), freely (`allow`),
//!   or only the listed hosts through runner's egress proxy ([`proxy`]), which records every
//!   attempt;
//! - cannot regain privileges (`no_new_privs`: `sudo` and setuid programs do not lift it),
//!   trace or read other processes' memory, or signal processes outside the sandbox.
//!
//! The same rules bind runner's own file tools (Read, Grep, Glob, Write, Edit) through a pure
//! query on the plan, [`files::FileRules`], which needs no kernel: it holds where commands run
//! unconfined too, and with mode `off` still keeps the file tools out of the credential
//! locations and `read_deny`.
//!
//! What it does not stop: anything a command does inside the writable roots (that is the
//! task's work, and includes the repository's `.git` and runner's output directory when they
//! lie inside the workdir: Landlock cannot take a path out of a writable tree), reading the
//! environment of the runner process through `/proc` (runner wipes its initial environment
//! block and is not dumpable, see [`protect`]), what a command prints (it goes to the model provider), and verify checks a
//! spec runs with `sandbox: off`. Where the kernel has no Landlock (old kernels, macOS), mode
//! `auto` runs commands unconfined and says so everywhere; `enforce` refuses to run.

pub mod files;
pub mod hosts;
#[cfg(target_os = "linux")]
mod landlock;
pub mod paths;
pub mod plan;
pub mod protect;
pub mod proxy;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod settings;
pub mod support;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

pub use files::{DenyRule, FileDenial, FileRules};
pub use plan::{Network, Plan, PlanInput};
pub use proxy::NetworkAttempt;
pub use support::{Support, support};

use runner_policy::Scope;
use settings::{NetworkSetting, SandboxMode};

/// Why a sandbox cannot be set up or entered.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `sandbox.mode: enforce` on a kernel that cannot confine.
    #[error(
        "sandbox.mode is enforce, but this kernel cannot confine commands ({0}); run on Linux 5.13 or newer with Landlock enabled, or set sandbox.mode to auto"
    )]
    Unsupported(String),
    /// A host pattern is malformed.
    #[error("sandbox.network: {0}")]
    Host(String),
    /// The Landlock ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("cannot build the seccomp filter: {0}")]
    Seccomp(String),
    /// The private TMPDIR or the proxy could not be set up.
    #[error("cannot set up the sandbox: {0}")]
    Setup(String),
}

/// The sandbox as reported (init record, stream-json `system/init`, `result.json`, JUnit, the
/// step summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SandboxReport {
    /// The mode asked for: `auto`, `enforce` or `off`.
    pub mode: String,
    /// Whether commands are confined.
    pub confined: bool,
    /// The kernel's Landlock ABI (null without Landlock).
    pub landlock_abi: Option<u32>,
    /// `none`, `allow`, or the allowed hosts (comma-separated).
    pub network: String,
    /// The writable roots.
    pub writable: Vec<PathBuf>,
    /// Why commands run unconfined, when they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfined_because: Option<String>,
}

/// What a task's sandbox is made from.
pub struct SandboxRequest<'a> {
    /// The mode.
    pub mode: SandboxMode,
    /// The network setting.
    pub network: &'a NetworkSetting,
    /// The task's workdir (its worktree when isolated).
    pub workdir: &'a Path,
    /// Extra writable paths (absolute).
    pub write: Vec<PathBuf>,
    /// Extra unreadable paths (absolute).
    pub read_deny: Vec<PathBuf>,
    /// The home directory whose credential locations are denied.
    pub home: Option<PathBuf>,
    /// Where the proxy reports connection attempts.
    pub attempts: UnboundedSender<NetworkAttempt>,
}

/// A task's sandbox: shared by every command of the task; the private TMPDIR and the proxy
/// last as long as it does.
pub struct Sandbox {
    report: SandboxReport,
    plan: Option<Plan>,
    /// What runner's file tools may read and write (the plan's rules; without a plan, the
    /// same credential locations and `read_deny`).
    files: FileRules,
    tmp: Option<tempfile::TempDir>,
    _proxy: Option<proxy::Proxy>,
    #[cfg(target_os = "linux")]
    compiled: Option<Compiled>,
}

/// The rulesets and filter of a confining sandbox, built once per task.
#[cfg(target_os = "linux")]
struct Compiled {
    read_only: ::landlock::RulesetCreated,
    write: ::landlock::RulesetCreated,
    filter: Arc<seccompiler::BpfProgram>,
}

impl Sandbox {
    /// A sandbox that confines nothing (`sandbox.mode: off`), reported as such. Its file rules
    /// deny only the system credential files; [`Sandbox::start`] adds the home directory's
    /// credential locations and `read_deny`.
    pub fn off(reason: &str) -> Sandbox {
        Sandbox {
            report: SandboxReport {
                mode: SandboxMode::Off.as_str().into(),
                confined: false,
                landlock_abi: support().landlock_abi,
                network: NetworkSetting::Allow.describe(),
                writable: Vec::new(),
                unconfined_because: Some(reason.into()),
            },
            plan: None,
            files: FileRules::new(None, &[], None, &[]),
            tmp: None,
            _proxy: None,
            #[cfg(target_os = "linux")]
            compiled: None,
        }
    }

    /// Set up the sandbox of one task. Mode `auto` on a kernel without Landlock gives an
    /// unconfined sandbox (and a loud warning); `enforce` fails.
    pub async fn start(req: SandboxRequest<'_>) -> Result<Sandbox, SandboxError> {
        let sup = support();
        if req.mode == SandboxMode::Off {
            // Commands run unconfined, but the file tools still keep out of the credential
            // locations and `read_deny`; their writes are left to the permission policy.
            let mut s = Sandbox::off("sandbox.mode is off");
            s.files = FileRules::new(req.home.as_deref(), &req.read_deny, None, &[]);
            return Ok(s);
        }
        if !sup.can_confine() {
            let why = unsupported_reason(&sup);
            if req.mode == SandboxMode::Enforce {
                return Err(SandboxError::Unsupported(why));
            }
            tracing::warn!(
                "the sandbox is not available ({why}): commands run UNCONFINED, with runner's own file and network access (set sandbox.mode: enforce to refuse instead)"
            );
            let mut s = Sandbox::off(&why);
            s.report.mode = req.mode.as_str().into();
            // The kernel cannot hold commands to the plan, but the file tools are held to it.
            let mut writable = vec![req.workdir.to_path_buf()];
            writable.extend(req.write.iter().cloned());
            s.files = FileRules::new(req.home.as_deref(), &req.read_deny, Some(&writable), &[]);
            return Ok(s);
        }
        let tmp = tempfile::Builder::new()
            .prefix("runner-tmp-")
            .tempdir()
            .map_err(|e| SandboxError::Setup(format!("private TMPDIR: {e}")))?;
        let (network, proxy) = match req.network {
            NetworkSetting::None => (Network::None, None),
            NetworkSetting::Allow => (Network::Allow, None),
            NetworkSetting::Hosts(list) => {
                let hosts = list
                    .iter()
                    .map(|h| hosts::HostPattern::parse(h))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(SandboxError::Host)?;
                let p = proxy::Proxy::start(hosts, req.attempts.clone())
                    .await
                    .map_err(|e| SandboxError::Setup(format!("egress proxy: {e}")))?;
                if !sup.landlock_net() {
                    tracing::warn!(
                        "this kernel's Landlock cannot limit TCP to the egress proxy's port (ABI < 4): confined commands get no network at all"
                    );
                }
                (Network::Proxy { port: p.port() }, Some(p))
            }
        };
        let mut writable = vec![req.workdir.to_path_buf(), tmp.path().to_path_buf()];
        writable.extend(req.write.iter().cloned());
        let plan = Plan::new(PlanInput {
            writable,
            read_deny: &req.read_deny,
            home: req.home.as_deref(),
            network,
        });
        #[cfg(target_os = "linux")]
        let compiled = Some(Compiled {
            read_only: landlock::ruleset(&plan, Scope::ReadOnly, &sup)?,
            write: landlock::ruleset(&plan, Scope::Write, &sup)?,
            filter: Arc::new(seccomp::program(
                &plan.network,
                &sup,
                &protect::protected_pids(),
            )?),
        });
        let report = SandboxReport {
            mode: req.mode.as_str().into(),
            confined: true,
            landlock_abi: sup.landlock_abi,
            network: req.network.describe(),
            writable: plan.writable.clone(),
            unconfined_because: None,
        };
        tracing::debug!(
            read_grants = plan.read_grants.len(),
            write_grants = plan.write_grants.len(),
            "sandbox ready"
        );
        Ok(Sandbox {
            report,
            files: plan.files.clone(),
            plan: Some(plan),
            tmp: Some(tmp),
            _proxy: proxy,
            #[cfg(target_os = "linux")]
            compiled,
        })
    }

    /// How the sandbox is reported.
    pub fn report(&self) -> &SandboxReport {
        &self.report
    }

    /// Whether commands are confined.
    pub fn confines(&self) -> bool {
        self.report.confined
    }

    /// What runner's file tools may read and write: the plan's rules when commands are
    /// confined, the same rules without a kernel (mode `auto` where it cannot confine), and
    /// with mode `off` the credential locations and `read_deny` (writes are then not limited
    /// to roots).
    pub fn files(&self) -> &FileRules {
        &self.files
    }

    /// The confinement of one command allowed for `scope`, or `None` when commands run
    /// unconfined.
    pub fn confine(&self, scope: Scope) -> Result<Option<Confinement>, SandboxError> {
        let Some(plan) = &self.plan else {
            return Ok(None);
        };
        let mut env: Vec<(String, String)> = Vec::new();
        if let Some(tmp) = &self.tmp {
            let t = tmp.path().to_string_lossy().into_owned();
            for k in ["TMPDIR", "TMP", "TEMP"] {
                env.push((k.into(), t.clone()));
            }
        }
        let mut remove: Vec<&'static str> = Vec::new();
        if let Some(port) = plan.network.proxy_port() {
            let url = format!("http://127.0.0.1:{port}");
            for k in [
                "HTTPS_PROXY",
                "HTTP_PROXY",
                "ALL_PROXY",
                "https_proxy",
                "http_proxy",
                "all_proxy",
            ] {
                env.push((k.into(), url.clone()));
            }
            remove.extend(["NO_PROXY", "no_proxy"]);
        }
        #[cfg(target_os = "linux")]
        {
            let Some(c) = &self.compiled else {
                return Ok(None);
            };
            let rules = match scope {
                Scope::ReadOnly => &c.read_only,
                Scope::Write => &c.write,
            };
            let ruleset = rules
                .try_clone()
                .map_err(|e| SandboxError::Landlock(e.to_string()))?;
            Ok(Some(Confinement {
                env,
                remove,
                ruleset: Some(ruleset),
                filter: c.filter.clone(),
            }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (scope, env, remove);
            Ok(None)
        }
    }

    /// The one-line hint added to a confined command's failure that looks like the sandbox's
    /// doing (a permission error, a refused connection), so the model does not retry in vain.
    pub fn hint(&self, scope: Scope) -> Option<String> {
        let plan = self.plan.as_ref()?;
        let writes = match scope {
            Scope::ReadOnly => {
                "this command was allowed as read-only, so it may write nowhere (a command an allow rule permits may write in the workspace)".to_string()
            }
            Scope::Write => format!(
                "writes are allowed only under {}",
                plan.writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let net = match &plan.network {
            Network::None => "; network is off for this task".to_string(),
            Network::Allow => String::new(),
            Network::Proxy { .. } => format!(
                "; network reaches only {} (through the HTTPS_PROXY this command was given)",
                self.report.network
            ),
        };
        Some(format!("[sandbox] {writes}{net}."))
    }
}

fn unsupported_reason(sup: &Support) -> String {
    if cfg!(not(target_os = "linux")) {
        "Landlock exists only on Linux".into()
    } else if sup.landlock_abi.is_none() {
        "the kernel has no Landlock".into()
    } else {
        "seccomp filters are not available".into()
    }
}

/// The confinement one child enters between `fork` and `exec`.
pub struct Confinement {
    /// Variables set for the child (the private TMPDIR, the proxy).
    pub env: Vec<(String, String)>,
    /// Variables removed for the child.
    pub remove: Vec<&'static str>,
    #[cfg(target_os = "linux")]
    ruleset: Option<::landlock::RulesetCreated>,
    #[cfg(target_os = "linux")]
    filter: Arc<seccompiler::BpfProgram>,
}

impl Confinement {
    /// Restrict the calling process: Landlock (which also sets `no_new_privs`), then the
    /// seccomp filter. Meant for the child after `fork`: it allocates nothing.
    pub fn enter(&mut self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            let Some(ruleset) = self.ruleset.take() else {
                return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
            };
            match ruleset.restrict_self() {
                Ok(status) if status.ruleset != ::landlock::RulesetStatus::NotEnforced => {}
                _ => return Err(std::io::Error::from_raw_os_error(libc::EPERM)),
            }
            if seccompiler::apply_filter(self.filter.as_slice()).is_err() {
                return Err(std::io::Error::from_raw_os_error(libc::EPERM));
            }
        }
        Ok(())
    }
}
