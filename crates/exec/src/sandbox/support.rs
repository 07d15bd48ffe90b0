//! What the kernel offers for confinement, probed once per process.

use std::sync::OnceLock;

/// Environment variable a test sets to pretend the kernel has no Landlock (`0`) or an older ABI
/// (`1`..): `sandbox.mode: enforce` must then refuse to run.
pub(crate) const TEST_ABI_VAR: &str = "RUNNER_TEST_LANDLOCK_ABI";

/// The kernel's confinement features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (None: no Landlock).
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
}

impl Support {
    /// Whether commands can be confined at all (Landlock is the floor).
    pub fn can_confine(&self) -> bool {
        self.landlock_abi.is_some() && self.seccomp
    }

    /// Whether Landlock can restrict TCP connect and bind (ABI 4).
    pub fn landlock_net(&self) -> bool {
        self.landlock_abi.is_some_and(|v| v >= 4)
    }

    /// Whether Landlock can scope signals and abstract Unix sockets (ABI 6).
    pub fn landlock_scope(&self) -> bool {
        self.landlock_abi.is_some_and(|v| v >= 6)
    }
}

/// The kernel's features (probed on first use; [`TEST_ABI_VAR`] overrides the Landlock ABI).
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let probed = probe();
        match std::env::var(TEST_ABI_VAR)
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
        {
            Some(0) => Support {
                landlock_abi: None,
                ..probed
            },
            Some(v) => Support {
                landlock_abi: probed.landlock_abi.map(|p| p.min(v)),
                ..probed
            },
            None => probed,
        }
    })
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI version.
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query reads and writes no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    // SAFETY: PR_GET_SECCOMP takes no pointers.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    Support {
        landlock_abi: u32::try_from(v).ok().filter(|v| *v > 0),
        seccomp,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support {
        landlock_abi: None,
        seccomp: false,
    }
}
