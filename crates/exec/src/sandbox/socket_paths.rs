//! Which Unix socket addresses a confined command may connect to: the pathname sockets inside
//! its writable roots and the ones the spec lists (`sandbox.unix_sockets`), with the path
//! resolved as the kernel resolves it for `connect` — relative to the caller's working
//! directory, through every symbolic link. Abstract sockets are left to Landlock, which scopes
//! them to the sandbox from ABI 6; below it they are refused.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links one resolution follows, as the kernel's own limit (`ELOOP`).
const MAX_LINKS: u32 = 40;

/// Where a confined command may connect to a Unix socket.
#[derive(Debug, Clone)]
pub(crate) struct SocketRules {
    /// Trees whose sockets are reachable: the writable roots (resolved).
    roots: Vec<PathBuf>,
    /// Sockets (or directories of sockets) the spec lists (resolved).
    listed: Vec<PathBuf>,
    /// Whether abstract sockets may be named (Landlock scopes them to the sandbox).
    abstract_scoped: bool,
}

/// What a `connect` address is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Address<'a> {
    /// Not a Unix socket address (TCP, UDP, …): for the other rules to judge.
    OtherFamily,
    /// A Unix address with no name (the kernel refuses it for `connect`).
    Unnamed,
    /// An abstract socket (`\0name`).
    Abstract,
    /// A pathname socket.
    Path(&'a Path),
}

/// What `bytes` (a `struct sockaddr` of `connect`, as long as the caller said it is) names.
pub(crate) fn address(bytes: &[u8]) -> Address<'_> {
    let Some(family) = bytes.get(..2) else {
        return Address::OtherFamily;
    };
    if u16::from_ne_bytes([family[0], family[1]]) != libc::AF_UNIX as u16 {
        return Address::OtherFamily;
    }
    let name = &bytes[2..];
    match name.first() {
        None => Address::Unnamed,
        Some(0) => Address::Abstract,
        Some(_) => {
            let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
            Address::Path(Path::new(OsStr::from_bytes(&name[..end])))
        }
    }
}

impl SocketRules {
    /// The rules for writable roots `roots` and listed sockets `listed` (absolute paths);
    /// `abstract_scoped`: Landlock keeps abstract sockets inside the sandbox.
    pub(crate) fn new(roots: &[PathBuf], listed: &[PathBuf], abstract_scoped: bool) -> Self {
        let resolve = |p: &PathBuf| resolve(Path::new("/"), p).unwrap_or_else(|| p.clone());
        SocketRules {
            roots: roots.iter().map(resolve).collect(),
            listed: listed.iter().map(resolve).collect(),
            abstract_scoped,
        }
    }

    /// Whether a caller whose working directory is `cwd` may connect to `address`.
    pub(crate) fn allows(&self, address: &Address<'_>, cwd: Option<&Path>) -> bool {
        match address {
            Address::OtherFamily | Address::Unnamed => true,
            Address::Abstract => self.abstract_scoped,
            Address::Path(p) => {
                let base = if p.is_absolute() {
                    Path::new("/")
                } else {
                    match cwd {
                        Some(c) => c,
                        None => return false,
                    }
                };
                resolve(base, p).is_some_and(|target| {
                    self.roots.iter().any(|r| target.starts_with(r))
                        || self.listed.iter().any(|l| target.starts_with(l))
                })
            }
        }
    }
}

/// `path` resolved from `base` (absolute) as the kernel would: `.` and `..` taken in turn and
/// every symbolic link followed, whatever part of the path it is. What does not exist is kept
/// as written (the kernel then fails the call itself). None: the path goes through `/proc`
/// (whose `self` and `fd` links mean one thing to the caller and another to runner), loops, or
/// cannot be read.
fn resolve(base: &Path, path: &Path) -> Option<PathBuf> {
    let mut done = base.to_path_buf();
    let mut todo: Vec<PathBuf> = vec![path.to_path_buf()];
    let mut links = 0;
    while let Some(next) = todo.pop() {
        let mut parts = next.components();
        let Some(first) = parts.next() else {
            continue;
        };
        let rest = parts.as_path().to_path_buf();
        if !rest.as_os_str().is_empty() {
            todo.push(rest);
        }
        match first {
            Component::RootDir => done = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                done.pop();
            }
            Component::Prefix(_) => return None,
            Component::Normal(name) => {
                let candidate = done.join(name);
                if candidate.starts_with("/proc") {
                    return None;
                }
                match std::fs::symlink_metadata(&candidate) {
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&candidate).ok()?;
                        todo.push(target);
                    }
                    Ok(_) => done = candidate,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => done = candidate,
                    Err(_) => return None,
                }
            }
        }
    }
    Some(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(path: &[u8]) -> Vec<u8> {
        let mut b = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        b.extend_from_slice(path);
        b
    }

    #[test]
    fn addresses_are_told_apart() {
        assert_eq!(address(&unix(b"")), Address::Unnamed);
        assert_eq!(address(&unix(b"\0name")), Address::Abstract);
        assert_eq!(
            address(&unix(b"/run/x.sock\0garbage")),
            Address::Path(Path::new("/run/x.sock"))
        );
        assert_eq!(
            address(&unix(b"rel.sock")),
            Address::Path(Path::new("rel.sock"))
        );
        let inet = (libc::AF_INET as u16).to_ne_bytes();
        assert_eq!(address(&inet), Address::OtherFamily);
        assert_eq!(address(&[1]), Address::OtherFamily);
    }

    #[test]
    fn only_sockets_in_the_roots_or_listed_are_allowed_however_they_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let work = top.join("work");
        let outside = top.join("outside");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(outside.join("docker.sock"), work.join("link.sock")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd/3", work.join("fd.sock")).unwrap();
        let listed = outside.join("agent.sock");
        let rules = SocketRules::new(
            std::slice::from_ref(&work),
            std::slice::from_ref(&listed),
            false,
        );
        let allows = |p: &Path, cwd: &Path| rules.allows(&Address::Path(p), Some(cwd));
        assert!(allows(&work.join("a.sock"), &top));
        assert!(allows(&work.join("sub/../a.sock"), &top));
        assert!(allows(Path::new("a.sock"), &work));
        assert!(allows(Path::new("../work/a.sock"), &work.join("sub")));
        assert!(allows(&listed, &top));
        assert!(allows(&work.join("out/agent.sock"), &top));
        assert!(!allows(&outside.join("docker.sock"), &work));
        assert!(!allows(Path::new("../outside/docker.sock"), &work));
        assert!(!allows(&work.join("../outside/docker.sock"), &work));
        assert!(!allows(&work.join("link.sock"), &work));
        assert!(!allows(&work.join("out/docker.sock"), &work));
        assert!(!allows(&work.join("fd.sock"), &work));
        assert!(!allows(Path::new("/proc/self/fd/3"), &work));
        assert!(!allows(Path::new("/dev/fd/3"), &work));
        assert!(!rules.allows(&Address::Path(Path::new("a.sock")), None));
        assert!(!rules.allows(&Address::Abstract, None));
        assert!(SocketRules::new(&[], &[], true).allows(&Address::Abstract, None));
        assert!(rules.allows(&Address::OtherFamily, None));
    }
}
