//! What a task's sandbox allows, resolved once when the task starts: the paths granted for
//! reading and writing, the devices, the network.

use std::path::{Path, PathBuf};

use super::files::{FileDenial, FileRules};
use super::home::{HomeRules, actions_runner_credentials};
use super::paths::{WRITABLE_DEVICES, credential_paths, grants_except};

/// The network of confined commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// No network.
    None,
    /// Unrestricted.
    Allow,
    /// Only through the egress proxy on 127.0.0.1 at this port.
    Proxy {
        /// The proxy's port.
        port: u16,
    },
}

impl Network {
    /// Whether sockets are restricted at all.
    pub fn restricts(&self) -> bool {
        !matches!(self, Network::Allow)
    }

    /// The proxy's port, when there is one.
    pub fn proxy_port(&self) -> Option<u16> {
        match self {
            Network::Proxy { port } => Some(*port),
            _ => None,
        }
    }
}

/// The resolved grants of one task.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Paths granted for reading (everything but the credential locations).
    pub read_grants: Vec<PathBuf>,
    /// Paths granted for writing, in `Scope::Write` (the writable roots less what is
    /// protected inside them).
    pub write_grants: Vec<PathBuf>,
    /// Devices every command may write.
    pub devices: Vec<PathBuf>,
    /// The writable roots, as reported.
    pub writable: Vec<PathBuf>,
    /// The network.
    pub network: Network,
    /// What is readable under the home directory and `$RUNNER_TEMP`.
    pub home: HomeRules,
    /// The same rules for runner's file tools: what they may read and write.
    pub files: FileRules,
}

/// What the plan is made from.
pub struct PlanInput<'a> {
    /// The writable roots: the workdir, the private TMPDIR, the spec's `sandbox.write`.
    pub writable: Vec<PathBuf>,
    /// Paths no command may read: the spec's `sandbox.read_deny` (credential locations are
    /// added).
    pub read_deny: &'a [PathBuf],
    /// The home directory, closed but for toolchains, the roots and `read`.
    pub home: Option<&'a Path>,
    /// `$RUNNER_TEMP` (closed like the home directory).
    pub runner_temp: Option<&'a Path>,
    /// The spec's `sandbox.read`: paths under the home directory that stay readable.
    pub read: &'a [PathBuf],
    /// The network.
    pub network: Network,
}

impl Plan {
    /// Resolve the grants for `input`.
    pub fn new(input: PlanInput<'_>) -> Plan {
        let mut extra_deny = input.read_deny.to_vec();
        extra_deny.extend(actions_runner_credentials());
        let deny = credential_paths(input.home, &extra_deny);
        let writable: Vec<PathBuf> = input
            .writable
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let mut open = writable.clone();
        open.extend(input.read.iter().cloned());
        let home = HomeRules::new(input.home, input.runner_temp, &open);
        // Everything but the closed trees and the credential locations; then, inside the
        // closed trees, what stays open (less the credential locations inside it).
        let mut outer_deny = deny.clone();
        outer_deny.extend(home.closed.iter().cloned());
        let mut read_grants = grants_except(Path::new("/"), &outer_deny);
        for o in home.open_inside() {
            for g in grants_except(o, &deny) {
                if !read_grants.contains(&g) {
                    read_grants.push(g);
                }
            }
        }
        // A writable root is granted whole, unless an unreadable path lies inside it: Landlock
        // cannot take one path out of a grant, so the root is then granted entry by entry
        // around it (and no new file can be made in the directory that holds it).
        let mut write_grants = Vec::new();
        for root in &writable {
            if let Some(d) = deny.iter().find(|d| d.starts_with(root)) {
                tracing::warn!(
                    root = %root.display(),
                    unreadable = %d.display(),
                    "an unreadable path lies inside a writable root: new files cannot be created in the directory that holds it"
                );
            }
            for g in grants_except(root, &deny) {
                if !write_grants.contains(&g) {
                    write_grants.push(g);
                }
            }
        }
        let devices: Vec<PathBuf> = WRITABLE_DEVICES
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        let files = FileRules::new(input.home, &extra_deny, Some(&writable), &devices)
            .with_closed(&home.closed, &home.open);
        Plan {
            read_grants,
            write_grants,
            devices,
            writable,
            network: input.network,
            home,
            files,
        }
    }

    /// Whether a file tool may read `path` (absolute): not when a confined command could not
    /// (see [`FileRules::may_read`]).
    pub fn may_read(&self, path: &Path) -> Result<(), FileDenial> {
        self.files.may_read(path)
    }

    /// Whether a file tool may write `path` (absolute): not when a confined command allowed to
    /// write could not (see [`FileRules::may_write`]).
    pub fn may_write(&self, path: &Path) -> Result<(), FileDenial> {
        self.files.may_write(path)
    }
}
