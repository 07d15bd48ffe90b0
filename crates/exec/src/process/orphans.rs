//! Processes that outlive their call, where commands get no PID namespace of their own (which
//! would kill them with the call): a `setsid` double fork leaves its process group and its
//! session, so stopping the call's group misses it.
//!
//! runner is a child subreaper ([`become_subreaper`]): an orphan of any command it started is
//! re-parented to runner instead of init. Every child gets a call id in its environment
//! ([`CALL_VAR`]), which its descendants inherit. When a call ends, [`sweep`] looks at
//! runner's children that are in a session other than runner's and that runner did not start
//! itself — orphans — and kills each (and, as they are re-parented in turn, its descendants)
//! unless it names another call that is still running. An orphan that rewrote its environment
//! to name a running call lives until that call ends; one that names none dies at the next
//! sweep.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The variable that names the call a process belongs to.
pub const CALL_VAR: &str = "RUNNER_CALL_ID";

/// Calls whose commands may still run.
static RUNNING: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// Held (shared) from the fork of a child to its registration as a live group, and
/// (exclusively) by a sweep: a child just forked, not yet registered nor exec'd (its
/// environment still runner's), is never taken for an orphan.
pub(crate) static SPAWNING: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn running(f: impl FnOnce(&mut HashSet<u64>)) {
    let mut g = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashSet::new));
}

/// Make runner the reaper of its descendants' orphans. Call once, early.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// A new call id, registered as running.
pub(crate) fn begin() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    running(|r| {
        r.insert(id);
    });
    id
}

/// The call `id` never started a process (its spawn failed).
pub(crate) fn forget(id: u64) {
    running(|r| {
        r.remove(&id);
    });
}

/// The call `id` ended: kill what it left behind. Returns how many processes were killed.
/// `leaders`: the process groups runner started that still run (their leaders are runner's
/// own children, not orphans), read once no spawn is under way.
pub(crate) fn end(id: u64, leaders: impl Fn() -> HashSet<i32>) -> u32 {
    forget(id);
    sweep(id, leaders)
}

/// Kill every orphan of a call that is over: for the end of a run (or of a task), where an
/// orphan re-parented only after its call's sweep (a `setsid` that forks once more) would
/// otherwise outlive runner.
pub(crate) fn sweep_finished(leaders: impl Fn() -> HashSet<i32>) -> u32 {
    // Call ids start at 1: 0 names no call, so only orphans of running calls are spared.
    sweep(0, leaders)
}

/// Kill runner's orphans that belong to call `id` or to no running call.
fn sweep(id: u64, leaders: impl Fn() -> HashSet<i32>) -> u32 {
    let _no_spawn = SPAWNING.write().unwrap_or_else(|e| e.into_inner());
    let leaders = leaders();
    let me = std::process::id() as i32;
    let Some(my_session) = stat(me).map(|s| s.session) else {
        return 0;
    };
    let mut killed = 0;
    // Killing an orphan re-parents its children to runner: look again, a bounded number of
    // times (a tree deeper than this is cut at the next call's sweep).
    for _ in 0..16 {
        let mut found = Vec::new();
        for pid in children(me) {
            if leaders.contains(&pid) {
                continue;
            }
            let Some(st) = stat(pid) else { continue };
            if st.session == my_session {
                // Started by runner itself (its git, its helpers), not by a command.
                continue;
            }
            if st.zombie {
                reap(pid);
                continue;
            }
            if st.exiting {
                // Already going: nothing left running; its zombie is reaped by a later sweep.
                continue;
            }
            // Before its environment is read: an init's is runner's own, of no call.
            if st.group == pid && st.session != pid && namespace_init(pid) {
                // The init of a PID namespace: a confined command's, done and retiring the
                // command's mount namespace (an RCU grace period: several milliseconds, not
                // waited for). Killing it kills whatever is left in the namespace; its zombie
                // is reaped by a later sweep.
                // SAFETY: kill with a pid runner's own child holds until reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                continue;
            }
            let call = call_of(pid);
            let other_running = call.is_some_and(|c| {
                c != id && {
                    let mut live = false;
                    running(|r| live = r.contains(&c));
                    live
                }
            });
            if other_running {
                continue;
            }
            found.push(pid);
        }
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: kill with a pid runner's own child holds until reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid);
            killed += 1;
        }
    }
    killed
}

/// Reap `pid` (runner's child), waiting briefly for a process just killed.
fn reap(pid: i32) {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waitpid on one of runner's children; WNOHANG never blocks.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r != 0 || start.elapsed() > Duration::from_millis(200) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The pids of the orphans re-parented to `parent` (and of the children its main thread
/// started). The kernel gives an orphan to the first live thread of the subreaper, its main
/// thread while that lives, so one file is read per sweep rather than one per thread
/// (runner's blocking pool can hold hundreds); every thread's list only when the main thread's
/// cannot be read.
fn children(parent: i32) -> Vec<i32> {
    let parse = |list: &str| -> Vec<i32> {
        list.split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
            .collect()
    };
    if let Ok(list) = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")) {
        return parse(&list);
    }
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) {
        for t in tasks.flatten() {
            if let Ok(list) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(parse(&list));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

struct Stat {
    zombie: bool,
    /// The process group (a namespace's init leads its own, in its waiter's session).
    group: i32,
    /// The process is exiting (the kernel's `PF_EXITING`): it can no longer run anything.
    exiting: bool,
    session: i32,
}

/// The kernel's flag of a process that is exiting (`/proc/<pid>/stat` field 9).
const PF_EXITING: u64 = 0x4;

/// State, process group, session and flags of `pid` (`/proc/<pid>/stat` fields 3, 5, 6 and
/// 9).
fn stat(pid: i32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut f = s.rsplit_once(") ")?.1.split_whitespace();
    let state = f.next()?;
    let group = f.nth(1)?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    let flags: u64 = f.nth(2)?.parse().ok()?;
    Some(Stat {
        zombie: state == "Z",
        group,
        exiting: flags & PF_EXITING != 0,
        session,
    })
}

/// Whether `pid` is the init (pid 1) of a PID namespace below runner's (the last `NSpid` of
/// `/proc/<pid>/status`).
fn namespace_init(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .is_some_and(|ids| {
            let ids: Vec<&str> = ids.split_whitespace().collect();
            ids.len() > 1 && ids.last() == Some(&"1")
        })
}

/// The call id in `pid`'s environment.
fn call_of(pid: i32) -> Option<u64> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{CALL_VAR}=");
    env.split(|b| *b == 0).find_map(|kv| {
        std::str::from_utf8(kv)
            .ok()?
            .strip_prefix(&prefix)?
            .parse()
            .ok()
    })
}

/// The note a call's stderr gets when runner killed what it left running.
pub fn left_behind_note(n: u32) -> String {
    if n == 1 {
        "\n[runner] this command left 1 process running; it was stopped when the command ended\n"
            .to_string()
    } else {
        format!(
            "\n[runner] this command left {n} processes running; they were stopped when the command ended\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_counts_what_was_stopped() {
        assert!(left_behind_note(1).contains("left 1 process running; it was"));
        assert!(left_behind_note(3).contains("left 3 processes running; they were"));
    }

    /// Without a PID namespace (no sandbox here), a double-forked daemon in a session of its
    /// own escapes the call's process group; as the subreaper, this process gets it back and
    /// kills it when the call ends, and the call's stderr says so.
    #[test]
    fn a_setsid_daemon_dies_with_its_call() {
        use crate::process::ChildPolicy;
        use crate::process::run::{ShellRun, run_shell};
        become_subreaper();
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ticks");
        let script = format!(
            "(setsid sh -c 'while true; do echo t >> {}; sleep 0.05; done' >/dev/null 2>&1 &); sleep 0.2",
            marker.display()
        );
        let done = run_shell(ShellRun {
            script: &script,
            cwd: dir.path(),
            env: &ChildPolicy::default(),
            extra_env: &[],
            timeout: Duration::from_secs(30),
            cancel: &crate::cancel::Cancel::new(),
            spill_dir: &dir.path().join("spill"),
            spill_name: "t",
            scope: runner_protocol::Scope::Write,
            report: false,
            on_spawn: None,
        })
        .unwrap();
        assert_eq!(done.exit_code, Some(0));
        assert!(
            done.stderr.text.contains("[runner] this command left "),
            "{}",
            done.stderr.text
        );
        let len = std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            len,
            std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0),
            "the daemon outlived its call"
        );
    }

    #[test]
    fn this_process_is_in_its_own_session_view() {
        let me = std::process::id() as i32;
        assert!(stat(me).is_some_and(|s| !s.zombie && !s.exiting));
        // SAFETY: getpgrp and getsid cannot fail for the calling process.
        let (group, session) = unsafe { (libc::getpgrp(), libc::getsid(0)) };
        assert!(stat(me).is_some_and(|s| s.group == group && s.session == session));
        assert!(!namespace_init(me));
    }
}
