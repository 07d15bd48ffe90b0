//! Namespaces of a command's own, where the kernel lets runner make them (runner runs as root,
//! or unprivileged user namespaces are allowed):
//!
//! - a **PID namespace** with its own `/proc`: the command sees no process but its own
//!   descendants, so no other process's `environ`, `cmdline` or memory — runner's ancestors,
//!   the task's MCP servers, a sibling task's commands — whatever uid it runs as; and when the
//!   command ends, every process it left behind (a `setsid` double fork included) is killed
//!   with the namespace;
//! - a **mount namespace** in which every mount is read-only except the writable roots, so
//!   `chmod`, `chown`, `utime` and extended attributes (which Landlock has no right for) fail
//!   outside them.
//!
//! Three processes make one command ([`Namespaces::enter`], between `fork` and `exec`):
//!
//! 1. the *waiter*, runner's direct child and the leader of the command's process group: it
//!    creates the PID namespace (and the user namespace), forks the namespace's init, ignores
//!    the stop signals runner sends the group (the command handles them), and ends the way the
//!    command ended;
//! 2. the *init* (pid 1 of the namespace): it creates the mount namespace, mounts the
//!    namespace's `/proc`, makes the mounts read-only, forks the command, reaps orphans while
//!    it runs, and when it ends kills what is left, notes on stderr how many it stopped, leaves
//!    the command's process group and tells the waiter how the command ended;
//! 3. the *command* (pid 2): it goes on to the rest of the confinement (capabilities, Landlock,
//!    seccomp) and `exec`.
//!
//! The kernel retires a mount namespace, when the last process in it ends, only after an RCU
//! grace period: several milliseconds, most of what the namespaces would cost a command. The
//! init alone holds the mount namespace and ends last, out of the command's process group, so
//! neither runner's wait for the command nor its orphan sweep (which kills the init of a PID
//! namespace without waiting for it: killing it kills all that is left in the namespace)
//! waits for that.
//!
//! Everything here runs between `fork` and `exec` of a multi-threaded process: system calls
//! only, no allocation (the paths are made beforehand).

use std::ffi::CString;
use std::io;

/// The namespaces one command enters: made in the parent, entered in the child.
pub(crate) struct Namespaces {
    /// Whether a user namespace comes first (runner is not root).
    user: bool,
    /// runner's uid and gid, mapped onto themselves in a user namespace.
    ids: (u32, u32),
    /// Paths left writable in the mount namespace, bind-mounted onto themselves.
    writable: Vec<CString>,
    /// `/proc/self/uid_map`, `/proc/self/gid_map`, `/proc/self/setgroups`, `/`, `/proc`,
    /// `proc`, made before the fork.
    fixed: Fixed,
}

struct Fixed {
    uid_map: CString,
    gid_map: CString,
    setgroups: CString,
    root: CString,
    proc_dir: CString,
    proc_fs: CString,
}

impl Namespaces {
    /// The namespaces for a command whose writable paths are `writable` (the paths that do
    /// not exist are left out: a bind mount needs its target); `user`: made through a user
    /// namespace (runner is not root).
    pub(crate) fn new(user: bool, writable: &[std::path::PathBuf]) -> Namespaces {
        use std::os::unix::ffi::OsStrExt;
        let c = |s: &str| CString::new(s).unwrap_or_default();
        // SAFETY: getuid and getgid cannot fail.
        let ids = unsafe { (libc::getuid(), libc::getgid()) };
        Namespaces {
            user,
            ids,
            writable: writable
                .iter()
                .filter(|p| p.exists())
                .filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok())
                .collect(),
            fixed: Fixed {
                uid_map: c("/proc/self/uid_map"),
                gid_map: c("/proc/self/gid_map"),
                setgroups: c("/proc/self/setgroups"),
                root: c("/"),
                proc_dir: c("/proc"),
                proc_fs: c("proc"),
            },
        }
    }

    /// Enter the namespaces. Runs in the child between `fork` and `exec`; returns only in
    /// the process that goes on to `exec` the command (pid 2 of the namespace). An error
    /// before the namespace's init exists is returned; the init's own errors are returned in
    /// the init (which then never forks the command), so the spawn fails either way.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // The waiter makes the PID namespace (and the user namespace) only: the mount namespace
        // is the init's alone, so that the init is the last process to hold it and the one
        // that retires it (see [`init_loop`]).
        let mut flags = libc::CLONE_NEWPID;
        if self.user {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: unshare takes no pointers.
        check(unsafe { libc::unshare(flags) })?;
        if self.user {
            self.map_ids()?;
        }
        let mut status = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        check(unsafe { libc::pipe2(status.as_mut_ptr(), libc::O_CLOEXEC) })?;
        // SAFETY: fork in the child of a fork; both sides go on with system calls only.
        let init = check(unsafe { libc::fork() })?;
        if init > 0 {
            waiter(init, status[0], status[1]);
        }
        // The namespace's init from here on.
        // SAFETY: closing our copy of the waiter's end; prctl takes no pointers.
        unsafe {
            libc::close(status[0]);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        }
        // SAFETY: unshare takes no pointers.
        check(unsafe { libc::unshare(libc::CLONE_NEWNS) })?;
        self.mounts()?;
        // SAFETY: as above.
        let command = check(unsafe { libc::fork() })?;
        if command == 0 {
            // SAFETY: the command does not keep the init's end of the status pipe.
            unsafe { libc::close(status[1]) };
            return Ok(());
        }
        init_loop(command, status[1]);
    }

    /// Map runner's uid and gid onto themselves in the new user namespace.
    fn map_ids(&self) -> io::Result<()> {
        let f = &self.fixed;
        write_file(&f.setgroups, b"deny")?;
        let mut buf = [0u8; 48];
        let n = id_map(&mut buf, self.ids.0);
        write_file(&f.uid_map, &buf[..n])?;
        let n = id_map(&mut buf, self.ids.1);
        write_file(&f.gid_map, &buf[..n])?;
        Ok(())
    }

    /// Private mounts, read-only but for the writable paths, and the namespace's own `/proc`.
    fn mounts(&self) -> io::Result<()> {
        let f = &self.fixed;
        let none = std::ptr::null::<libc::c_char>();
        // SAFETY: mount with NUL-terminated paths made before the fork, or null.
        unsafe {
            check(libc::mount(
                none,
                f.root.as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for w in &self.writable {
                check(libc::mount(
                    w.as_ptr(),
                    w.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
        }
        mount_setattr(&f.root, MOUNT_ATTR_RDONLY, 0)?;
        for w in &self.writable {
            mount_setattr(w, 0, MOUNT_ATTR_RDONLY)?;
        }
        // The working directory was entered before the mounts: enter it again by its path, so
        // that it lies on the (writable) bind mount rather than the read-only mount below it.
        let mut cwd = [0u8; 4096];
        // SAFETY: getcwd and chdir with our own buffer, NUL-terminated by getcwd.
        unsafe {
            if !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
                check(libc::chdir(cwd.as_ptr().cast()))?;
            }
        }
        // SAFETY: as above.
        check(unsafe {
            libc::mount(
                f.proc_fs.as_ptr(),
                f.proc_dir.as_ptr(),
                f.proc_fs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        })?;
        Ok(())
    }
}

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Set and clear mount attributes on `path` and every mount below it.
fn mount_setattr(path: &CString, set: u64, clear: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    // SAFETY: a NUL-terminated path and a mount_attr of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The waiter: runner's child. Keeps only the read end of the status pipe, ignores the stop
/// signals runner sends the group, and ends as the command ended. Never returns.
fn waiter(init: libc::pid_t, read_end: libc::c_int, write_end: libc::c_int) -> ! {
    // SAFETY: system calls on the waiter's own descriptors, signal dispositions and children.
    unsafe {
        libc::close(write_end);
        close_all_but(read_end);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let mut buf = [0u8; 4];
        if read_full(read_end, &mut buf) {
            // The init has stopped every process of the namespace and left the command's
            // process group. Its exit, which retires the mount namespace (waiting for an RCU
            // grace period, several milliseconds), is not waited for: runner's orphan sweep
            // finds it as the init of a PID namespace, with nothing left in it.
            end_as(libc::c_int::from_ne_bytes(buf))
        }
        // The init was killed before the command ended (runner's SIGKILL of the group).
        let mut init_status: libc::c_int = 0;
        while libc::waitpid(init, &mut init_status, 0) < 0 && errno() == libc::EINTR {}
        end_as(init_status)
    }
}

/// End the calling process the way a process with wait status `status` ended.
///
/// # Safety
///
/// Only between fork and exec, in a process with no other thread.
unsafe fn end_as(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: restoring the default action and raising the signal at ourselves.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
        }
        // SAFETY: _exit is always safe.
        unsafe { libc::_exit(128 + sig) }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        1
    };
    // SAFETY: _exit is always safe.
    unsafe { libc::_exit(code) }
}

/// The namespace's init once the command runs: reap every child until the command ends, then
/// kill what is left, say on stderr how many there were, and tell the waiter. Never returns.
fn init_loop(command: libc::pid_t, status_end: libc::c_int) -> ! {
    // SAFETY: system calls on the init's own descriptors and children.
    unsafe {
        close_from(3, status_end);
        let mut status: libc::c_int = 0;
        loop {
            let mut st: libc::c_int = 0;
            let r = libc::waitpid(-1, &mut st, 0);
            if r == command {
                status = st;
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                break;
            }
        }
        // kill(-1) from a namespace's init reaches every other process of the namespace; from
        // any other process it would reach every process the caller may signal, on the whole
        // machine for root: only pid 1 of a namespace sends it.
        if libc::getpid() == 1 {
            libc::kill(-1, libc::SIGKILL);
        }
        let mut left: u32 = 0;
        loop {
            let r = libc::waitpid(-1, std::ptr::null_mut(), 0);
            if r > 0 {
                left += 1;
            } else if errno() != libc::EINTR {
                break;
            }
        }
        if left > 0 {
            note_left_behind(left);
        }
        // Nothing of the namespace holds the output pipes any more when the waiter ends.
        for fd in 0..3 {
            libc::close(fd);
        }
        // Out of the command's process group: runner, which waits until no process of the
        // group runs, does not wait for this one's exit (the mount namespace is retired in it).
        // The command and all it started are gone; the group's kill no longer needs to reach
        // the init, which dies with the waiter anyway (its parent-death signal).
        libc::setpgid(0, 0);
        let bytes = status.to_ne_bytes();
        libc::write(status_end, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// Tell the command's stderr (and so its caller) that `n` processes outlived it.
fn note_left_behind(n: u32) {
    let mut buf = [0u8; 128];
    let mut len = 0;
    let mut put = |b: &[u8]| {
        let end = (len + b.len()).min(buf.len());
        buf[len..end].copy_from_slice(&b[..end - len]);
        len = end;
    };
    put(b"\n[runner] this command left ");
    let mut digits = [0u8; 10];
    put(decimal(&mut digits, n));
    put(if n == 1 {
        b" process running; it was stopped when the command ended\n"
    } else {
        b" processes running; they were stopped when the command ended\n"
    });
    // SAFETY: writing our own buffer to stderr.
    unsafe { libc::write(2, buf.as_ptr().cast(), len) };
}

/// `n` in decimal, in `buf`.
fn decimal(buf: &mut [u8; 10], mut n: u32) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    &buf[i..]
}

/// `"ID ID 1"` into `buf`: map one id onto itself. Returns the length.
fn id_map(buf: &mut [u8; 48], id: u32) -> usize {
    let mut digits = [0u8; 10];
    let d = decimal(&mut digits, id);
    let mut len = 0;
    for part in [d, b" ", d, b" 1"] {
        buf[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    len
}

fn write_file(path: &CString, data: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close with a NUL-terminated path and our own buffer.
    unsafe {
        let fd = check(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?;
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

/// Read exactly `buf.len()` bytes; false on end of file or error.
///
/// # Safety
///
/// `fd` is a descriptor the caller owns.
unsafe fn read_full(fd: libc::c_int, buf: &mut [u8]) -> bool {
    let mut at = 0;
    while at < buf.len() {
        // SAFETY: reading into the unfilled part of `buf`.
        let n = unsafe { libc::read(fd, buf[at..].as_mut_ptr().cast(), buf.len() - at) };
        if n > 0 {
            at += n as usize;
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// Close every descriptor but `keep`.
///
/// # Safety
///
/// Only in a process that needs no other descriptor.
unsafe fn close_all_but(keep: libc::c_int) {
    // SAFETY: close_range takes no pointers.
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
    }
}

/// Close every descriptor from `from` on, but `keep`.
///
/// # Safety
///
/// Only in a process that needs no such descriptor.
unsafe fn close_from(from: libc::c_int, keep: libc::c_int) {
    // SAFETY: close_range takes no pointers.
    unsafe {
        if keep > from {
            libc::syscall(libc::SYS_close_range, from as u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(
            libc::SYS_close_range,
            (keep.max(from - 1) + 1) as u32,
            u32::MAX,
            0u32,
        );
    }
}

fn errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn check<T: Copy + PartialOrd + Default>(r: T) -> io::Result<T> {
    if r < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_id_maps_are_written_without_allocation() {
        let mut d = [0u8; 10];
        assert_eq!(decimal(&mut d, 0), b"0");
        assert_eq!(decimal(&mut d, 4294967295), b"4294967295");
        let mut buf = [0u8; 48];
        let n = id_map(&mut buf, 1001);
        assert_eq!(&buf[..n], b"1001 1001 1");
    }
}
