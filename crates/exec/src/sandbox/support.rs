//! What the kernel offers for confinement, probed once per process.

use std::sync::OnceLock;

/// Environment variable a test sets to pretend the kernel has no Landlock (`0`) or an older ABI
/// (`1`..): `sandbox.mode: enforce` must then refuse to run.
pub(crate) const TEST_ABI_VAR: &str = "RUNNER_TEST_LANDLOCK_ABI";

/// Environment variable a test sets (to `1`) to pretend runner cannot make namespaces.
pub(crate) const TEST_NO_NAMESPACES_VAR: &str = "RUNNER_TEST_NO_NAMESPACES";

/// Environment variable a test sets (to `1`) to pretend the kernel has no seccomp user
/// notifications: Unix sockets are then refused unless the spec lists some.
pub(crate) const TEST_NO_UNIX_NOTIFY_VAR: &str = "RUNNER_TEST_NO_UNIX_NOTIFY";

/// How the namespaces are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceKind {
    /// runner is root (with `CAP_SYS_ADMIN`): PID and mount namespaces directly.
    Root,
    /// runner is not root: a user namespace first, mapping runner's own uid and gid, which
    /// grants the right to make the other two.
    User,
}

/// The kernel's confinement features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (None: no Landlock).
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// How commands get PID and mount namespaces of their own (None: they cannot).
    pub namespaces: Option<NamespaceKind>,
    /// Whether runner can check the path of every Unix socket a command connects to (seccomp
    /// user notifications); without them Unix sockets are refused, or all reachable.
    pub unix_notify: bool,
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
        let mut probed = probe();
        if std::env::var(TEST_NO_NAMESPACES_VAR).is_ok_and(|v| v == "1") {
            probed.namespaces = None;
        }
        if std::env::var(TEST_NO_UNIX_NOTIFY_VAR).is_ok_and(|v| v == "1") {
            probed.unix_notify = false;
        }
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
        namespaces: probe_namespaces(),
        unix_notify: seccomp && super::unix_sockets::available(),
    }
}

/// Whether a command can be started in namespaces of its own: as root directly, otherwise in
/// a user namespace. Tried for real, with `true` as the command: a kernel or container may
/// refuse any of the steps (`unshare`, the id maps, the mounts).
#[cfg(target_os = "linux")]
fn probe_namespaces() -> Option<NamespaceKind> {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid cannot fail.
    let kind = if unsafe { libc::geteuid() } == 0 {
        NamespaceKind::Root
    } else {
        NamespaceKind::User
    };
    let tmp = std::env::temp_dir();
    let ns = std::sync::Arc::new(super::namespace::Namespaces::new(
        kind == NamespaceKind::User,
        &[tmp],
    ));
    let program = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let image = super::exec_image::ExecImage::new(&cmd, true).ok()?;
    // SAFETY: `enter` makes system calls only (see the namespace module), and the command
    // `exec`s the image.
    unsafe {
        cmd.pre_exec(move || match ns.enter(&mut || image.exec()) {
            Err(e) => Err(e),
            Ok(never) => match never {},
        });
    }
    match cmd.status() {
        Ok(s) if s.success() => Some(kind),
        other => {
            tracing::debug!(?other, "commands cannot get namespaces of their own");
            None
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support {
        landlock_abi: None,
        seccomp: false,
        namespaces: None,
        unix_notify: false,
    }
}
