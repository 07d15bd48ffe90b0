//! The seccomp filter of confined commands. Landlock confines files and TCP; this closes what
//! it does not see: other processes' memory (`ptrace`, `process_vm_*`), syscall interfaces
//! that bypass socket filtering (`io_uring`), kernel keyrings, and — when the network is
//! restricted — every socket that is not a Unix socket (no UDP, so no DNS; no raw or netlink
//! sockets), and TCP Fast Open (a connect hidden in `sendto`). A denied call fails with EPERM.

use std::collections::BTreeMap;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::SandboxError;
use super::plan::Network;
use super::support::Support;

/// The filter for commands with network `network`.
pub(super) fn program(network: &Network, support: &Support) -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    build(network, support, arch).map_err(|e| SandboxError::Seccomp(e.to_string()))
}

fn build(
    network: &Network,
    support: &Support,
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
    ] {
        rules.insert(nr, vec![]);
    }
    if network.restricts() {
        rules.insert(libc::SYS_socket, socket_rules(network, support)?);
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

/// `socket(domain, type, protocol)` calls to deny: every family but Unix sockets; with an
/// egress proxy (and Landlock able to limit TCP to its port), IPv4/IPv6 stream sockets of
/// plain TCP stay allowed — and only those: Landlock's TCP rules do not see other stream
/// protocols (MPTCP, SCTP), so a stream socket asking for any protocol but 0 or TCP is refused.
fn socket_rules(network: &Network, support: &Support) -> Result<Vec<SeccompRule>, BackendError> {
    let domain = |op, v: i32| cond(0, SeccompCmpArgLen::Dword, op, v as u64);
    let tcp_through_proxy = network.proxy_port().is_some() && support.landlock_net();
    if !tcp_through_proxy {
        return Ok(vec![SeccompRule::new(vec![domain(
            SeccompCmpOp::Ne,
            libc::AF_UNIX,
        )?])?]);
    }
    let mut rules = vec![SeccompRule::new(vec![
        domain(SeccompCmpOp::Ne, libc::AF_UNIX)?,
        domain(SeccompCmpOp::Ne, libc::AF_INET)?,
        domain(SeccompCmpOp::Ne, libc::AF_INET6)?,
    ])?];
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

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, len, op, value)
}
