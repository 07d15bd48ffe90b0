//! The Landlock ruleset of confined commands: read everything but the credential locations,
//! write only the writable roots (and the harmless devices), TCP only to the egress proxy (or
//! nowhere), no signals or abstract Unix sockets out of the sandbox.
//!
//! One ruleset per scope is built at the task's first command and every command applies a
//! copy (made again every [`SHARED_USES`] commands, when a path inside a writable root is
//! opened without following links: see [`rules`]). A
//! command in its own PID namespace gets a `/proc` of its own, a new file system that no rule
//! made beforehand can name (Landlock's path walk skips the mount point it covers), so it adds
//! the rule for its `/proc` to the ruleset itself before applying it ([`OwnRuleset`]).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, Scope,
    path_beneath_rules,
};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use super::SandboxError;
use super::plan::Plan;
use super::support::Support;
use runner_protocol::Scope as CallScope;

/// The newest Landlock ABI whose rights the ruleset asks for; an older kernel enforces the
/// subset it knows (best effort), which [`Support`] reports.
const ABI_USED: ABI = ABI::V6;

/// The ruleset for a command of `scope` under `plan`.
pub(super) fn ruleset(
    plan: &Plan,
    scope: CallScope,
    support: &Support,
) -> Result<RulesetCreated, SandboxError> {
    build(plan, scope, support).map_err(|e| SandboxError::Landlock(e.to_string()))
}

fn build(plan: &Plan, scope: CallScope, support: &Support) -> Result<RulesetCreated, RulesetError> {
    let created = base(plan, support)?
        .add_rules(rules(&plan.read_grants, read_access(), &plan.writable))?
        .add_rules(path_beneath_rules(&plan.devices, device_access()))?;
    let created = if scope == CallScope::Write {
        created.add_rules(rules(
            &plan.write_grants,
            AccessFs::from_all(ABI_USED),
            &plan.writable,
        ))?
    } else {
        created
    };
    finish(created, plan, support)
}

/// The rules granting `access` beneath each of `paths` that can be opened now (one that
/// cannot is left out). A path inside one of the writable roots `writable` is opened without
/// following a symbolic link anywhere on the way: the plan listed it as a real directory or
/// file, but a command may have put a link in its place since (a task's ruleset is made again
/// after [`SHARED_USES`] commands), and a grant follows the link to wherever it points, a
/// closed credential directory included. Such a path is left out instead. Elsewhere nothing a
/// command runs can write, and paths are opened as given. A rule on a file gets only the
/// rights a file can have.
fn rules<'a>(
    paths: &'a [std::path::PathBuf],
    access: BitFlags<AccessFs>,
    writable: &'a [std::path::PathBuf],
) -> impl Iterator<Item = Result<PathBeneath<OwnedFd>, RulesetError>> + 'a {
    paths.iter().filter_map(move |p| {
        let fd = if writable.iter().any(|w| p.starts_with(w)) {
            open_without_links(p)
        } else {
            rustix::fs::open(p, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()
        }?;
        let dir = rustix::fs::fstat(&fd)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
        let access = if dir {
            access
        } else {
            access & AccessFs::from_file(ABI_USED)
        };
        Some(Ok(PathBeneath::new(fd, access)))
    })
}

/// `path` (absolute) opened as a location only, if no component of it is a symbolic link:
/// `openat2` with `RESOLVE_NO_SYMLINKS`, or where that call is refused (an older seccomp
/// profile), opened without following its last component and kept only if the kernel's
/// name for what was opened is `path` itself.
fn open_without_links(path: &std::path::Path) -> Option<OwnedFd> {
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        flags,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    ) {
        Ok(fd) => Some(fd),
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
            let fd = rustix::fs::open(path, flags | OFlags::NOFOLLOW, Mode::empty()).ok()?;
            let named = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
            (named == path).then_some(fd)
        }
        Err(_) => None,
    }
}

fn read_access() -> BitFlags<AccessFs> {
    AccessFs::from_read(ABI_USED)
}

fn device_access() -> BitFlags<AccessFs> {
    read_access() | AccessFs::WriteFile | AccessFs::IoctlDev
}

/// The created ruleset, with what it handles and no rule yet.
fn base(plan: &Plan, support: &Support) -> Result<RulesetCreated, RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_USED))?;
    let restrict_net = plan.network.restricts() && support.landlock_net();
    if restrict_net {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    if support.landlock_scope() {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    }
    ruleset.create()
}

/// The network rule, last.
fn finish(
    mut created: RulesetCreated,
    plan: &Plan,
    support: &Support,
) -> Result<RulesetCreated, RulesetError> {
    let restrict_net = plan.network.restricts() && support.landlock_net();
    if restrict_net && let Some(port) = plan.network.proxy_port() {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp))?;
    }
    Ok(created)
}

/// A ruleset a command completes with the rule for its own `/proc`, then applies.
pub(super) struct OwnRuleset {
    fd: OwnedFd,
    /// The read rights the kernel handles, for `/proc`.
    proc_access: u64,
    proc: CString,
}

/// After this many commands a shared ruleset is made anew: each command adds a rule for its
/// `/proc` to it (see [`OwnRuleset`]), and every rule is copied again by the next command's
/// `restrict_self`. Making one costs about as much as 1,500 stale rules do in one command's
/// `restrict_self`: 64 keeps the sum of both near its least (at 256, the stale rules cost
/// each command about 60 µs of CPU on average, and a new ruleset about 1 µs).
pub(super) const SHARED_USES: u32 = 64;

impl OwnRuleset {
    /// The ruleset `shared` (a copy of the task's ruleset descriptor: the kernel object is the
    /// same), which the command completes for its own `/proc`.
    ///
    /// The rule a command adds stays in the shared ruleset: later commands get a rule for the
    /// `/proc` of an earlier one, which they cannot reach (it is mounted only in that
    /// command's mount namespace, and its processes are out of their sight). That one rule
    /// per command saves building the ruleset for each (hundreds of rules: every sibling of
    /// the closed and credential paths); the task's sandbox makes a fresh one every
    /// [`SHARED_USES`] commands.
    pub(super) fn new(
        shared: RulesetCreated,
        support: &Support,
    ) -> Result<OwnRuleset, SandboxError> {
        let fd: Option<OwnedFd> = shared.into();
        let fd =
            fd.ok_or_else(|| SandboxError::Landlock("the kernel enforces no ruleset".into()))?;
        let abi = support.landlock_abi.map_or(ABI::Unsupported, |v| {
            ABI::from(i32::try_from(v.min(6)).unwrap_or(6))
        });
        Ok(OwnRuleset {
            fd,
            proc_access: AccessFs::from_read(abi).bits(),
            proc: CString::new("/proc").unwrap_or_default(),
        })
    }
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

impl OwnRuleset {
    /// Add the rule for the command's own `/proc` and restrict the calling process. Runs
    /// between `fork` and `exec`: system calls only.
    pub(super) fn restrict(self) -> std::io::Result<()> {
        const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
        // SAFETY: open, landlock_add_rule, prctl and landlock_restrict_self with a
        // NUL-terminated path, a packed attribute struct of the kernel's layout and descriptors
        // this process holds.
        unsafe {
            let proc = libc::open(
                self.proc.as_ptr(),
                libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
            );
            if proc < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let attr = PathBeneathAttr {
                allowed_access: self.proc_access,
                parent_fd: proc,
            };
            let r = libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            );
            libc::close(proc);
            if r < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, self.fd.as_raw_fd(), 0u32) < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
