//! Commands that run another command: `timeout 10 cargo test`, `env FOO=1 make`, `xargs rm`,
//! `sudo apt-get install`, `watch 'git status'`. The wrapped command is found by parsing each
//! wrapper's options as its manual documents them, so it can be decided on its own: a rule for
//! a wrapper allows the wrapper, never what it wraps.
//!
//! A known wrapper whose options are not understood is an error: runner cannot tell which
//! command it runs, and the caller refuses the whole command.

use std::sync::LazyLock;

use super::flags::{self, Mode, Options};
use super::program;
use super::word::ArgWord;

/// One wrapper in front of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// Index of the wrapper's name in the command's words.
    pub at: usize,
    /// The wrapper's name (`sudo`, `timeout`, ...).
    pub name: String,
    /// Whether the wrapper itself needs an allow rule that names it (it changes what the
    /// wrapped command may do: another user, another root, another scheduler class, a file it
    /// creates), besides the wrapped command's own.
    pub needs_rule: bool,
}

/// What stripping the wrappers found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unwrapped {
    /// The wrappers, outermost first.
    pub layers: Vec<Layer>,
    /// Index of the wrapped command's name (the words' length when a wrapper runs a command
    /// string instead, see `script`).
    pub start: usize,
    /// Whether the wrapped command gets arguments runner cannot see (`xargs` appends words
    /// read from its input).
    pub unseen_args: bool,
    /// `NAME=VALUE` words given to `env`: the name and whether the value is static.
    pub env: Vec<(String, bool)>,
    /// `env -i` or `env -u`: the wrapped command does not get the environment runner set.
    pub env_cleared: bool,
    /// Files the wrappers themselves write (`flock`'s lock file, `script`'s typescript,
    /// `time -o`'s report).
    pub writes: Vec<ArgWord>,
    /// A command string a wrapper runs through a shell (`watch 'git status'`, `script -c`,
    /// `su -c`, `flock FILE -c`).
    pub script: Option<ArgWord>,
}

/// A wrapper's option grammar.
struct Spec {
    name: &'static str,
    options: &'static str,
    /// Operands before the wrapped command (`timeout`'s duration, `chrt`'s priority).
    leading: usize,
    needs_rule: bool,
}

const fn spec(name: &'static str, options: &'static str, leading: usize, needs_rule: bool) -> Spec {
    Spec {
        name,
        options,
        leading,
        needs_rule,
    }
}

/// Options of the tracing and sandboxing wrappers (those that need a rule of their own) that
/// name a file they write; `stdbuf -oL` is a buffering mode.
const WRITE_OPTIONS: &[&str] = &[
    "-o",
    "--output",
    "--log-file",
    "--xml-file",
    "--output-file",
];

/// Wrappers whose options are only flags and values, followed by the command.
const SIMPLE: &[Spec] = &[
    spec(
        "strace",
        "-f -F -q -v -V -c -C -w -i -r -t -T -x -y -k -n -Z -z -D -o= -e= -E= -p= -P= -s= -S= -u= -a= -X= -b= -I= -O= -U= --output= --trace= --signal= --status= --summary-only --summary --summary-wall-clock --follow-forks --output-separately --absolute-timestamps? --relative-timestamps? --syscall-times? --string-limit= --env= --user= --decode-fds? --decode-pids? --quiet? --instruction-pointer --stack-trace --seccomp-bpf --kill-on-exit --successful-only --failed-only --columns=",
        0,
        true,
    ),
    spec(
        "ltrace",
        "-f -i -r -t -T -c -C -S -L -b -n= -w= -x= -e= -o= -p= -s= -u= -a= -A= -D= -F= -l= --output= --library= --demangle --align= --indent=",
        0,
        true,
    ),
    spec("valgrind", "-q -v --*", 0, true),
    spec("firejail", "--*", 0, true),
    spec(
        "unshare",
        "-m -u -i -n -p -U -C -T -f -r -c --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? --fork --kill-child? --mount-proc? --map-root-user --map-current-user --map-auto --propagation= --setgroups= --keep-caps -R= --root= -w= --wd= -S= --setuid= -G= --setgid= --monotonic= --boottime= --map-user= --map-group= --map-users= --map-groups=",
        0,
        true,
    ),
    spec(
        "nsenter",
        "-a --all -t= --target= -m? -u? -i? -n? -p? -U? -C? -T? --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? -S= --setuid= -G= --setgid= --preserve-credentials -r? --root? -w? --wd? -F --no-fork -Z --follow-context",
        0,
        true,
    ),
    spec(
        "systemd-run",
        "--user --system --scope -t --pty -P --pipe -q --quiet --wait -G --collect -d --same-dir --no-block --no-ask-password -r --remain-after-exit -u= --unit= -p= --property= -E= --setenv= --uid= --gid= --nice= --working-directory= --description= --slice= --service-type= -H= --host= -M= --machine=",
        0,
        true,
    ),
    spec("proxychains", "-q -f=", 0, true),
    spec("proxychains4", "-q -f=", 0, true),
    spec("torsocks", "-q -d -i -u= -p= -a= -P=", 0, true),
    spec("faketime", "-f -m --exclude-monotonic", 1, true),
    spec("nohup", "--help --version", 0, false),
    spec("builtin", "", 0, false),
    spec("nice", "-n= --adjustment= #", 0, false),
    spec(
        "timeout",
        "-s= -k= -v -f -p --signal= --kill-after= --foreground --preserve-status --verbose",
        1,
        false,
    ),
    spec(
        "stdbuf",
        "-i= -o= -e= --input= --output= --error=",
        0,
        false,
    ),
    spec("setsid", "-c -f -w --ctty --fork --wait", 0, false),
    spec(
        "ionice",
        "-c= -n= -t --class= --classdata= --ignore",
        0,
        false,
    ),
    spec(
        "chrt",
        "-a -b -d -f -i -o -r -R -v -T= -P= -D= --all-tasks --batch --deadline --fifo --idle --other --rr --reset-on-fork --verbose --sched-runtime= --sched-period= --sched-deadline=",
        1,
        false,
    ),
    spec("taskset", "-a -c --all-tasks --cpu-list", 1, false),
    spec("busybox", "", 0, false),
    spec("doas", "-n -u= -s", 0, true),
    spec("chroot", "--userspec= --groups= --skip-chdir", 1, true),
    spec(
        "pkexec",
        "--user= --disable-internal-agent --keep-cwd",
        0,
        true,
    ),
    spec("eatmydata", "", 0, false),
    spec(
        "fakeroot",
        "-l= -s= -i= -u --unknown-is-real --lib= --faked=",
        0,
        true,
    ),
    spec("unbuffer", "-p", 0, false),
    spec("chronic", "-e -v", 0, false),
    spec("caffeinate", "-d -i -m -s -u -t=", 0, false),
    spec("catchsegv", "", 0, false),
    spec("nocache", "-n=", 0, false),
    spec(
        "numactl",
        "-a -l -b --all --localalloc --balancing -N= -m= -C= -p= -i= --cpunodebind= --membind= --physcpubind= --preferred= --interleave=",
        0,
        true,
    ),
    spec(
        "prlimit",
        "-v --verbose --as= --core= --cpu= --data= --fsize= --locks= --memlock= --msgqueue= --nice= --nofile= --nproc= --rss= --rtprio= --rttime= --sigpending= --stack=",
        0,
        true,
    ),
    spec(
        "setpriv",
        "-d --dump --nnp --no-new-privs --clear-groups --keep-groups --init-groups --groups= --inh-caps= --ambient-caps= --bounding-set= --ruid= --euid= --reuid= --rgid= --egid= --regid= --securebits= --pdeathsig= --selinux-label= --apparmor-profile= --reset-env",
        0,
        true,
    ),
    spec(
        "runuser",
        "-u= -g= -G= -l -m -p -s= --user= --group= --supp-group= --login --preserve-environment --shell= --",
        0,
        true,
    ),
    spec("gosu", "", 1, true),
    spec("su-exec", "", 1, true),
    spec("cgexec", "-g= --sticky", 0, true),
    spec(
        "xvfb-run",
        "-a -d -l -e= -f= -n= -p= -s= -w= --auto-servernum --auto-display --listen-tcp --error-file= --auth-file= --server-num= --xauth-protocol= --server-args= --wait=",
        0,
        false,
    ),
    spec(
        "dbus-run-session",
        "--config-file= --dbus-daemon=",
        0,
        false,
    ),
    spec("tini", "-s -v -w -g -l -e= -p=", 0, false),
    spec(
        "dumb-init",
        "-c -v --single-child --verbose -r= --rewrite=",
        0,
        false,
    ),
    // `entr -s` runs its operand through a shell: not an option runner accepts.
    spec("entr", "-a -c -d -n -p -r -z", 0, false),
    spec("ssh-agent", "-c -D -d -k -s -a= -E= -t= -P= -O=", 0, false),
];

/// Programs that run commands given in their own syntax (a shell string, several commands,
/// a debugger script): runner does not parse it, so it cannot decide the command they run,
/// and a command using them is refused.
const OPAQUE: &[&str] = &[
    "hyperfine",
    "watchexec",
    "nix-shell",
    "direnv",
    "gdb",
    "lldb",
    "bwrap",
    "sg",
    "expect",
    "nodemon",
    "cargo-watch",
    "pueue",
    "tmux",
    "screen",
    "at",
    "batch",
];

static COMPILED: LazyLock<Vec<(&'static Spec, Options)>> = LazyLock::new(|| {
    SIMPLE
        .iter()
        .map(|s| (s, Options::parse(s.options)))
        .collect()
});

static SUDO: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-A -b -E -H -K -k -n -P -S -s -i -u= -g= -C= -h= -p= -r= -t= -T= -U= --askpass --background --preserve-env? --set-home --remove-timestamp --reset-timestamp --non-interactive --preserve-groups --stdin --shell --login --user= --group= --close-from= --host= --prompt= --role= --type= --command-timeout= --other-user=",
    )
});
static ENV: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-i -0 -v -u= --ignore-environment --null --debug --unset= --block-signal? --default-signal? --ignore-signal?",
    )
});
static XARGS: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-0 -a=@ -d= -E= -e? -I= -i? -L= -l? -n= -P= -r -s= -t -x --null --arg-file=@ --delimiter= --eof? --replace? --max-lines? --max-args= --max-procs= --no-run-if-empty --max-chars= --verbose --exit",
    )
});
static WATCH: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-n= -d? -t -b -e -g -c -C -x -p -w -r -q= --interval= --differences? --no-title --beep --errexit --chgexit --color --no-color --exec --precise --no-wrap --no-rerun --equexit=",
    )
});
static SCRIPT: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-a -c= -e -f -q -E= -m= -o= --append --command= --return --flush --quiet --echo= --logging-format= --output-limit=",
    )
});
static FLOCK: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-s -e -x -u -n -o -F -w= -E= -c= --shared --exclusive --unlock --nonblock --nb --close --no-fork --verbose --timeout= --wait= --conflict-exit-code= --command=",
    )
});
static SU: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-l -m -p -P -w= -g= -G= -s= -c= -f --login --preserve-environment --pty --whitelist-environment= --group= --supp-group= --shell= --command= --session-command=",
    )
});
static TIME: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-p -v -q -a -f= -o= --portability --verbose --quiet --append --format= --output=",
    )
});

static SETARCH: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "-v -R -F -Z -L -X -B -I -T -S -3 --verbose --addr-no-randomize --fdpic-funcptrs --mmap-page-zero --addr-compat-layout --read-implies-exec --32bit --short-inode --whole-seconds --sticky-timeouts --uname-2.6 --4gb",
    )
});
static LOADER: LazyLock<Options> = LazyLock::new(|| {
    Options::parse(
        "--inhibit-cache --library-path= --inhibit-rpath= --audit= --preload= --argv0= --glibc-hwcaps-prepend= --glibc-hwcaps-mask=",
    )
});

/// The architecture names `setarch` is installed under (`linux32 CMD` is `setarch linux32
/// CMD`): each runs the command it is given.
const ARCH_ALIASES: &[&str] = &[
    "linux32",
    "linux64",
    "uname26",
    "i386",
    "i486",
    "i586",
    "i686",
    "athlon",
    "x86_64",
    "amd64",
    "ia64",
    "arm",
    "armh",
    "armv7l",
    "armv8l",
    "aarch64",
    "arm64",
    "ppc",
    "ppc32",
    "ppc64",
    "ppc64le",
    "ppcle",
    "s390",
    "s390x",
    "sparc",
    "sparc32",
    "sparc32bash",
    "sparc64",
    "mips",
    "mips32",
    "mips64",
    "parisc",
    "parisc32",
    "parisc64",
    "alpha",
    "loongarch",
    "loongarch64",
    "riscv64",
    "m68k",
];

/// Names that are wrappers (for rule warnings and reasons).
pub fn is_wrapper(name: &str) -> bool {
    matches!(
        name,
        "env"
            | "xargs"
            | "sudo"
            | "watch"
            | "script"
            | "flock"
            | "su"
            | "time"
            | "command"
            | "exec"
            | "eval"
            | "setarch"
    ) || SIMPLE.iter().any(|s| s.name == name)
        || ARCH_ALIASES.contains(&name)
        || is_loader(name)
}

/// Strip every wrapper in front of `words`' command. `Err` names a wrapper whose options are
/// not understood (or that changes the directory or splits a string runner does not parse).
pub fn unwrap(words: &[ArgWord]) -> Result<Unwrapped, String> {
    let mut out = Unwrapped::default();
    let mut i = 0;
    loop {
        let Some(w) = words.get(i).filter(|w| !w.dynamic) else {
            out.start = i;
            return Ok(out);
        };
        let rest = &words[i + 1..];
        // The dynamic loader and `setarch` run the program they are given, wherever they lie.
        let base = w.text.rsplit('/').next().unwrap_or_default();
        let parsed = if is_loader(base) {
            let s = options(base, rest, &LOADER, 0)?;
            (s.skip <= rest.len()).then(|| Step::at(i, base, true, s.skip))
        } else {
            // A program given by a path outside the system's directories is the file it names.
            let Some(name) = program::system_name(&w.text) else {
                out.start = i;
                return Ok(out);
            };
            match one(i, name, rest, &mut out)? {
                One::Step(step) => step,
                One::Script(layer, script) => {
                    out.layers.push(layer);
                    out.script = Some(script);
                    out.start = words.len();
                    return Ok(out);
                }
            }
        };
        match parsed {
            None => {
                out.start = i;
                return Ok(out);
            }
            Some(step) => {
                out.layers.push(step.layer);
                i += step.skip;
            }
        }
    }
}

/// What one wrapper does: wraps the command `Step::skip` words on (or nothing: `None`), or
/// runs a command string through a shell.
enum One {
    Step(Option<Step>),
    Script(Layer, ArgWord),
}

/// The wrapper `name` at index `i`, followed by `rest`.
fn one(i: usize, name: &str, rest: &[ArgWord], out: &mut Unwrapped) -> Result<One, String> {
    let step = match name {
        "command" => match rest.first().map(|a| a.text.as_str()) {
            Some("-v" | "-V") | None => None,
            Some("-p") => Some(Step::at(i, name, false, 2)),
            Some(a) if a.starts_with('-') => {
                return Err(format!("`command {a}` is not understood"));
            }
            Some(_) => Some(Step::at(i, name, false, 1)),
        },
        "env" => env(i, rest, out)?,
        opaque if OPAQUE.contains(&opaque) => {
            return Err(format!(
                "`{opaque}` runs commands written in its own syntax, which runner does not parse"
            ));
        }
        "xargs" => {
            let s = options(name, rest, &XARGS, 0)?;
            out.unseen_args = true;
            // `xargs` with no command runs `echo`: then it is the command itself.
            (s.skip <= rest.len()).then(|| Step::at(i, name, false, s.skip))
        }
        "sudo" => sudo(i, rest, out)?,
        "time" => {
            let s = options(name, rest, &TIME, 0)?;
            if let Some(o) = s.parsed.value(&["-o", "--output"]) {
                out.writes.push(o.clone());
            }
            (s.skip <= rest.len()).then(|| Step::at(i, name, false, s.skip))
        }
        "watch" => {
            let s = options(name, rest, &WATCH, 0)?;
            if s.skip > rest.len() {
                None
            } else if s.parsed.has(&["-x", "--exec"]) {
                Some(Step::at(i, name, true, s.skip))
            } else {
                return Ok(One::Script(
                    layer(i, name, true),
                    joined(&rest[s.skip - 1..])?,
                ));
            }
        }
        "script" => {
            let s = options(name, rest, &SCRIPT, 0)?;
            let Some(cmd) = s.parsed.value(&["-c", "--command"]).cloned() else {
                return Err("`script` without -c runs an interactive shell".into());
            };
            let file = rest
                .get(s.skip.saturating_sub(1))
                .filter(|_| s.skip <= rest.len());
            out.writes.push(match file {
                Some(f) => f.clone(),
                None => literal("typescript"),
            });
            return Ok(One::Script(layer(i, name, true), script_word(cmd)?));
        }
        "flock" => return flock(i, rest, out),
        "su" | "runuser"
            if name == "su"
                || rest
                    .iter()
                    .any(|a| a.text == "-c" || a.text.starts_with("--command")) =>
        {
            return su(i, name, rest);
        }
        "setarch" => {
            // `setarch ARCH [options] [program]`.
            if rest.first().is_some_and(|a| a.dynamic) {
                return Err("runner cannot tell which architecture `setarch` sets".into());
            }
            let s = options(name, rest.get(1..).unwrap_or(&[]), &SETARCH, 0)?;
            arch_step(i, name, rest.len().saturating_sub(1), s.skip + 1)?
        }
        arch if ARCH_ALIASES.contains(&arch) => {
            let s = options(name, rest, &SETARCH, 0)?;
            arch_step(i, name, rest.len(), s.skip)?
        }
        _ => simple(i, name, rest, out)?,
    };
    Ok(One::Step(step))
}

/// `setarch` and its architecture aliases: with no program they start an interactive shell.
fn arch_step(i: usize, name: &str, after: usize, skip: usize) -> Result<Option<Step>, String> {
    if skip.saturating_sub(usize::from(name == "setarch")) > after {
        return Err(format!(
            "`{name}` without a program runs a shell on its input"
        ));
    }
    Ok(Some(Step::at(i, name, true, skip)))
}

/// Whether `base` names the dynamic loader (`ld.so`, `ld-linux-x86-64.so.2`, `ld64.so.1`,
/// `ld-musl-x86_64.so.1`), which runs the program it is given.
fn is_loader(base: &str) -> bool {
    base == "ld.so"
        || ((base.starts_with("ld-linux")
            || base.starts_with("ld64")
            || base.starts_with("ld-musl"))
            && base.contains(".so"))
}

/// `sudo [options] [VAR=value ...] command`.
fn sudo(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<Option<Step>, String> {
    if rest
        .iter()
        .take_while(|a| a.text.starts_with('-'))
        .any(|a| {
            matches!(
                a.text.as_str(),
                "-e" | "--edit"
                    | "-l"
                    | "--list"
                    | "-D"
                    | "-V"
                    | "-v"
                    | "-h"
                    | "--help"
                    | "--version"
                    | "--validate"
            ) || a.text.starts_with("--chdir")
        })
    {
        return Err("`sudo` with that option does not simply run a command".into());
    }
    let s = options("sudo", rest, &SUDO, 0)?;
    // `sudo VAR=value cmd` sets VAR for the command.
    let mut k = s.skip.saturating_sub(1);
    while let Some(a) = rest.get(k) {
        match a.text.split_once('=') {
            Some((n, _)) if is_name(n) => {
                out.env.push((n.to_string(), !a.dynamic));
                k += 1;
            }
            _ => break,
        }
    }
    Ok((k < rest.len()).then(|| Step::at(i, "sudo", true, k + 1)))
}

/// `flock FILE command` or `flock FILE -c STRING` (`flock FD` runs nothing).
fn flock(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<One, String> {
    let s = options("flock", rest, &FLOCK, 0)?;
    let Some(target) = rest
        .get(s.skip.saturating_sub(1))
        .filter(|_| s.skip <= rest.len())
    else {
        return Err("`flock` without a file".into());
    };
    if target.text.chars().all(|c| c.is_ascii_digit()) && !target.dynamic {
        // `flock FD`: locks an open descriptor, runs nothing.
        return Ok(One::Step(None));
    }
    out.writes.push(target.clone());
    let after = &rest[s.skip..];
    let cmd = s.parsed.value(&["-c", "--command"]).cloned().or_else(|| {
        match after.first().map(|a| a.text.as_str()) {
            Some("-c" | "--command") => after.get(1).cloned(),
            _ => None,
        }
    });
    if let Some(cmd) = cmd {
        return Ok(One::Script(layer(i, "flock", true), script_word(cmd)?));
    }
    Ok(One::Step(Some(Step::at(i, "flock", true, s.skip + 1))))
}

/// `su -c STRING` and `runuser -c STRING`: the string runs in the shell `-s` names (a POSIX
/// shell or bash; any other shell's language is not analysed).
fn su(i: usize, name: &str, rest: &[ArgWord]) -> Result<One, String> {
    let s = options(name, rest, &SU, 0)?;
    let Some(cmd) = s.parsed.value(&["-c", "--command"]).cloned() else {
        return Err(format!("`{name}` without -c runs an interactive shell"));
    };
    if let Some(shell) = s.parsed.value(&["-s", "--shell"]) {
        let known = !shell.dynamic
            && program::system_name(&shell.text)
                .is_some_and(|b| super::invocation::SHELLS.contains(&b));
        if !known {
            return Err(format!(
                "`{name} -s {}` runs the command string in a shell runner does not analyse",
                shell.raw
            ));
        }
    }
    Ok(One::Script(layer(i, name, true), script_word(cmd)?))
}

/// A wrapper of [`SIMPLE`]: options, leading operands, then the command.
fn simple(
    i: usize,
    name: &str,
    rest: &[ArgWord],
    out: &mut Unwrapped,
) -> Result<Option<Step>, String> {
    let Some((s, opts)) = COMPILED.iter().find(|(s, _)| s.name == name) else {
        return Ok(None);
    };
    let st = options(name, rest, opts, s.leading)?;
    for (n, v) in &st.parsed.given {
        if let Some(v) = v
            .as_ref()
            .filter(|_| s.needs_rule && WRITE_OPTIONS.contains(&n.as_str()))
        {
            out.writes.push(v.clone());
        }
    }
    if st.skip > rest.len() {
        Ok(None)
    } else {
        Ok(Some(Step::at(i, name, s.needs_rule, st.skip)))
    }
}

struct Step {
    layer: Layer,
    /// Words from the wrapper's name to the wrapped command's name.
    skip: usize,
}

impl Step {
    fn at(i: usize, name: &str, needs_rule: bool, skip: usize) -> Step {
        Step {
            layer: layer(i, name, needs_rule),
            skip,
        }
    }
}

fn layer(at: usize, name: &str, needs_rule: bool) -> Layer {
    Layer {
        at,
        name: name.to_string(),
        needs_rule,
    }
}

struct Opts {
    parsed: flags::Parsed,
    /// Words from the wrapper's name to the wrapped command (more than the words there are
    /// when nothing is wrapped).
    skip: usize,
}

/// Parse a wrapper's options; the command starts `leading` operands after them.
fn options(name: &str, rest: &[ArgWord], opts: &Options, leading: usize) -> Result<Opts, String> {
    let parsed = flags::parse(
        name,
        rest,
        opts,
        Mode {
            posix: true,
            ..Mode::default()
        },
    )
    .map_err(|e| format!("runner cannot tell which command `{name}` runs: {e}"))?;
    let first = parsed.first_operand.unwrap_or(rest.len());
    if let Some(w) = rest
        .get(first..first + leading)
        .and_then(|ws| ws.iter().find(|w| w.dynamic))
    {
        return Err(format!(
            "runner cannot tell which command `{name}` runs: `{}` is expanded at run time",
            w.raw
        ));
    }
    Ok(Opts {
        parsed,
        skip: first + leading + 1,
    })
}

/// `env`: options, `NAME=VALUE` words, then the command.
fn env(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<Option<Step>, String> {
    for a in rest {
        let t = a.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        if t == "-S"
            || t.starts_with("-S")
            || t.starts_with("--split-string")
            || t.starts_with("-C")
            || t.starts_with("--chdir")
            || (t.starts_with('-') && !t.starts_with("--") && (t.contains('S') || t.contains('C')))
        {
            return Err(format!(
                "`env {t}` runs a command runner does not parse (a split string or another directory)"
            ));
        }
    }
    let s = options("env", rest, &ENV, 0)?;
    out.env_cleared |= s
        .parsed
        .has(&["-i", "--ignore-environment", "-u", "--unset"]);
    let mut k = s.skip - 1;
    while let Some(a) = rest.get(k) {
        match a.text.split_once('=') {
            Some((n, _)) if is_name(n) => {
                out.env.push((n.to_string(), !a.dynamic));
                k += 1;
            }
            _ => break,
        }
    }
    if k >= rest.len() {
        return Ok(None);
    }
    Ok(Some(Step::at(i, "env", false, k + 1)))
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A static word for `text`.
fn literal(text: &str) -> ArgWord {
    ArgWord {
        text: text.to_string(),
        raw: text.to_string(),
        ..ArgWord::default()
    }
}

/// The command string of `-c CMD`: it must not depend on an expansion.
fn script_word(cmd: ArgWord) -> Result<ArgWord, String> {
    if cmd.dynamic {
        return Err(format!(
            "the command string `{}` depends on an expansion",
            cmd.raw
        ));
    }
    Ok(cmd)
}

/// `watch`'s words joined into the string it gives `sh -c`.
fn joined(words: &[ArgWord]) -> Result<ArgWord, String> {
    if let Some(w) = words.iter().find(|w| w.dynamic) {
        return Err(format!(
            "the command `watch` runs depends on an expansion (`{}`)",
            w.raw
        ));
    }
    let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let raw: Vec<&str> = words.iter().map(|w| w.raw.as_str()).collect();
    Ok(ArgWord {
        text: text.join(" "),
        raw: raw.join(" "),
        ..ArgWord::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<ArgWord> {
        ArgWord::split(s)
    }

    fn start_of(s: &str) -> (usize, Vec<String>) {
        let u = unwrap(&words(s)).unwrap();
        (u.start, u.layers.iter().map(|l| l.name.clone()).collect())
    }

    #[test]
    fn finds_the_wrapped_command() {
        assert_eq!(start_of("timeout 10 cargo test").0, 2);
        assert_eq!(start_of("timeout -s KILL -k5 10 cargo test").0, 5);
        assert_eq!(start_of("nice -n 5 nohup git push").0, 4);
        assert_eq!(start_of("nice -5 git push").0, 2);
        assert_eq!(start_of("env -i FOO=1 BAR=2 git push").0, 4);
        assert_eq!(start_of("env -u HOME git push").0, 3);
        assert_eq!(start_of("stdbuf -oL -e 0 git push").0, 4);
        assert_eq!(start_of("ionice -c 3 git push").0, 3);
        assert_eq!(start_of("chrt -f 10 git push").0, 3);
        assert_eq!(start_of("taskset -c 0 git push").0, 3);
        assert_eq!(start_of("setsid -w git push").0, 2);
        assert_eq!(start_of("flock /tmp/l git push").0, 2);
        assert_eq!(start_of("xargs -0 -n1 git push").0, 3);
        assert_eq!(start_of("xargs -I {} git push {}").0, 3);
        assert_eq!(start_of("busybox rm -rf x").0, 1);
        assert_eq!(start_of("command git push").0, 1);
        assert_eq!(start_of("sudo -u root -E git push").0, 4);
        assert_eq!(start_of("doas -u root git push").0, 3);
        assert_eq!(start_of("chroot /x git push").0, 2);
        assert_eq!(start_of("setarch x86_64 -R git push").0, 3);
        assert_eq!(start_of("setarch x86_64 git push").0, 2);
        assert_eq!(start_of("linux32 --addr-no-randomize git push").0, 2);
        assert_eq!(
            start_of("/lib64/ld-linux-x86-64.so.2 /usr/bin/git push").0,
            1
        );
        assert_eq!(start_of("ld.so --library-path /x git push").0, 3);
        // A program given by a path is the file it names, not the wrapper it is named like.
        assert_eq!(start_of("./timeout 5 git push").0, 0);
        assert_eq!(start_of("tools/env git push").0, 0);
        assert_eq!(start_of("/usr/bin/timeout 5 /usr/bin/env git push").0, 3);
        assert_eq!(
            start_of("sudo timeout 5 nice git push").1,
            ["sudo", "timeout", "nice"]
        );
        // Not wrappers (or nothing wrapped).
        assert_eq!(start_of("command -v git").0, 0);
        assert_eq!(start_of("env").0, 0);
        assert_eq!(start_of("git push").0, 0);
        assert!(unwrap(&words("xargs git")).unwrap().unseen_args);
    }

    #[test]
    fn command_strings_are_returned() {
        for (cmd, script) in [
            ("watch -n 1 git push origin", "git push origin"),
            ("script -qc git-push /dev/null", "git-push"),
            ("su -c git-push root", "git-push"),
            ("flock /tmp/l -c git-push", "git-push"),
        ] {
            let u = unwrap(&words(cmd)).unwrap();
            assert_eq!(u.script.map(|s| s.text).as_deref(), Some(script), "{cmd}");
        }
    }

    #[test]
    fn unknown_wrapper_options_are_errors() {
        for cmd in [
            "timeout --bogus 5 git push",
            "env -S 'git push'",
            "env --split-string=git push",
            "env -C /tmp git push",
            "env -iS git push",
            "sudo -e /etc/x",
            "sudo -D /tmp git push",
            "nice --weird git push",
            "xargs --frobnicate git",
            "script git",
            "setarch x86_64",
            "linux32",
            "su -s /bin/zsh -c ls",
        ] {
            assert!(unwrap(&words(cmd)).is_err(), "{cmd}");
        }
    }
}
