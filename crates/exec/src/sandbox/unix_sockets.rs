//! The supervisor of confined commands' Unix socket connections: a second seccomp filter
//! sends every `connect` of a confined command to runner (a user notification); one thread
//! per task reads the address from the command's memory, resolves it ([`SocketRules`]) and
//! lets the call go on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) or fails it with `EACCES`.
//!
//! - The filter is installed by the command itself, between `fork` and `exec`, with
//!   `SECCOMP_FILTER_FLAG_NEW_LISTENER`; the command passes the listener to the supervisor
//!   over a socket pair made when the task starts (`SCM_RIGHTS`) and closes its own copy.
//!   That pass is a `sendmsg`, which the filter leaves alone: only `connect` is sent to runner.
//! - Datagram Unix sockets are refused by the main filter (`socket` and `socketpair`): a
//!   datagram socket names its peer in every `sendto`/`sendmsg`, which no filter can see.
//!   Stream and seqpacket sockets name it in `connect` alone (they ignore or refuse an address
//!   given to a send), and naming one with `bind` is a file creation Landlock already holds to
//!   the writable roots.
//! - When the supervisor is gone (runner killed, the task over), the kernel fails the
//!   commands' `connect` with `ENOSYS`: a command never hangs on it.
//! - The kernel reads the address again after runner let the call go on: a second thread of
//!   the command (or a second process sharing its memory) can change it in between. The check
//!   holds programs that connect the ordinary way, not one built to race it (see the threat
//!   model in the docs).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;

use super::socket_paths::{Address, SocketRules, address};

/// `struct sockaddr_un`'s size: no longer address names a Unix socket.
const SOCKADDR_UN_LEN: usize = std::mem::size_of::<libc::sockaddr_un>();

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// Whether this build and kernel can supervise connections (user notifications: Linux 5.0,
/// `CONTINUE` 5.5; runner's Landlock floor is 5.13).
pub(crate) fn available() -> bool {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return false;
    }
    let action: u32 = libc::SECCOMP_RET_USER_NOTIF;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads the u32 it is given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    r == 0
}

/// The filter that sends `connect` to runner. On x86-64 it also refuses the x32 system call
/// numbers, which would name `connect` (and the main filter's calls) by other numbers.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn notify_filter() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u16, k: u32, jt: u8, jf: u8| libc::sock_filter { code, jt, jf, k };
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    // offsetof(struct seccomp_data, nr) = 0, arch = 4.
    vec![
        stmt(LD_W_ABS, 4),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, refuse),
        stmt(LD_W_ABS, 0),
        jump(
            JGE_K,
            if cfg!(target_arch = "x86_64") {
                0x4000_0000
            } else {
                u32::MAX
            },
            0,
            1,
        ),
        stmt(RET_K, refuse),
        jump(JEQ_K, libc::SYS_connect as u32, 0, 1),
        stmt(RET_K, libc::SECCOMP_RET_USER_NOTIF),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
    ]
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn notify_filter() -> Vec<libc::sock_filter> {
    Vec::new()
}

/// A task's supervisor: the thread that answers its commands' `connect` calls, and the end of
/// the socket pair commands pass their listener on. Dropping it ends the thread (and with it
/// every listener: commands still running then get `ENOSYS` from `connect`).
pub(crate) struct Supervisor {
    handoff: Arc<Handoff>,
}

/// What a command needs to hand its listener over: the filter and the pair's sending end.
pub(crate) struct Handoff {
    filter: Vec<libc::sock_filter>,
    send: OwnedFd,
}

impl Supervisor {
    /// Start the supervisor of one task with `rules`.
    pub(crate) fn start(rules: SocketRules) -> std::io::Result<Supervisor> {
        let mut pair = [0 as libc::c_int; 2];
        // SAFETY: socketpair writes two descriptors into the array.
        let r = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made and are owned here alone.
        let (recv, send) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        std::thread::Builder::new()
            .name("runner-unix-sockets".into())
            .spawn(move || serve(recv, &rules))?;
        Ok(Supervisor {
            handoff: Arc::new(Handoff {
                filter: notify_filter(),
                send,
            }),
        })
    }

    /// What each command takes into its `fork`.
    pub(crate) fn handoff(&self) -> Arc<Handoff> {
        self.handoff.clone()
    }
}

impl Handoff {
    /// Install the notifying filter on the calling process and pass its listener to the
    /// supervisor. Runs in the child between `fork` and `exec`, after the main filter (and so
    /// after `no_new_privs`): system calls only, no allocation.
    pub(crate) fn enter(&self) -> std::io::Result<()> {
        let prog = libc::sock_fprog {
            len: u16::try_from(self.filter.len())
                .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?,
            filter: self.filter.as_ptr() as *mut libc::sock_filter,
        };
        if prog.len == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
        }
        // SAFETY: the program outlives the call; the kernel copies it.
        let listener = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            )
        };
        if listener < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let listener = listener as RawFd;
        let sent = send_fd(self.send.as_raw_fd(), listener);
        // SAFETY: the listener is this process's; the supervisor has its own copy.
        unsafe { libc::close(listener) };
        sent
    }
}

/// Send `fd` over the connected socket `sock` (one byte of data, the descriptor as
/// `SCM_RIGHTS`). No allocation.
fn send_fd(sock: RawFd, fd: RawFd) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Room for one descriptor's control message, aligned for cmsghdr.
    let mut control = [0u64; 4];
    // SAFETY: zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    // SAFETY: CMSG_SPACE computes a size.
    msg.msg_controllen = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as _;
    // SAFETY: the control buffer is large enough for one header and one descriptor.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
    }
    loop {
        // SAFETY: msg points at live buffers.
        let r = unsafe { libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) };
        if r >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Receive one descriptor sent by [`send_fd`] (close-on-exec). `Ok(None)`: the sending end is
/// closed.
fn recv_fd(sock: RawFd) -> std::io::Result<Option<OwnedFd>> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 4];
    // SAFETY: zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at live buffers.
    let r = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if r == 0 {
        return Ok(None);
    }
    // SAFETY: the kernel filled the control buffer it was given.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(std::io::Error::from_raw_os_error(libc::EBADMSG));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(Some(OwnedFd::from_raw_fd(fd)))
    }
}

/// The supervisor's loop: new listeners from `recv`, notifications from every listener, until
/// the task's end of the pair is closed. Every listener is closed when it returns.
fn serve(recv: OwnedFd, rules: &SocketRules) {
    let mut listeners: Vec<OwnedFd> = Vec::new();
    let mut polled: Vec<libc::pollfd> = Vec::new();
    loop {
        polled.clear();
        polled.push(libc::pollfd {
            fd: recv.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        polled.extend(listeners.iter().map(|l| libc::pollfd {
            fd: l.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        // SAFETY: the array holds `polled.len()` entries.
        let r = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, -1) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            tracing::warn!(
                "the Unix socket supervisor stopped: {}",
                std::io::Error::last_os_error()
            );
            return;
        }
        let mut gone = Vec::new();
        for (i, p) in polled.iter().enumerate().skip(1) {
            if p.revents & libc::POLLIN != 0 {
                answer(p.fd, rules);
            } else if p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                // Every process of the command is gone.
                gone.push(i - 1);
            }
        }
        for i in gone.into_iter().rev() {
            listeners.swap_remove(i);
        }
        let head = polled[0].revents;
        if head & libc::POLLIN != 0 {
            match recv_fd(recv.as_raw_fd()) {
                Ok(Some(l)) => listeners.push(l),
                Ok(None) => return,
                Err(e) => tracing::debug!("a listener was not received: {e}"),
            }
        } else if head & (libc::POLLHUP | libc::POLLERR) != 0 {
            return;
        }
    }
}

/// Answer one notification of `listener`.
fn answer(listener: RawFd, rules: &SocketRules) {
    // SAFETY: a zeroed seccomp_notif is what NOTIF_RECV expects.
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl fills `req`.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } < 0 {
        // ENOENT: the caller was interrupted or died in the meantime.
        return;
    }
    let allowed = decide(&req, rules);
    // The caller may have died and its pid been reused since the notification: what was
    // read is then not its memory, and nothing is answered.
    let mut id = req.id;
    // SAFETY: the ioctl reads the id.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) } < 0 {
        return;
    }
    let mut resp = libc::seccomp_notif_resp {
        id: req.id,
        val: 0,
        error: 0,
        flags: 0,
    };
    if allowed {
        resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32;
    } else {
        resp.error = -libc::EACCES;
    }
    // SAFETY: the ioctl reads `resp`. A failure (the caller gone) needs no answer.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

/// Whether the `connect` of notification `req` may go on.
fn decide(req: &libc::seccomp_notif, rules: &SocketRules) -> bool {
    if i64::from(req.data.nr) != libc::SYS_connect {
        return true;
    }
    let pid = req.pid as libc::pid_t;
    let (ptr, len) = (req.data.args[1], req.data.args[2] as usize);
    let mut buf = [0u8; SOCKADDR_UN_LEN];
    let want = len.min(buf.len());
    let Some(got) = read_memory(pid, ptr, &mut buf[..want]) else {
        // Unreadable (a bad pointer, or a program that made itself undumpable while runner
        // has no right over it): refused, since it could be a Unix socket.
        tracing::debug!(pid, "a connect address could not be read: refused");
        return false;
    };
    let addr = address(&buf[..got]);
    if matches!(addr, Address::OtherFamily | Address::Unnamed) {
        return true;
    }
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    let cwd: Option<PathBuf> = cwd.filter(|c| c.is_absolute());
    let ok = rules.allows(&addr, cwd.as_deref());
    if !ok {
        tracing::debug!(pid, address = ?addr, "a connection to a Unix socket outside the sandbox was refused");
    }
    ok
}

/// Read `buf.len()` bytes at `ptr` of process `pid`; the number read.
fn read_memory(pid: libc::pid_t, ptr: u64, buf: &mut [u8]) -> Option<usize> {
    if buf.is_empty() {
        return Some(0);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: ptr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the local buffer is ours and `buf.len()` long; the remote one is only read.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    usize::try_from(n).ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::*;

    fn python3() -> bool {
        std::path::Path::new("/usr/bin/python3").exists()
    }

    /// A confined-like child (no_new_privs, then the notifying filter handed to a supervisor)
    /// that connects to `path` once `go` exists; prints `connected` or the errno's name.
    fn child(handoff: Arc<Handoff>, path: &str, go: &str) -> Command {
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.arg("-c").arg(format!(
            "import os, time, socket, errno\nwhile not os.path.exists('{go}'): time.sleep(0.01)\ntry:\n    socket.socket(socket.AF_UNIX).connect('{path}'); print('connected')\nexcept OSError as e:\n    print(errno.errorcode.get(e.errno))"
        ));
        // SAFETY: prctl and `enter` make system calls only.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                handoff.enter()
            });
        }
        cmd
    }

    #[test]
    fn the_supervisor_decides_and_a_command_never_hangs_once_it_is_gone() {
        if !available() || !python3() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let inside = root.join("in");
        std::fs::create_dir(&inside).unwrap();
        let ok = inside.join("ok.sock");
        let out = root.join("out.sock");
        let _l = [&ok, &out].map(|p| std::os::unix::net::UnixListener::bind(p).unwrap());
        let go = root.join("go");
        std::fs::write(&go, "").unwrap();
        let sup =
            Supervisor::start(SocketRules::new(std::slice::from_ref(&inside), &[], false)).unwrap();
        for (path, want) in [(&ok, "connected"), (&out, "EACCES")] {
            let o = child(sup.handoff(), path.to_str().unwrap(), go.to_str().unwrap())
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), want);
        }
        // The supervisor ends while a command waits to connect: the kernel fails the call.
        std::fs::remove_file(&go).unwrap();
        let mut cmd = child(sup.handoff(), ok.to_str().unwrap(), go.to_str().unwrap());
        let waiting = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
        drop(cmd);
        drop(sup);
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::write(&go, "").unwrap();
        let o = waiting.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "ENOSYS");
    }
}
