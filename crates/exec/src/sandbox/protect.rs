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
