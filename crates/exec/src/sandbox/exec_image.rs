//! A program, its arguments and its environment made ready, in the parent, for an `exec` that
//! allocates nothing: with namespaces of its own, a command is started by the sandbox itself
//! (see [`super::namespace`]) rather than by the standard library, from a process that shares
//! its parent's memory and cannot return into the code that forked it.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;

/// What a command `exec`s, as the standard library would: the program looked up on the
/// command's own `PATH` when it has no `/`, `argv[0]` the program as given, the environment
/// the parent's (or none) with the command's changes. Every string is in one buffer (freeing
/// the image touches few pages: it is freed while the command's waiter, a fork of runner,
/// still shares runner's memory, and each page runner writes then is copied).
pub struct ExecImage {
    /// The program's name or path.
    program: CString,
    /// The NUL-terminated arguments, then the NUL-terminated `NAME=value` strings.
    _strings: Vec<u8>,
    /// Null-terminated pointers into `_strings`: the arguments (`argv[0]` first).
    argv: Vec<*const libc::c_char>,
    /// Null-terminated pointers into `_strings`: the environment.
    envp: Vec<*const libc::c_char>,
    /// Descriptors to give the command, last before `exec`: `(from, to)`, the copy inherited
    /// across `exec`.
    fds: Vec<(RawFd, RawFd)>,
}

// SAFETY: the raw pointers point into the buffer the image owns (a heap buffer that does not
// move with the image) and are only read.
unsafe impl Send for ExecImage {}
// SAFETY: as above; nothing is written through them.
unsafe impl Sync for ExecImage {}

fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a program, argument or variable holds a NUL byte",
    )
}

impl ExecImage {
    /// The image of `cmd` as it stands (program, arguments, variables set and removed);
    /// `inherit_env`: whether it starts from the parent's environment (false: `env_clear`
    /// was called on it).
    pub fn new(cmd: &std::process::Command, inherit_env: bool) -> io::Result<ExecImage> {
        let mut env: std::collections::BTreeMap<OsString, OsString> = if inherit_env {
            std::env::vars_os().collect()
        } else {
            Default::default()
        };
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => env.insert(k.to_os_string(), v.to_os_string()),
                None => env.remove(k),
            };
        }
        let program = CString::new(cmd.get_program().as_bytes()).map_err(|_| nul_error())?;
        let args: Vec<&OsStr> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .collect();
        let size = args.iter().map(|a| a.len() + 1).sum::<usize>()
            + env
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let mut strings = Vec::with_capacity(size);
        let mut starts = Vec::with_capacity(args.len() + env.len());
        for a in &args {
            starts.push(strings.len());
            strings.extend_from_slice(a.as_bytes());
            strings.push(0);
        }
        for (k, v) in &env {
            starts.push(strings.len());
            strings.extend_from_slice(k.as_bytes());
            strings.push(b'=');
            strings.extend_from_slice(v.as_bytes());
            strings.push(0);
        }
        if strings.iter().filter(|b| **b == 0).count() != starts.len() {
            return Err(nul_error());
        }
        let base = strings.as_ptr();
        let pointers = |starts: &[usize]| {
            starts
                .iter()
                // SAFETY: each start is an offset within `strings`, which is not resized after.
                .map(|&i| unsafe { base.add(i) }.cast::<libc::c_char>())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let (arg_starts, env_starts) = starts.split_at(args.len());
        Ok(ExecImage {
            argv: pointers(arg_starts),
            envp: pointers(env_starts),
            program,
            _strings: strings,
            fds: Vec::new(),
        })
    }

    /// Give the command `from` as descriptor `to` (inheritable), after everything else.
    pub fn with_fd(mut self, from: RawFd, to: RawFd) -> ExecImage {
        self.fds.push((from, to));
        self
    }

    /// The program as given.
    pub fn program(&self) -> &OsStr {
        OsStr::from_bytes(self.program.as_bytes())
    }

    /// Put the descriptors in place and `exec` the program; returns only on failure. Between
    /// fork and exec: system calls only. It replaces the calling process's `environ` (as the
    /// standard library does for the `PATH` lookup), so only a process that is about to
    /// `exec` calls it.
    pub(crate) fn exec(&self) -> io::Error {
        for &(from, to) in &self.fds {
            // SAFETY: fcntl and dup2 on descriptors the process holds.
            let r = unsafe {
                if from == to {
                    libc::fcntl(from, libc::F_SETFD, 0)
                } else {
                    libc::dup2(from, to)
                }
            };
            if r < 0 {
                return io::Error::last_os_error();
            }
        }
        unsafe extern "C" {
            static mut environ: *const *const libc::c_char;
        }
        // SAFETY: `environ` now points at the image's null-terminated array, which outlives
        // the exec; `execvp` reads it for `PATH` and passes it on. The arrays are
        // null-terminated and point at NUL-terminated strings the image owns.
        unsafe {
            environ = self.envp.as_ptr();
            libc::execvp(self.program.as_ptr(), self.argv.as_ptr());
        }
        io::Error::last_os_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn strings(pointers: &[*const libc::c_char]) -> Vec<&[u8]> {
        pointers
            .iter()
            .take_while(|p| !p.is_null())
            // SAFETY: the image's pointers are to NUL-terminated strings it owns.
            .map(|p| unsafe { CStr::from_ptr(*p) }.to_bytes())
            .collect()
    }

    #[test]
    fn the_image_has_the_commands_arguments_and_environment() {
        let mut cmd = std::process::Command::new("prog");
        cmd.arg("-c")
            .arg("x y")
            .env("RUNNER_IMAGE_SET", "1")
            .env_remove("PATH");
        let image = ExecImage::new(&cmd, true).unwrap();
        assert_eq!(image.program(), "prog");
        assert_eq!(strings(&image.argv), [b"prog".as_slice(), b"-c", b"x y"]);
        assert!(image.argv[3].is_null() && image.envp.last().unwrap().is_null());
        let env = strings(&image.envp);
        assert_eq!(env.len() + 1, image.envp.len());
        assert!(env.contains(&b"RUNNER_IMAGE_SET=1".as_slice()));
        assert!(!env.iter().any(|e| e.starts_with(b"PATH=")));

        let mut cleared = std::process::Command::new("/bin/true");
        cleared.env_clear().env("ONLY", "this");
        let image = ExecImage::new(&cleared, false).unwrap();
        assert_eq!(strings(&image.envp), [b"ONLY=this".as_slice()]);

        // (An argument with a NUL is refused by the standard library's own spawn.)
        let mut bad = std::process::Command::new("prog");
        bad.env("RUNNER_IMAGE_BAD", "a\0b");
        assert!(ExecImage::new(&bad, true).is_err());
    }
}
