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
//!    makes the namespaces (PID, mount, and user when runner is not root) and every mount
//!    but `/proc`, starts the init and the command, ignores the stop signals runner
//!    sends the group (the command handles them), waits for the command, and ends the way it
//!    ended;
//! 2. the *init* (pid 1 of the namespace): a `clone` sharing the waiter's memory and
//!    descriptors (no page tables copied), out of the command's process group, that only
//!    reaps orphans; asked by the waiter when the command has ended with processes still
//!    running, it kills them, and tells the waiter how many;
//! 3. the *command* (pid 2, the waiter's child): started as `vfork` starts a child, sharing the
//!    waiter's memory (no page tables copied, no page of runner's copied on write) on a stack
//!    of its own while the waiter waits for its `exec`; it mounts the namespace's `/proc`, goes
//!    on to the rest of the confinement (capabilities, Landlock, seccomp) and `exec`s the
//!    program itself, from an [`super::exec_image::ExecImage`] runner made beforehand (it
//!    cannot return into the code that forked the waiter: that is the waiter's).
//!
//! When the command ends the waiter looks at the init's children: none running (the usual
//! case) and it ends at once; otherwise the init stops them first, and the command's stderr
//! says how many there were. The init dies with the waiter (its parent-death signal), and
//! with it whatever is left in the namespace.
//!
//! The kernel retires a mount namespace, when the last process in it ends, only after an RCU
//! grace period: several milliseconds, most of what the namespaces would cost a command. The
//! init, out of the command's process group, always ends last (after the waiter), so neither
//! runner's wait for the command nor its orphan sweep (which kills the init of a PID namespace
//! without waiting for it) waits for that.
//!
//! Everything here runs between `fork` and `exec` of a multi-threaded process: system calls
//! only, no allocation (the paths and the program's image are made beforehand).

use std::convert::Infallible;
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
        // The stacks every waiter inherits (when they cannot be made, entering fails).
        let _ = Stacks::made();
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

    /// Enter the namespaces and start the command in them. Runs in the child between `fork`
    /// and `exec` (which becomes the waiter); `start` runs in the command (pid 2 of the
    /// namespace) once its `/proc` is mounted, and returns only with the error that kept it
    /// from `exec`ing. Returns only with an error (the waiter's own, or the command's before
    /// its `exec`), so the spawn fails either way; once the command runs, the waiter waits
    /// for it and ends the way it ended.
    pub(crate) fn enter(&self, start: &mut dyn FnMut() -> io::Error) -> io::Result<Infallible> {
        let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if self.user {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: unshare takes no pointers.
        check(unsafe { libc::unshare(flags) })?;
        if self.user {
            self.map_ids()?;
        }
        self.mounts()?;
        // The init's wake-ups: blocked before it exists, so none is lost before it waits for
        // them (an init drops a signal it neither handles nor blocks). The command unblocks
        // them again.
        let wakeups = init_signals();
        // SAFETY: sigprocmask with a set on our stack.
        check(unsafe { libc::sigprocmask(libc::SIG_BLOCK, &wakeups, std::ptr::null_mut()) })?;
        let mut report = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        check(unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) })?;
        let stacks = Stacks::inherited()?;
        let init = start_init(report[1], stacks.init as *mut libc::c_void)?;
        let mut command = CommandStart {
            ns: self,
            report,
            start,
            error: 0,
        };
        // SAFETY: the command runs `command_main` alone on its own stack, in the waiter's
        // memory, while the waiter is suspended (CLONE_VFORK) until it `exec`s or ends; it
        // never returns into the waiter's frames. `command` outlives it.
        let pid = check(unsafe {
            libc::clone(
                command_main,
                stacks.command as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&mut command as *mut CommandStart<'_>).cast(),
            )
        })?;
        // SAFETY: the command wrote its error (if any) before it ended; it no longer runs in
        // this memory.
        let error = unsafe { std::ptr::read_volatile(&command.error) };
        if error != 0 {
            // SAFETY: reaping our own child, which has ended.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            return Err(io::Error::from_raw_os_error(error));
        }
        waiter(pid, init, report)
    }

    /// Map runner's uid and gid onto themselves in the new user namespace.
    ///
    /// runner makes itself undumpable ([`super::protect`]), and an undumpable process's
    /// `/proc/self` files belong to root, which an unprivileged runner cannot write: the flag
    /// is lifted for the moment the maps take, then put back.
    fn map_ids(&self) -> io::Result<()> {
        // SAFETY: PR_GET_DUMPABLE and PR_SET_DUMPABLE take no pointers.
        let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
        if dumpable == 0 {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
        }
        let written = self.write_maps();
        if dumpable == 0 {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        }
        written
    }

    fn write_maps(&self) -> io::Result<()> {
        let f = &self.fixed;
        write_file(&f.setgroups, b"deny")?;
        let mut buf = [0u8; 48];
        let n = id_map(&mut buf, self.ids.0);
        write_file(&f.uid_map, &buf[..n])?;
        let n = id_map(&mut buf, self.ids.1);
        write_file(&f.gid_map, &buf[..n])?;
        Ok(())
    }

    /// Private mounts, read-only but for the writable paths (`/proc` is the command's).
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
        Ok(())
    }

    /// Mount the namespace's own `/proc` (the mounting process must be in the namespace).
    fn mount_proc(&self) -> io::Result<()> {
        let f = &self.fixed;
        // SAFETY: mount with NUL-terminated paths made before the fork, or null.
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

/// The signals that wake the init: an orphan ended, or the waiter asks it to stop what is
/// left.
fn init_signals() -> libc::sigset_t {
    let mut set = empty_set();
    // SAFETY: sigaddset on our own set.
    unsafe {
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, STOP_SIGNAL);
    }
    set
}

/// The waiter's request to the init: stop every process left in the namespace.
const STOP_SIGNAL: libc::c_int = libc::SIGUSR1;

fn empty_set() -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is valid storage; sigemptyset initialises it.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::sigemptyset(&mut set) };
    set
}

/// The init's stack: it shares the waiter's memory, so it needs one of its own.
const INIT_STACK: usize = 64 * 1024;

/// The command's stack until it `exec`s (it shares the waiter's memory): the confinement's
/// system calls and `execvp`, which copies `PATH` entries onto it.
const COMMAND_STACK: usize = 256 * 1024;

/// The tops of the command's and the init's stacks, in one mapping with a page no access is
/// allowed to below it: `[guard | command | init]`. The command runs more code (`execvp` copies
/// `PATH` entries onto its stack) and faults rather than write below its stack; the init runs
/// a loop of system calls in a small fraction of its own.
///
/// The mapping is made once, in runner, which never touches it: every waiter (a fork of
/// runner) inherits it empty (nothing to copy) as a private copy of its own, which its init
/// and its command use. No system call per command, and nothing shared between commands.
#[derive(Clone, Copy)]
struct Stacks {
    command: usize,
    init: usize,
}

static STACKS: std::sync::OnceLock<Option<Stacks>> = std::sync::OnceLock::new();

const PAGE: usize = 4096;

impl Stacks {
    /// The mapping, made on first use (in runner, never between fork and exec).
    fn made() -> Option<Stacks> {
        *STACKS.get_or_init(|| Stacks::map().ok())
    }

    /// The mapping runner made, for a child between fork and exec (no allocation).
    fn inherited() -> io::Result<Stacks> {
        STACKS
            .get()
            .copied()
            .flatten()
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))
    }

    fn map() -> io::Result<Stacks> {
        let len = PAGE + COMMAND_STACK + INIT_STACK;
        // SAFETY: an anonymous private mapping, which nothing else refers to.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: mprotect on the mapping's first page.
        check(unsafe { libc::mprotect(base, PAGE, libc::PROT_NONE) })?;
        let base = base as usize;
        Ok(Stacks {
            command: base + PAGE + COMMAND_STACK,
            init: base + len,
        })
    }
}

/// What the command is started with (on the waiter's stack, which it reads while the waiter
/// is suspended).
struct CommandStart<'a> {
    ns: &'a Namespaces,
    /// The init's pipe, which the command closes.
    report: [libc::c_int; 2],
    /// The rest of the confinement and the `exec`: returns only with an error.
    start: &'a mut dyn FnMut() -> io::Error,
    /// The errno that kept the command from `exec`ing (0: none).
    error: libc::c_int,
}

/// The command, pid 2 of the namespace: the signal mask std set, the namespace's `/proc`, then
/// `start` (the rest of the confinement and `exec`). Runs on its own stack in the waiter's
/// memory until it `exec`s: system calls only. Ends only when it cannot `exec`, with the
/// error left for the waiter.
extern "C" fn command_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the waiter's `CommandStart`, which the waiter does not touch until
    // this process `exec`s or ends.
    let command = unsafe { &mut *arg.cast::<CommandStart<'_>>() };
    let empty = empty_set();
    // SAFETY: sigprocmask with a set on our stack; closing our copies of the init's pipe.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::close(command.report[0]);
        libc::close(command.report[1]);
    }
    let error = match command.ns.mount_proc() {
        Err(e) => e,
        Ok(()) => (command.start)(),
    };
    command.error = error
        .raw_os_error()
        .filter(|e| *e != 0)
        .unwrap_or(libc::EINVAL);
    // SAFETY: _exit is always safe.
    unsafe { libc::_exit(127) }
}

/// Start the namespace's init (its pid 1) on the stack whose top is `stack`: a `clone` that
/// shares the waiter's memory and descriptor table, in a process group of its own. `report`:
/// where it writes how many processes it stopped. Returns its pid (as runner numbers it).
fn start_init(report: libc::c_int, stack: *mut libc::c_void) -> io::Result<libc::pid_t> {
    // SAFETY: the init runs `init_main` alone on its own stack and never returns into the
    // waiter's frames.
    let init = check(unsafe {
        libc::clone(
            init_main,
            stack,
            libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD,
            report as isize as *mut libc::c_void,
        )
    })?;
    // Out of the command's process group at once: runner, which waits until no process of
    // the group runs, never waits for the init (which ends after the waiter, retiring the
    // mount namespace).
    // SAFETY: setpgid on our own child, which has not exec'd.
    check(unsafe { libc::setpgid(init, init) })?;
    Ok(init)
}

/// The init: reap orphans until the waiter asks it to stop what is left, then do so and say
/// how many; it ends only with the waiter (its parent-death signal). Runs on its own stack in
/// the waiter's memory: system calls only.
///
/// The init shares the waiter's memory, thread-local storage included, so the C library's
/// `errno` is one variable for the init, the waiter and the command until it `exec`s. The
/// init's reaping usually fails (`ECHILD`: it has no child until an orphan comes to it), and
/// through libc that failure would overwrite the `errno` of a call failing at that moment in
/// the waiter or the command, so that a passing failure to start the command read as
/// `ECHILD`. It reaps through a raw system call (rustix), which reports its error without
/// touching `errno`.
extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    let report = arg as isize as libc::c_int;
    let wakeups = init_signals();
    // SAFETY: system calls on the init's own children, signals and descriptors.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        loop {
            while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
            let sig = libc::sigwaitinfo(&wakeups, std::ptr::null_mut());
            if sig == STOP_SIGNAL {
                let bytes = stop_all().to_ne_bytes();
                libc::write(report, bytes.as_ptr().cast(), bytes.len());
            }
        }
    }
}

/// In the init: kill every other process of the namespace and reap them; returns how many
/// it killed.
fn stop_all() -> u32 {
    // SAFETY: system calls on the init's own children.
    unsafe {
        // kill(-1) from a namespace's init reaches every other process of the namespace; from
        // any other process it would reach every process the caller may signal, on the whole
        // machine for root: only pid 1 of a namespace sends it.
        if libc::getpid() != 1 {
            return 0;
        }
        libc::kill(-1, libc::SIGKILL);
        let mut killed: u32 = 0;
        // Reaped through rustix as in `init_main`: the loop ends on `ECHILD`, which must not
        // land in the `errno` the init shares with the waiter.
        loop {
            match rustix::process::wait(rustix::process::WaitOptions::empty()) {
                Ok(Some((_, st))) => {
                    if st.terminating_signal() == Some(libc::SIGKILL) {
                        killed += 1;
                    }
                }
                Err(rustix::io::Errno::INTR) => {}
                Ok(None) | Err(_) => break,
            }
        }
        killed
    }
}

/// The waiter: runner's child. Keeps only the init's pipe and stderr, ignores the stop
/// signals runner sends the group, waits for the command and ends as it ended. Never returns.
fn waiter(command: libc::pid_t, init: libc::pid_t, report: [libc::c_int; 2]) -> ! {
    // SAFETY: system calls on the waiter's own descriptors, signal dispositions and children.
    unsafe {
        close_except(&mut [2, report[0], report[1]]);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let mut status: libc::c_int = 1 << 8;
        loop {
            let mut st: libc::c_int = 0;
            let r = libc::waitpid(command, &mut st, 0);
            if r == command {
                status = st;
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                break;
            }
        }
        if !namespace_idle() {
            libc::kill(init, STOP_SIGNAL);
            let mut buf = [0u8; 4];
            if read_full(report[0], &mut buf) {
                let left = u32::from_ne_bytes(buf);
                if left > 0 {
                    note_left_behind(left);
                }
            }
        }
        // The descriptor table is the init's too, and the init outlives the waiter: nothing
        // of the namespace may hold the output pipes when the waiter ends.
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        end_as(status)
    }
}

/// Whether nothing runs in the namespace but its init: the init has no child but zombies
/// (`/proc` is the namespace's own). Every process the command left is a descendant of the
/// init by now (the kernel hands a dead process's children to the namespace's init before its
/// parent learns of the death). False when it cannot tell.
fn namespace_idle() -> bool {
    let mut buf = [0u8; 512];
    let Some(n) = read_small(b"/proc/1/task/1/children\0", &mut buf) else {
        return false;
    };
    if n == buf.len() {
        return false;
    }
    buf[..n]
        .split(|b| *b == b' ')
        .filter(|pid| !pid.is_empty())
        .all(|pid| {
            let mut path = [0u8; 32];
            let mut len = 0;
            for part in [b"/proc/".as_slice(), pid, b"/stat\0"] {
                if len + part.len() > path.len() {
                    return false;
                }
                path[len..len + part.len()].copy_from_slice(part);
                len += part.len();
            }
            let mut stat = [0u8; 128];
            read_small(&path[..len], &mut stat).is_some_and(|n| {
                // `pid (comm) S …`: the state follows the last `)`.
                let stat = &stat[..n];
                stat.iter()
                    .rposition(|b| *b == b')')
                    .and_then(|i| stat.get(i + 2))
                    == Some(&b'Z')
            })
        })
}

/// Read up to `buf.len()` bytes of the file at `path` (NUL-terminated).
fn read_small(path: &[u8], buf: &mut [u8]) -> Option<usize> {
    // SAFETY: open, read and close with a NUL-terminated path and our own buffer.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        usize::try_from(n).ok()
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
        let empty = empty_set();
        // SAFETY: restoring the default action, unblocking and raising the signal at ourselves.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
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

/// Close every descriptor but those in `keep`.
///
/// # Safety
///
/// Only in a process that needs no other descriptor.
unsafe fn close_except(keep: &mut [libc::c_int]) {
    keep.sort_unstable();
    let mut from: libc::c_int = 0;
    for &k in keep.iter() {
        if k > from {
            // SAFETY: close_range takes no pointers.
            unsafe { libc::syscall(libc::SYS_close_range, from as u32, (k - 1) as u32, 0u32) };
        }
        from = from.max(k + 1);
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from as u32, u32::MAX, 0u32) };
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
