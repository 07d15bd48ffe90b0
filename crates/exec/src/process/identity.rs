//! Which process group a tool call started, told apart from a later group that reuses its id.
//!
//! A run killed with SIGKILL cannot stop its children: a command's process group outlives it
//! and may still be running when the run is resumed. The transcript records each side-effecting
//! call's group as a [`GroupIdentity`] (its id, its leader's start time and the boot it ran in),
//! so a resumed run can kill that group — and only that group: after a reboot, or when the id
//! now belongs to a process that started later, nothing is sent.

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

/// A process group as it was when runner started it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct GroupIdentity {
    /// The process group id (its leader's pid).
    pub pgid: i32,
    /// The leader's start time, in clock ticks after boot (`/proc/<pid>/stat` field 22).
    pub start_ticks: u64,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: String,
}

/// What [`GroupIdentity::kill_if_running`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leftover {
    /// The group was still running and was sent SIGKILL.
    Killed,
    /// Nothing of the group runs any more.
    Gone,
    /// The id now belongs to another process (started later, or in another boot): left alone.
    Reused,
}

impl GroupIdentity {
    /// The identity of the group whose leader is `pgid`, read now; None when `/proc` does not
    /// tell (not Linux, or the leader is already gone).
    pub fn read(pgid: i32) -> Option<GroupIdentity> {
        Some(GroupIdentity {
            pgid,
            start_ticks: start_ticks(pgid)?,
            boot_id: boot_id()?,
        })
    }

    /// SIGKILL the group if it is still the group runner started and still has a running
    /// member. A group whose leader exited while others of it run is still that group: the
    /// kernel does not hand out an id that a live process group still uses.
    pub fn kill_if_running(&self) -> Leftover {
        if boot_id().as_deref() != Some(self.boot_id.as_str()) {
            return Leftover::Reused;
        }
        if let Some(ticks) = start_ticks(self.pgid)
            && ticks != self.start_ticks
        {
            return Leftover::Reused;
        }
        let group = Pid::from_raw(self.pgid);
        if self.pgid <= 1 || matches!(killpg(group, None), Err(Errno::ESRCH)) {
            return Leftover::Gone;
        }
        if !super::group_has_running_member(self.pgid) {
            return Leftover::Gone;
        }
        match killpg(group, Signal::SIGKILL) {
            Ok(()) => Leftover::Killed,
            Err(_) => Leftover::Gone,
        }
    }
}

/// Field 22 of `/proc/<pid>/stat`.
fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields start at field 3; field 22 is the 20th from there.
    super::stat_fields(&stat)?.nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn leader(script: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn wait_gone(pgid: i32) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if !crate::process::group_has_running_member(pgid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_running_group_is_killed_with_its_members() {
        // The leader exits at once; its background member keeps the group alive.
        let mut child = leader("sleep 30 & exit 0");
        let pgid = child.id() as i32;
        let id = GroupIdentity::read(pgid).unwrap();
        child.wait().unwrap();
        assert!(crate::process::group_has_running_member(pgid));
        assert_eq!(id.kill_if_running(), Leftover::Killed);
        assert!(wait_gone(pgid), "the group's sleep survived");
        assert_eq!(id.kill_if_running(), Leftover::Gone);
    }

    #[test]
    fn a_reused_id_or_another_boot_is_left_alone() {
        let mut child = leader("sleep 30");
        let pgid = child.id() as i32;
        let real = GroupIdentity::read(pgid).unwrap();
        let later = GroupIdentity {
            start_ticks: real.start_ticks + 1,
            ..real.clone()
        };
        assert_eq!(later.kill_if_running(), Leftover::Reused);
        let other_boot = GroupIdentity {
            boot_id: "00000000-0000-0000-0000-000000000000".into(),
            ..real.clone()
        };
        assert_eq!(other_boot.kill_if_running(), Leftover::Reused);
        assert!(crate::process::group_has_running_member(pgid));
        assert_eq!(real.kill_if_running(), Leftover::Killed);
        child.wait().unwrap();
    }
}
