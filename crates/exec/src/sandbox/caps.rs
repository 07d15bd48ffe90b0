//! Capabilities a confined command does not keep. As root — the normal case in containers and
//! pods — a command would otherwise hold every capability runner holds: read any process's
//! memory and environment (`CAP_SYS_PTRACE`), load kernel modules, change any file's owner.
//! Before Landlock applies, the command drops them all: the bounding set is cleared (so
//! `exec` as uid 0 cannot regain them), securebits keep root from being special again, the
//! ambient set is emptied, and the effective, permitted and inheritable sets are zeroed.

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The bits of `prctl(PR_SET_SECUREBITS)`: no root privileges on exec, no capability fix-up on
/// setuid, no ambient raise, each locked.
const SECUREBITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x80;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drop every capability of the calling process for good. Runs between `fork` and `exec`:
/// system calls only. Clearing the bounding set and setting securebits need `CAP_SETPCAP`,
/// which an unprivileged process does not have and need not: its `exec` gains nothing. Root
/// that cannot clear the bounding set is refused (EPERM): its `exec` would regain it.
pub(crate) fn drop_all() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        // Refused (EPERM) without CAP_SETPCAP; an unprivileged process (or one in a user
        // namespace of runner's) loses nothing by that.
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0);
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset with a version-3 header and the two data structs it reads.
    let r = unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: reading the bounding set takes no pointers.
    if unsafe { libc::geteuid() } == 0
        && unsafe { libc::prctl(libc::PR_CAPBSET_READ, 21, 0, 0, 0) } == 1
    {
        // CAP_SYS_ADMIN (21) is still in the bounding set: runner, as root without
        // CAP_SETPCAP, cannot keep an `exec` from regaining it.
        return Err(std::io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(())
}
