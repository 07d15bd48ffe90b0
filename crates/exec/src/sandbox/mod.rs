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
//!   keeps no capability even as root ([`caps`]), cannot trace or read other processes'
//!   memory, or signal processes outside the sandbox, and connects only to the Unix sockets
//!   inside its writable roots and those the spec lists ([`unix_sockets`]);
//! - where runner can make them ([`namespace`]), runs in PID and mount namespaces of its own:
//!   no other process in sight, nothing left running after it ends, and every mount read-only
//!   but the writable roots.
//!
//! The same rules bind runner's own file tools (Read, Grep, Glob, Write, Edit) through a pure
//! query on the plan, [`files::FileRules`], which needs no kernel: it holds where commands run
//! unconfined too, and with mode `off` still keeps the file tools out of the credential
//! locations and `read_deny`.
//!
//! What it does not stop: anything a command does inside the writable roots (that is the
//! task's work, and includes the repository's `.git` and runner's output directory when they
//! lie inside the workdir: Landlock cannot take a path out of a writable tree), without
//! namespaces the environment of other processes of the same user through `/proc` (runner
//! wipes its own initial environment block and is not dumpable, see [`protect`]), what a
//! command prints (it goes to the model provider), and verify checks a
//! spec runs with `sandbox: off`. Where the kernel has no Landlock (old kernels, macOS), mode
//! `auto` runs commands unconfined and says so everywhere; `enforce` refuses to run.

#[cfg(target_os = "linux")]
mod caps;
#[cfg(target_os = "linux")]
pub mod exec_image;
pub mod files;
pub mod home;
pub mod hosts;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod namespace;
pub mod paths;
pub mod plan;
pub mod protect;
pub mod proxy;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod settings;
#[cfg(target_os = "linux")]
mod socket_paths;
pub mod support;
#[cfg(target_os = "linux")]
mod unix_sockets;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

pub use files::{DenyRule, FileDenial, FileRules};
pub use plan::{Network, Plan, PlanInput};
pub use proxy::{AttemptSink, NetworkAttempt};
pub use support::{NamespaceKind, Support, support};

use runner_protocol::Scope;
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
    Host(#[from] hosts::HostError),
    /// The Landlock ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("cannot build the seccomp filter: {0}")]
    Seccomp(String),
    /// `sandbox.mode: enforce` on a kernel that cannot give every protection.
    #[error(
        "sandbox.mode is enforce, but this kernel cannot give confined commands: {0} (see the sandbox section of the docs); set sandbox.mode to auto to run with what it offers"
    )]
    Missing(String),
    /// The private TMPDIR or the proxy could not be set up.
    #[error("cannot set up the sandbox: {0}")]
    Setup(String),
}

/// The sandbox as reported (init record, stream-json `system/init`, `result.json`, JUnit, the
/// step summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
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
    /// Whether each command runs in PID and mount namespaces of its own (`root` or `user`
    /// namespaces; null: it does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<String>,
    /// The Unix sockets the spec opted in (`sandbox.unix_sockets`): commands may connect to
    /// them besides the sockets inside the writable roots (where the kernel cannot check the
    /// path, to any socket they can name: `missing` then has `unix-socket-paths`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
    /// The protections this kernel cannot give confined commands (see [`Missing`]); mode
    /// `enforce` refuses to run while any is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The trees commands may not read but for what is open in them: the home directory and
    /// `$RUNNER_TEMP`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed: Vec<PathBuf>,
    /// The toolchain locations of the home directory that commands may read (the allow list
    /// that applied; see the docs' table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub home_toolchains: Vec<String>,
}

/// A protection of confined commands that the kernel in use cannot give, by its report name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// No PID namespace: a command sees the other processes of its user, and may read their
    /// environment through `/proc` (what it leaves running is still stopped, by runner as
    /// their subreaper).
    PidNamespace,
    /// No mount namespace: `chmod`, `chown`, `utime` and extended attributes work outside the
    /// writable roots (Landlock has no right for them).
    ReadOnlyMounts,
    /// No Landlock network rules (ABI < 4): with a host list, confined commands get no network
    /// at all instead of the proxy.
    TcpPorts,
    /// No seccomp user notifications: runner cannot check the path of a Unix socket a command
    /// connects to, so with `sandbox.unix_sockets` set every socket a command can name is
    /// reachable (without it, Unix sockets are refused).
    UnixSocketPaths,
}

impl Missing {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Missing::PidNamespace => "pid-namespace",
            Missing::ReadOnlyMounts => "read-only-mounts",
            Missing::TcpPorts => "tcp-ports",
            Missing::UnixSocketPaths => "unix-socket-paths",
        }
    }

    /// What is missing for commands confined with `network` on a kernel with `sup`;
    /// `unix_sockets`: whether the spec lists sockets.
    pub fn of(sup: &Support, network: &NetworkSetting, unix_sockets: bool) -> Vec<Missing> {
        let mut m = Vec::new();
        if sup.namespaces.is_none() {
            m.push(Missing::PidNamespace);
            m.push(Missing::ReadOnlyMounts);
        }
        if matches!(network, NetworkSetting::Hosts(_)) && !sup.landlock_net() {
            m.push(Missing::TcpPorts);
        }
        if unix_sockets && !sup.unix_notify {
            m.push(Missing::UnixSocketPaths);
        }
        m
    }
}

/// Variables that name a Unix socket or the directory of a user's sockets: removed from every
/// child's environment unless they name a socket the spec opted in (`sandbox.unix_sockets`).
pub const SOCKET_VARS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "DOCKER_HOST",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "GPG_AGENT_INFO",
];

/// Whether the value of a [`SOCKET_VARS`] variable names one of `sockets` (`unix://PATH`,
/// `unix:path=PATH,…`, or the path itself).
pub fn names_listed_socket(value: &str, sockets: &[PathBuf]) -> bool {
    let path = value
        .strip_prefix("unix://")
        .or_else(|| {
            value
                .strip_prefix("unix:path=")
                .map(|v| v.split(',').next().unwrap_or(v))
        })
        .unwrap_or(value);
    let path = Path::new(path);
    path.is_absolute()
        && sockets.iter().any(|s| {
            s == path
                || std::fs::canonicalize(s)
                    .ok()
                    .zip(std::fs::canonicalize(path).ok())
                    .is_some_and(|(a, b)| a == b)
        })
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
    /// Unix sockets (or directories of sockets) the spec opts in (absolute): commands may
    /// connect to them besides those in the writable roots.
    pub unix_sockets: Vec<PathBuf>,
    /// Paths under the home directory that stay readable (absolute; the spec's
    /// `sandbox.read`).
    pub read: Vec<PathBuf>,
    /// The home directory whose credential locations are denied.
    pub home: Option<PathBuf>,
    /// Where the proxy reports connection attempts (called from its threads).
    pub attempts: AttemptSink,
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
    /// Variables kept for commands because they name an opted-in socket.
    kept_vars: Vec<(String, String)>,
    /// The kept part of the user's global git configuration (identity, trusted directories),
    /// for commands that may write: `~/.gitconfig` itself is unreadable to them.
    gitconfig: Option<PathBuf>,
    #[cfg(target_os = "linux")]
    compiled: Option<Compiled>,
    /// The thread that checks the commands' Unix socket connections (with user
    /// notifications).
    #[cfg(target_os = "linux")]
    _unix: Option<unix_sockets::Supervisor>,
}

/// The rulesets and filter of a confining sandbox: the filter built when the task starts, the
/// rulesets when its first command starts.
#[cfg(target_os = "linux")]
struct Compiled {
    /// The rulesets of each scope (read-only, write), with how many commands completed them
    /// with the rule for their own `/proc` (see [`landlock::OwnRuleset`]). Both are made from
    /// the task's [`Plan`] when the task's first command (a hook, an MCP server, a tool's
    /// command) starts, before any command of the task ran: a task that runs none builds
    /// neither. Until then only runner's own tools ran, and they make no link.
    rulesets: std::sync::Mutex<[Option<(::landlock::RulesetCreated, u32)>; 2]>,
    filter: Arc<seccompiler::BpfProgram>,
    /// The namespaces of a command of each scope (read-only, write): a read-only command's
    /// mounts are all read-only, a writing command's leave the writable roots writable.
    namespaces: Option<[Arc<namespace::Namespaces>; 2]>,
    /// How each command passes its `connect` supervisor's listener to runner.
    unix: Option<Arc<unix_sockets::Handoff>>,
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
                namespaces: None,
                unix_sockets: Vec::new(),
                missing: Vec::new(),
                closed: Vec::new(),
                home_toolchains: Vec::new(),
            },
            plan: None,
            files: FileRules::new(None, &[], None, &[]),
            tmp: None,
            _proxy: None,
            kept_vars: Vec::new(),
            gitconfig: None,
            #[cfg(target_os = "linux")]
            compiled: None,
            #[cfg(target_os = "linux")]
            _unix: None,
        }
    }

    /// The sandbox of a task whose commands run unconfined (mode `off`, or `auto` on a kernel
    /// that cannot confine), or `None` when its commands are confined; `enforce` on a kernel
    /// that cannot confine is an error.
    fn unconfined(
        req: &SandboxRequest<'_>,
        sup: &Support,
    ) -> Result<Option<Sandbox>, SandboxError> {
        if req.mode == SandboxMode::Off {
            // Commands run unconfined, but the file tools still keep out of the credential
            // locations and `read_deny`; their writes are left to the permission policy.
            let mut s = Sandbox::off("sandbox.mode is off");
            s.files = FileRules::new(req.home.as_deref(), &req.read_deny, None, &[]);
            return Ok(Some(s));
        }
        if sup.can_confine() {
            return Ok(None);
        }
        let why = unsupported_reason(sup);
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
        Ok(Some(s))
    }

    /// The network of a task's commands, with the egress proxy it needs (`network: [hosts]`).
    fn network(
        req: &SandboxRequest<'_>,
        sup: &Support,
    ) -> Result<(Network, Option<proxy::Proxy>), SandboxError> {
        Ok(match req.network {
            NetworkSetting::None => (Network::None, None),
            NetworkSetting::Allow => (Network::Allow, None),
            NetworkSetting::Hosts(list) => {
                let hosts = list
                    .iter()
                    .map(|h| hosts::HostPattern::parse(h))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(SandboxError::Host)?;
                let p = proxy::Proxy::start(hosts, req.attempts.clone())
                    .map_err(|e| SandboxError::Setup(format!("egress proxy: {e}")))?;
                if !sup.landlock_net() {
                    tracing::warn!(
                        "this kernel's Landlock cannot limit TCP to the egress proxy's port (ABI < 4): confined commands get no network at all"
                    );
                }
                (Network::Proxy { port: p.port() }, Some(p))
            }
        })
    }

    /// The protections this kernel cannot give (refused under `enforce`, warned about
    /// otherwise), and the loud warning about opted-in Unix sockets.
    fn missing(req: &SandboxRequest<'_>, sup: &Support) -> Result<Vec<String>, SandboxError> {
        let missing: Vec<String> = Missing::of(sup, req.network, !req.unix_sockets.is_empty())
            .into_iter()
            .map(|m| m.as_str().to_string())
            .collect();
        if req.mode == SandboxMode::Enforce && !missing.is_empty() {
            return Err(SandboxError::Missing(missing.join(", ")));
        }
        for m in &missing {
            tracing::warn!(
                missing = %m,
                "the sandbox cannot give confined commands this protection on this kernel (see the sandbox report's `missing`; set sandbox.mode: enforce to refuse instead)"
            );
        }
        if !req.unix_sockets.is_empty() {
            let sockets = req
                .unix_sockets
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            if sup.unix_notify {
                tracing::warn!(
                    sockets = %sockets,
                    "sandbox.unix_sockets: commands may connect to these sockets, with whatever the daemon behind them grants (the Docker socket is root on the machine)"
                );
            } else {
                tracing::warn!(
                    sockets = %sockets,
                    "sandbox.unix_sockets: this kernel cannot check socket paths (no seccomp user notifications): commands may reach ANY Unix socket they can name, not only the listed ones"
                );
            }
        }
        Ok(missing)
    }

    /// Set up the sandbox of one task. Mode `auto` on a kernel without Landlock gives an
    /// unconfined sandbox (and a loud warning); `enforce` fails. Blocks briefly (the private
    /// TMPDIR, the seccomp filter, the proxy's and the socket supervisor's threads); the Landlock
    /// rulesets are built at the task's first command.
    pub fn start(req: SandboxRequest<'_>) -> Result<Sandbox, SandboxError> {
        let sup = support();
        if let Some(unconfined) = Sandbox::unconfined(&req, &sup)? {
            return Ok(unconfined);
        }
        let tmp = tempfile::Builder::new()
            .prefix("runner-tmp-")
            .tempdir()
            .map_err(|e| SandboxError::Setup(format!("private TMPDIR: {e}")))?;
        let (network, proxy) = Sandbox::network(&req, &sup)?;
        let mut writable = vec![req.workdir.to_path_buf(), tmp.path().to_path_buf()];
        writable.extend(req.write.iter().cloned());
        let missing = Sandbox::missing(&req, &sup)?;
        let runner_temp = std::env::var_os("RUNNER_TEMP")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let plan = Plan::new(PlanInput {
            writable,
            read_deny: &req.read_deny,
            home: req.home.as_deref(),
            runner_temp: runner_temp.as_deref(),
            read: &req.read,
            network,
        });
        #[cfg(target_os = "linux")]
        let unix = if sup.unix_notify {
            let rules = socket_paths::SocketRules::new(
                &plan.writable,
                &req.unix_sockets,
                sup.landlock_scope(),
            );
            Some(
                unix_sockets::Supervisor::start(rules)
                    .map_err(|e| SandboxError::Setup(format!("Unix socket supervisor: {e}")))?,
            )
        } else {
            None
        };
        #[cfg(target_os = "linux")]
        let unix_mode = match (&unix, req.unix_sockets.is_empty()) {
            (Some(_), _) => seccomp::UnixSockets::Supervised,
            (None, true) => seccomp::UnixSockets::Refused,
            (None, false) => seccomp::UnixSockets::Any,
        };
        #[cfg(target_os = "linux")]
        let compiled = Some(Compiled {
            rulesets: std::sync::Mutex::new([None, None]),
            filter: Arc::new(seccomp::program(
                &plan.network,
                &sup,
                &protect::protected_pids(),
                unix_mode,
            )?),
            // The writable devices need no mount of their own: a read-only mount refuses
            // writes to regular files, directories and links, not to a character device (and
            // it refuses their metadata changes).
            namespaces: sup.namespaces.map(|kind| {
                let user = kind == NamespaceKind::User;
                [
                    Arc::new(namespace::Namespaces::new(user, &[])),
                    Arc::new(namespace::Namespaces::new(user, &plan.writable)),
                ]
            }),
            unix: unix.as_ref().map(unix_sockets::Supervisor::handoff),
        });
        let gitconfig = match (&req.home, std::env::var_os("GIT_CONFIG_GLOBAL")) {
            (Some(home), None) => home::kept_gitconfig(home, tmp.path()),
            _ => None,
        };
        let kept_vars = SOCKET_VARS
            .iter()
            .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
            .filter(|(_, v)| names_listed_socket(v, &req.unix_sockets))
            .collect();
        let report = SandboxReport {
            mode: req.mode.as_str().into(),
            confined: true,
            landlock_abi: sup.landlock_abi,
            network: req.network.describe(),
            writable: plan.writable.clone(),
            unconfined_because: None,
            namespaces: sup.namespaces.map(|k| {
                match k {
                    NamespaceKind::Root => "root",
                    NamespaceKind::User => "user",
                }
                .to_string()
            }),
            unix_sockets: req.unix_sockets.clone(),
            missing,
            closed: plan.home.closed.clone(),
            home_toolchains: plan.home.toolchains.clone(),
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
            kept_vars,
            gitconfig,
            #[cfg(target_os = "linux")]
            compiled,
            #[cfg(target_os = "linux")]
            _unix: unix,
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
        let mut env: Vec<(String, String)> = self.kept_vars.clone();
        if let (Some(g), Scope::Write) = (&self.gitconfig, scope) {
            env.push(("GIT_CONFIG_GLOBAL".into(), g.to_string_lossy().into_owned()));
        }
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
            let ruleset = self.ruleset(c, plan, scope)?;
            let (ruleset, own) = if c.namespaces.is_some() {
                (None, Some(landlock::OwnRuleset::new(ruleset, &support())?))
            } else {
                (Some(ruleset), None)
            };
            Ok(Some(Confinement {
                env,
                remove,
                ruleset,
                own,
                filter: c.filter.clone(),
                namespaces: c.namespaces.as_ref().map(|[read_only, write]| match scope {
                    Scope::ReadOnly => read_only.clone(),
                    Scope::Write => write.clone(),
                }),
                unix: c.unix.clone(),
                exec: None,
            }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (scope, env, remove);
            Ok(None)
        }
    }

    /// A copy of the task's ruleset for `scope` (the same kernel object); both scopes' are made
    /// at the task's first command. With namespaces each command adds a rule to it, so it is
    /// made anew every [`landlock::SHARED_USES`] commands.
    #[cfg(target_os = "linux")]
    fn ruleset(
        &self,
        c: &Compiled,
        plan: &Plan,
        scope: Scope,
    ) -> Result<::landlock::RulesetCreated, SandboxError> {
        let mut slots = c.rulesets.lock().unwrap_or_else(|e| e.into_inner());
        if slots.iter().all(Option::is_none) {
            for (slot, scope) in slots.iter_mut().zip([Scope::ReadOnly, Scope::Write]) {
                *slot = Some((landlock::ruleset(plan, scope, &support())?, 0));
            }
        }
        let slot = match scope {
            Scope::ReadOnly => &mut slots[0],
            Scope::Write => &mut slots[1],
        };
        let renewed = c.namespaces.is_some();
        let entry = match slot.take() {
            Some(entry) if !(renewed && entry.1 >= landlock::SHARED_USES) => entry,
            _ => (landlock::ruleset(plan, scope, &support())?, 0),
        };
        let (ruleset, uses) = slot.insert(entry);
        if renewed {
            *uses += 1;
        }
        ruleset
            .try_clone()
            .map_err(|e| SandboxError::Landlock(e.to_string()))
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
    /// With namespaces: the command's own ruleset, completed in the child.
    #[cfg(target_os = "linux")]
    own: Option<landlock::OwnRuleset>,
    #[cfg(target_os = "linux")]
    filter: Arc<seccompiler::BpfProgram>,
    #[cfg(target_os = "linux")]
    namespaces: Option<Arc<namespace::Namespaces>>,
    /// The `connect` supervisor's filter and the way to its thread.
    #[cfg(target_os = "linux")]
    unix: Option<Arc<unix_sockets::Handoff>>,
    /// With namespaces: what the command `exec`s (see [`Confinement::execs`]).
    #[cfg(target_os = "linux")]
    exec: Option<exec_image::ExecImage>,
}

impl Confinement {
    /// Whether [`Confinement::enter`] starts the command itself (with namespaces of its own:
    /// the command is a new process in them), so it must be given the program's image with
    /// [`Confinement::set_exec`], made once the command's environment is complete.
    pub fn execs(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.namespaces.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// What the command `exec`s, when [`Confinement::execs`].
    #[cfg(target_os = "linux")]
    pub fn set_exec(&mut self, image: exec_image::ExecImage) {
        self.exec = Some(image);
    }

    /// Restrict the calling process: namespaces of its own (where the kernel lets runner make
    /// them), no capabilities, Landlock (which also sets `no_new_privs`), then the seccomp
    /// filter and the filter that sends `connect` to runner's supervisor. Meant for the child
    /// after `fork`: it allocates nothing. With namespaces it starts the command in them and
    /// does not return but with an error (see [`Confinement::execs`]).
    pub fn enter(&mut self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            if let Some(ns) = self.namespaces.take() {
                let Some(image) = self.exec.take() else {
                    return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
                };
                let mut start = || match self.restrict() {
                    Err(e) => e,
                    Ok(()) => image.exec(),
                };
                return match ns.enter(&mut start) {
                    Err(e) => Err(e),
                    Ok(never) => match never {},
                };
            }
            self.restrict()?;
        }
        Ok(())
    }

    /// Everything but the namespaces, in the process that goes on to `exec` the command.
    #[cfg(target_os = "linux")]
    fn restrict(&mut self) -> std::io::Result<()> {
        caps::drop_all()?;
        if let Some(own) = self.own.take() {
            own.restrict()?;
        } else {
            let Some(ruleset) = self.ruleset.take() else {
                return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
            };
            match ruleset.restrict_self() {
                Ok(status) if status.ruleset != ::landlock::RulesetStatus::NotEnforced => {}
                _ => return Err(std::io::Error::from_raw_os_error(libc::EPERM)),
            }
        }
        if seccompiler::apply_filter(self.filter.as_slice()).is_err() {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
        if let Some(unix) = &self.unix {
            unix.enter()?;
        }
        Ok(())
    }
}
