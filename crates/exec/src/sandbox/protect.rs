//! runner's own protection of the secrets it holds: its process is not dumpable (no core files,
//! no `/proc/<pid>/mem` or `ptrace` for other users' processes), and the environment block it
//! was started with — what `/proc/<pid>/environ` shows, even to root — is wiped once its values
//! are copied to runner's heap, so API keys and tokens cannot be read from there.

/// Make the process non-dumpable and wipe its initial environment block.
///
/// # Safety
///
/// Must be called before any other thread exists (it rewrites the process environment), at
/// the very start of `main`.
pub unsafe fn harden_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_DUMPABLE takes no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    // SAFETY: single-threaded, as the caller promises.
    unsafe { wipe_initial_environment() };
}

/// Copy every variable to the heap (so `environ` no longer points into the initial block),
/// then zero the initial block.
///
/// # Safety
///
/// Single-threaded only.
#[cfg(target_os = "linux")]
unsafe fn wipe_initial_environment() {
    let Some((start, end)) = initial_block() else {
        return;
    };
    let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    for (k, v) in &vars {
        let name = k.as_encoded_bytes();
        if name.is_empty() || name.contains(&b'=') || name.contains(&0) {
            // A name set_var refuses; its entry stays in the block, which then is not wiped.
            continue;
        }
        // SAFETY: no other thread runs (the caller's promise).
        unsafe { std::env::set_var(k, v) };
    }
    // Every pointer of `environ` must now lie outside the block, or wiping it would blank a
    // variable runner still reads.
    // SAFETY: `environ` is the process's NULL-terminated array of C strings.
    let outside = unsafe {
        let mut p = libc_environ();
        let mut ok = true;
        while !p.is_null() && !(*p).is_null() {
            let a = *p as usize;
            if a >= start && a < end {
                ok = false;
                break;
            }
            p = p.add(1);
        }
        ok
    };
    if !outside {
        return;
    }
    // SAFETY: [start, end) is the process's own initial environment block (from
    // /proc/self/stat), which nothing refers to any more.
    unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
}

#[cfg(not(target_os = "linux"))]
unsafe fn wipe_initial_environment() {}

/// The address range of the initial environment block: fields 50 and 51 (`env_start`,
/// `env_end`) of `/proc/self/stat`.
#[cfg(target_os = "linux")]
fn initial_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3.
    let start = fields.get(50 - 3)?.parse::<usize>().ok()?;
    let end = fields.get(51 - 3)?.parse::<usize>().ok()?;
    (start > 0 && end > start).then_some((start, end))
}

#[cfg(target_os = "linux")]
unsafe fn libc_environ() -> *const *const libc::c_char {
    unsafe extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: reading the C library's `environ` pointer.
    unsafe { environ }
}

/// runner's own process, its threads (a signal sent to a thread's id reaches the process), its
/// ancestors up to init, and runner's process group (as a negative id): what no command may
/// signal (see the sandbox's seccomp filter). Threads started later are not in the list; where
/// Landlock scopes signals (ABI 6), the kernel keeps every process outside the sandbox out of
/// reach anyway.
pub fn protected_pids() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut pids = vec![me];
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok())
                && !pids.contains(&tid)
            {
                pids.push(tid);
            }
        }
    }
    let mut pid = me;
    let mut group = None;
    // The parent chain, bounded in case `/proc` answers oddly.
    for _ in 0..64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            break;
        };
        let mut fields = match stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest.split_whitespace())
        {
            Some(f) => f,
            None => break,
        };
        let ppid = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if group.is_none() {
            group = fields.next().and_then(|g| g.parse::<i32>().ok());
        }
        match ppid {
            Some(p) if p > 0 && !pids.contains(&p) => {
                pids.push(p);
                pid = p;
            }
            _ => break,
        }
    }
    if let Some(g) = group.filter(|g| *g > 0) {
        // kill(-pgid) signals the whole group.
        pids.push(-g);
    }
    pids
}
