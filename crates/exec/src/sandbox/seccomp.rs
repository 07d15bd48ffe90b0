//! The seccomp filter of confined commands. Landlock confines files and TCP; this closes what
//! it does not see: other processes' memory (`ptrace`, `process_vm_*`), syscall interfaces
//! that bypass socket filtering (`io_uring`), kernel keyrings, mounts and namespaces, Unix
//! sockets, and — when the network is restricted — every socket but plain TCP to the egress
//! proxy (no UDP, so no DNS; no raw, netlink, MPTCP or SCTP sockets), and TCP Fast Open (a
//! connect hidden in `sendto`). A denied call fails with EPERM.
//!
//! Unix sockets: Landlock does not check `connect` on a socket file, so a command could reach
//! the Docker daemon (`/var/run/docker.sock`, root on the machine), the SSH agent or the
//! session bus whatever its file rules. A filter cannot see the path `connect` is given:
//! where the kernel has seccomp user notifications, runner's supervisor checks it
//! ([`super::unix_sockets`]) and this filter refuses only datagram Unix sockets (which name a
//! peer in every send); elsewhere `socket(AF_UNIX)` is refused altogether unless the spec
//! opts sockets in (`sandbox.unix_sockets`). `socketpair`, which makes an unnamed,
//! already-connected pair, stays allowed for stream and seqpacket sockets.
//!
//! It also keeps commands from acting on other processes where Landlock's scopes do not reach
//! (signal scoping needs Landlock ABI 6; resource limits and priorities have no scope at all):
//! no signal or pidfd aimed at runner, its ancestors, its process group or every process
//! (`kill(-1)`); no resource limit, priority, scheduling or memory placement set on another
//! process (only on the caller itself: pid 0); and no `TIOCSTI`/`TIOCLINUX`, which push input
//! into a terminal (commands have no controlling terminal besides).

use std::collections::BTreeMap;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::SandboxError;
use super::plan::Network;
use super::support::Support;

/// What confined commands may do with Unix sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UnixSockets {
    /// No `socket(AF_UNIX)`; `socketpair` for stream and seqpacket pairs only.
    Refused,
    /// Stream and seqpacket sockets, whose `connect` runner's supervisor checks; no datagram
    /// Unix socket.
    Supervised,
    /// Any Unix socket (the spec lists sockets and the kernel cannot supervise `connect`).
    Any,
}

/// The filter for commands with network `network`; `protected`: the processes no command may
/// signal (runner, its ancestors, and a negative process group id for runner's group).
pub(super) fn program(
    network: &Network,
    support: &Support,
    protected: &[i32],
    unix_sockets: UnixSockets,
) -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    build(network, support, protected, unix_sockets, arch)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))
}

fn build(
    network: &Network,
    support: &Support,
    protected: &[i32],
    unix_sockets: UnixSockets,
    arch: TargetArch,
) -> Result<BpfProgram, BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        // Mounts and namespaces: a command keeps the view of the file system and of the
        // processes it was given.
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_setns,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
    ] {
        rules.insert(nr, vec![]);
    }
    other_processes(&mut rules, protected)?;
    let socket = socket_rules(network, support, unix_sockets)?;
    if !socket.is_empty() {
        rules.insert(libc::SYS_socket, socket);
    }
    if unix_sockets != UnixSockets::Any {
        rules.insert(libc::SYS_socketpair, vec![unix_datagram()?]);
    }
    if network.restricts() {
        // TCP Fast Open connects inside sendto/sendmsg, past a connect filter.
        let fastopen = libc::MSG_FASTOPEN as u64;
        rules.insert(
            libc::SYS_sendto,
            vec![SeccompRule::new(vec![cond(
                3,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(fastopen),
                fastopen,
            )?])?],
        );
        rules.insert(
            libc::SYS_sendmsg,
            vec![SeccompRule::new(vec![cond(
                2,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(fastopen),
                fastopen,
            )?])?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    filter.try_into()
}

/// `socket(AF_UNIX, SOCK_DGRAM, …)` (the type argument may carry `SOCK_NONBLOCK` and
/// `SOCK_CLOEXEC`), for `socket` and `socketpair` alike.
fn unix_datagram() -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![
        cond(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )?,
        cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(0xf),
            libc::SOCK_DGRAM as u64,
        )?,
    ])
}

/// `socket(domain, type, protocol)` calls to deny. Unix sockets as `unix_sockets` says; with
/// the network restricted, every other family too — but with an egress proxy (and Landlock
/// able to limit TCP to its port), IPv4/IPv6 stream sockets of plain TCP stay allowed, and only
/// those: Landlock's TCP rules do not see other stream protocols (MPTCP, SCTP), so a stream
/// socket asking for any protocol but 0 or TCP is refused.
fn socket_rules(
    network: &Network,
    support: &Support,
    unix_sockets: UnixSockets,
) -> Result<Vec<SeccompRule>, BackendError> {
    let domain = |op, v: i32| cond(0, SeccompCmpArgLen::Dword, op, v as u64);
    let mut rules = Vec::new();
    match unix_sockets {
        UnixSockets::Refused => rules.push(SeccompRule::new(vec![domain(
            SeccompCmpOp::Eq,
            libc::AF_UNIX,
        )?])?),
        UnixSockets::Supervised => rules.push(unix_datagram()?),
        UnixSockets::Any => {}
    }
    if !network.restricts() {
        return Ok(rules);
    }
    let tcp_through_proxy = network.proxy_port().is_some() && support.landlock_net();
    if !tcp_through_proxy {
        rules.push(SeccompRule::new(vec![domain(
            SeccompCmpOp::Ne,
            libc::AF_UNIX,
        )?])?);
        return Ok(rules);
    }
    rules.push(SeccompRule::new(vec![
        domain(SeccompCmpOp::Ne, libc::AF_UNIX)?,
        domain(SeccompCmpOp::Ne, libc::AF_INET)?,
        domain(SeccompCmpOp::Ne, libc::AF_INET6)?,
    ])?);
    // Any type but SOCK_STREAM (the type argument may carry SOCK_NONBLOCK | SOCK_CLOEXEC), and
    // any protocol but the default (0) and TCP.
    for family in [libc::AF_INET, libc::AF_INET6] {
        rules.push(SeccompRule::new(vec![
            domain(SeccompCmpOp::Eq, family)?,
            cond(2, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?,
            cond(
                2,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::IPPROTO_TCP as u64,
            )?,
        ])?);
        for kind in [
            libc::SOCK_DGRAM,
            libc::SOCK_RAW,
            libc::SOCK_RDM,
            libc::SOCK_SEQPACKET,
        ] {
            rules.push(SeccompRule::new(vec![
                domain(SeccompCmpOp::Eq, family)?,
                cond(
                    1,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(0xf),
                    kind as u64,
                )?,
            ])?);
        }
    }
    Ok(rules)
}

/// The rules that keep a command from acting on processes other than its own.
fn other_processes(
    rules: &mut BTreeMap<i64, Vec<SeccompRule>>,
    protected: &[i32],
) -> Result<(), BackendError> {
    let is = |arg: u8, v: i64| {
        cond(
            arg,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            v as i32 as u32 as u64,
        )
    };
    let not_zero = |arg: u8| cond(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0);
    // Signals and pidfds aimed at runner, its ancestors or its group; kill(-1) signals every
    // process the caller may signal.
    let mut targets: Vec<i64> = protected.iter().map(|p| i64::from(*p)).collect();
    targets.push(-1);
    // tkill names a thread alone, and any thread's id reaches its process: obsolete (libc uses
    // tgkill), so refused outright.
    rules.insert(libc::SYS_tkill, vec![]);
    for nr in [
        libc::SYS_kill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
        libc::SYS_pidfd_open,
    ] {
        let mut list = Vec::with_capacity(targets.len());
        for t in &targets {
            list.push(SeccompRule::new(vec![is(0, *t)?])?);
        }
        rules.insert(nr, list);
    }
    // Limits, priorities, scheduling and memory placement of another process (pid 0 is the
    // caller). prlimit64 may still read another process's limits (no new limit given).
    rules.insert(
        libc::SYS_prlimit64,
        vec![SeccompRule::new(vec![not_zero(0)?, not_zero(2)?])?],
    );
    for nr in [
        libc::SYS_sched_setattr,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setaffinity,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
    ] {
        rules.insert(nr, vec![SeccompRule::new(vec![not_zero(0)?])?]);
    }
    // setpriority(which, who) and ioprio_set(which, who): another process or group, or a whole
    // user (runner's uid among them).
    rules.insert(
        libc::SYS_setpriority,
        vec![
            SeccompRule::new(vec![not_zero(1)?])?,
            SeccompRule::new(vec![is(0, i64::from(libc::PRIO_USER))?])?,
        ],
    );
    const IOPRIO_WHO_USER: i64 = 3;
    rules.insert(
        libc::SYS_ioprio_set,
        vec![
            SeccompRule::new(vec![not_zero(1)?])?,
            SeccompRule::new(vec![is(0, IOPRIO_WHO_USER)?])?,
        ],
    );
    // Input pushed into a terminal.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            SeccompRule::new(vec![is(1, libc::TIOCSTI as i64)?])?,
            SeccompRule::new(vec![is(1, libc::TIOCLINUX as i64)?])?,
        ],
    );
    Ok(())
}

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, len, op, value)
}
