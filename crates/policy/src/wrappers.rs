//! Commands that run another command: `timeout 10 cargo test`, `env FOO=1 make`, `xargs rm`,
//! `sudo apt-get install`, `watch 'git status'`. The wrapped command is found by parsing each
//! wrapper's options as its manual documents them, so it can be decided on its own: a rule for
//! a wrapper allows the wrapper, never what it wraps.
//!
//! A known wrapper whose options are not understood is an error: runner cannot tell which
//! command it runs, and the caller refuses the whole command.

use std::sync::LazyLock;

use super::options::{self, Compiled, Effect, Parsed, Style, Table};
use super::program;
use super::word::ArgWord;

/// Why a wrapper's command cannot be found: an option runner does not understand, one
/// expanded at run time, or a directory change or string split it does not follow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WrapperError(pub String);

impl From<&str> for WrapperError {
    fn from(s: &str) -> Self {
        WrapperError(s.to_string())
    }
}

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
    /// Its options, as an option table (options written `=w` name a file the wrapper
    /// writes; `u`: an option that makes it do something runner does not follow).
    table: Table,
    /// Operands before the wrapped command (`timeout`'s duration, `chrt`'s priority).
    leading: usize,
    needs_rule: bool,
}

/// Wrappers read their options as GNU `getopt_long` does, up to the first operand (the
/// command): abbreviations, clusters, attached values, `--`.
const GNU: Style = Style {
    prefixes: true,
    single_dash_long: false,
    posix: true,
    assignments: false,
    old_tar: false,
    response_files: false,
    numeric: false,
    negations: false,
};

/// Wrappers with their own parsers: long options only by their full names.
const EXACT: Style = Style {
    prefixes: false,
    ..GNU
};

/// `nice -5`: a number option.
const NUMERIC: Style = Style {
    numeric: true,
    ..GNU
};

/// A wrapper's options as a table: complete (an option it does not list is not understood).
const fn wrapper_table(style: Style, options: &'static str) -> Table {
    Table {
        programs: &[],
        style,
        complete: true,
        expansions_risky: true,
        options,
    }
}

const fn spec(
    name: &'static str,
    style: Style,
    options: &'static str,
    leading: usize,
    needs_rule: bool,
) -> Spec {
    Spec {
        name,
        table: wrapper_table(style, options),
        leading,
        needs_rule,
    }
}

/// Wrappers whose options are only flags and values, followed by the command.
static SIMPLE: &[Spec] = &[
    spec(
        "strace",
        GNU,
        "-f -F -q -v -V -c -C -w -i -r -t -T -x -y -k -n -Z -z -D -o|--output=w -e= -E= -p= -P= -s= -S= -u= -a= -X= -b= -I= -O= -U= --trace= --signal= --status= --summary-only --summary --summary-wall-clock --follow-forks --output-separately --absolute-timestamps? --relative-timestamps? --syscall-times? --string-limit= --env= --user= --decode-fds? --decode-pids? --quiet? --instruction-pointer --stack-trace --seccomp-bpf --kill-on-exit --successful-only --failed-only --columns=",
        0,
        true,
    ),
    spec(
        "ltrace",
        GNU,
        "-f -i -r -t -T -c -C -S -L -b -n= -w= -x= -e= -o|--output=w -p= -s= -u= -a= -A= -D= -F= -l= --library= --demangle --align= --indent=",
        0,
        true,
    ),
    spec(
        "valgrind",
        EXACT,
        "-q -v --log-file=w --xml-file=w --*?",
        0,
        true,
    ),
    spec(
        "firejail",
        EXACT,
        "--output=w --output-stderr=w --*?",
        0,
        true,
    ),
    spec(
        "unshare",
        GNU,
        "-m -u -i -n -p -U -C -T -f -r -c --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? --fork --kill-child? --mount-proc? --map-root-user --map-current-user --map-auto --propagation= --setgroups= --keep-caps -R= --root= -w= --wd= -S= --setuid= -G= --setgid= --monotonic= --boottime= --map-user= --map-group= --map-users= --map-groups=",
        0,
        true,
    ),
    spec(
        "nsenter",
        GNU,
        "-a --all -t= --target= -m? -u? -i? -n? -p? -U? -C? -T? --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? -S= --setuid= -G= --setgid= --preserve-credentials -r? --root? -w? --wd? -F --no-fork -Z --follow-context",
        0,
        true,
    ),
    spec(
        "systemd-run",
        GNU,
        "--user --system --scope -t --pty -P --pipe -q --quiet --wait -G --collect -d --same-dir --no-block --no-ask-password -r --remain-after-exit -u= --unit= -p= --property= -E= --setenv= --uid= --gid= --nice= --working-directory= --description= --slice= --service-type= -H= --host= -M= --machine=",
        0,
        true,
    ),
    spec("proxychains", EXACT, "-q -f=", 0, true),
    spec("proxychains4", EXACT, "-q -f=", 0, true),
    spec("torsocks", EXACT, "-q -d -i -u= -p= -a= -P=", 0, true),
    spec("faketime", EXACT, "-f -m --exclude-monotonic", 1, true),
    spec("nohup", GNU, "--help --version", 0, false),
    spec("builtin", EXACT, "", 0, false),
    spec("nice", NUMERIC, "-n|--adjustment=", 0, false),
    spec(
        "timeout",
        GNU,
        "-s= -k= -v -f -p --signal= --kill-after= --foreground --preserve-status --verbose",
        1,
        false,
    ),
    spec(
        "stdbuf",
        GNU,
        "-i= -o= -e= --input= --output= --error=",
        0,
        false,
    ),
    spec("setsid", GNU, "-c -f -w --ctty --fork --wait", 0, false),
    spec(
        "ionice",
        GNU,
        "-c= -n= -t --class= --classdata= --ignore",
        0,
        false,
    ),
    spec(
        "chrt",
        GNU,
        "-a -b -d -f -i -o -r -R -v -T= -P= -D= --all-tasks --batch --deadline --fifo --idle --other --rr --reset-on-fork --verbose --sched-runtime= --sched-period= --sched-deadline=",
        1,
        false,
    ),
    spec("taskset", GNU, "-a -c --all-tasks --cpu-list", 1, false),
    spec("busybox", EXACT, "", 0, false),
    spec("doas", EXACT, "-n -u= -s", 0, true),
    spec("chroot", GNU, "--userspec= --groups= --skip-chdir", 1, true),
    spec(
        "pkexec",
        EXACT,
        "--user= --disable-internal-agent --keep-cwd",
        0,
        true,
    ),
    spec("eatmydata", EXACT, "", 0, false),
    spec(
        "fakeroot",
        EXACT,
        "-l= -s= -i= -u --unknown-is-real --lib= --faked=",
        0,
        true,
    ),
    spec("unbuffer", EXACT, "-p", 0, false),
    spec("chronic", EXACT, "-e -v", 0, false),
    spec("caffeinate", EXACT, "-d -i -m -s -u -t=", 0, false),
    spec("catchsegv", EXACT, "", 0, false),
    spec("nocache", EXACT, "-n=", 0, false),
    spec(
        "numactl",
        GNU,
        "-a -l -b --all --localalloc --balancing -N= -m= -C= -p= -i= --cpunodebind= --membind= --physcpubind= --preferred= --interleave=",
        0,
        true,
    ),
    spec(
        "prlimit",
        GNU,
        "-v --verbose --as= --core= --cpu= --data= --fsize= --locks= --memlock= --msgqueue= --nice= --nofile= --nproc= --rss= --rtprio= --rttime= --sigpending= --stack=",
        0,
        true,
    ),
    spec(
        "setpriv",
        GNU,
        "-d --dump --nnp --no-new-privs --clear-groups --keep-groups --init-groups --groups= --inh-caps= --ambient-caps= --bounding-set= --ruid= --euid= --reuid= --rgid= --egid= --regid= --securebits= --pdeathsig= --selinux-label= --apparmor-profile= --reset-env",
        0,
        true,
    ),
    spec(
        "runuser",
        GNU,
        "-u= -g= -G= -l -m -p -s= --user= --group= --supp-group= --login --preserve-environment --shell= --",
        0,
        true,
    ),
    spec("gosu", EXACT, "", 1, true),
    spec("su-exec", EXACT, "", 1, true),
    spec("cgexec", GNU, "-g= --sticky", 0, true),
    spec(
        "xvfb-run",
        GNU,
        "-a -d -l -e= -f= -n= -p= -s= -w= --auto-servernum --auto-display --listen-tcp --error-file= --auth-file= --server-num= --xauth-protocol= --server-args= --wait=",
        0,
        false,
    ),
    spec(
        "dbus-run-session",
        EXACT,
        "--config-file= --dbus-daemon=",
        0,
        false,
    ),
    spec("tini", EXACT, "-s -v -w -g -l -e= -p=", 0, false),
    spec(
        "dumb-init",
        GNU,
        "-c -v --single-child --verbose -r= --rewrite=",
        0,
        false,
    ),
    // `entr -s` runs its operand through a shell: not an option runner accepts.
    spec("entr", EXACT, "-a -c -d -n -p -r -z", 0, false),
    spec(
        "ssh-agent",
        EXACT,
        "-c -D -d -k -s -a= -E= -t= -P= -O=",
        0,
        false,
    ),
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

static COMPILED: LazyLock<Vec<(&'static Spec, Compiled)>> = LazyLock::new(|| {
    SIMPLE
        .iter()
        .map(|s| (s, Compiled::new(&s.table)))
        .collect()
});

/// `sudo`: the options that make it do something other than run a command are `u`.
static SUDO_TABLE: Table = wrapper_table(
    GNU,
    "-A|--askpass -b|--background -E --preserve-env? -H|--set-home -K|--remove-timestamp -k|--reset-timestamp -n|--non-interactive -P|--preserve-groups -S|--stdin -s|--shell -i|--login -u|--user= -g|--group= -C|--close-from= -h? --host= -p|--prompt= -r|--role= -t|--type= -T|--command-timeout= -U|--other-user= -e|--edit!u -l|--list!u -D|--chdir=u -R|--chroot=u -V|--version!u -v|--validate!u --help!u",
);
/// `env`: a split string (`-S`) and another directory (`-C`) are not followed.
static ENV_TABLE: Table = wrapper_table(
    GNU,
    "-i|--ignore-environment -0|--null -v|--debug -u|--unset= --block-signal? --default-signal? --ignore-signal? -S|--split-string=u -C|--chdir=u",
);
static XARGS_TABLE: Table = wrapper_table(
    GNU,
    "-0|--null -a|--arg-file=@ -d|--delimiter= -E= -e|--eof? -I= -i|--replace? -L= -l|--max-lines? -n|--max-args= -P|--max-procs= -r|--no-run-if-empty -s|--max-chars= -t|--verbose -x|--exit -o|--open-tty --process-slot-var=",
);
static WATCH_TABLE: Table = wrapper_table(
    GNU,
    "-n|--interval= -d|--differences? -t|--no-title -b|--beep -e|--errexit -g|--chgexit -c|--color -C|--no-color -x|--exec -p|--precise -w|--no-wrap -r|--no-rerun -q|--equexit=",
);
static SCRIPT_TABLE: Table = wrapper_table(
    GNU,
    "-a|--append -c|--command= -e|--return -f|--flush -q|--quiet -E|--echo= -m|--logging-format= -o|--output-limit=",
);
static FLOCK_TABLE: Table = wrapper_table(
    GNU,
    "-s|--shared -e|-x|--exclusive -u|--unlock -n|--nb|--nonblock -o|--close -F|--no-fork --verbose -w|--timeout|--wait= -E|--conflict-exit-code= -c|--command=",
);
static SU_TABLE: Table = wrapper_table(
    GNU,
    "-l|--login -m|-p|--preserve-environment -P|--pty -w|--whitelist-environment= -g|--group= -G|--supp-group= -s|--shell= -c|--command= -f|--fast --session-command=",
);
static TIME_TABLE: Table = wrapper_table(
    GNU,
    "-p|--portability -v|--verbose -q|--quiet -a|--append -f|--format= -o|--output=w",
);
static SETARCH_TABLE: Table = wrapper_table(
    GNU,
    "-v|--verbose -R|--addr-no-randomize -F|--fdpic-funcptrs -Z|--mmap-page-zero -L|--addr-compat-layout -X|--read-implies-exec -B|--32bit -I|--short-inode -S|--whole-seconds -T|--sticky-timeouts -3|--3gb --4gb --uname-2.6",
);
/// The dynamic loader reads its options by their full names: any other word is the program.
static LOADER_TABLE: Table = wrapper_table(
    EXACT,
    "--inhibit-cache --library-path= --inhibit-rpath= --audit= --preload= --argv0= --glibc-hwcaps-prepend= --glibc-hwcaps-mask=",
);

/// GNU `parallel` (Perl's Getopt::Long, bundled, options before the command): the options
/// runner follows; any other is not understood.
static PARALLEL_TABLE: Table = wrapper_table(
    EXACT,
    "-k|--keep-order -0|--null --bar --eta -v|--verbose --tag --line-buffer --will-cite -X -m --group -u|--ungroup -j|--jobs= -n|--max-args= -N|--max-replace-args= -I= --colsep|-C= --halt= --delay= --timeout= -L|--max-lines=",
);

static SUDO: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&SUDO_TABLE));
static PARALLEL: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&PARALLEL_TABLE));
static ENV: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&ENV_TABLE));
static XARGS: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&XARGS_TABLE));
static WATCH: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&WATCH_TABLE));
static SCRIPT: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&SCRIPT_TABLE));
static FLOCK: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&FLOCK_TABLE));
static SU: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&SU_TABLE));
static TIME: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&TIME_TABLE));
static SETARCH: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&SETARCH_TABLE));
static LOADER: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&LOADER_TABLE));

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

/// Where GNU `parallel`'s command starts in `args` (the words after `parallel`), past its
/// options. `Err` when an option is not understood or is expanded at run time.
pub fn parallel_command(args: &[ArgWord]) -> Result<usize, WrapperError> {
    options("parallel", args, &PARALLEL, 0).map(|s| s.skip - 1)
}

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
pub fn unwrap(words: &[ArgWord]) -> Result<Unwrapped, WrapperError> {
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
fn one(i: usize, name: &str, rest: &[ArgWord], out: &mut Unwrapped) -> Result<One, WrapperError> {
    let step = match name {
        "command" => match rest.first().map(|a| a.text.as_str()) {
            Some("-v" | "-V") | None => None,
            Some("-p") => Some(Step::at(i, name, false, 2)),
            Some(a) if a.starts_with('-') => {
                return Err(WrapperError(format!("`command {a}` is not understood")));
            }
            Some(_) => Some(Step::at(i, name, false, 1)),
        },
        "env" => env(i, rest, out)?,
        opaque if OPAQUE.contains(&opaque) => {
            return Err(WrapperError(format!(
                "`{opaque}` runs commands written in its own syntax, which runner does not parse"
            )));
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
            out.writes.extend(s.writes);
            (s.skip <= rest.len()).then(|| Step::at(i, name, false, s.skip))
        }
        "watch" => {
            let s = options(name, rest, &WATCH, 0)?;
            if s.skip > rest.len() {
                None
            } else if s.parsed.has("--exec") {
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
            let Some(cmd) = s.parsed.last_value(&["--command"]).cloned() else {
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
        // `runuser -c STRING` is `su`; `runuser -u USER COMMAND` a simple wrapper.
        "su" | "runuser" if name == "su" || options::parse(&SU, rest).has("--command") => {
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
fn arch_step(
    i: usize,
    name: &str,
    after: usize,
    skip: usize,
) -> Result<Option<Step>, WrapperError> {
    if skip.saturating_sub(usize::from(name == "setarch")) > after {
        return Err(WrapperError(format!(
            "`{name}` without a program runs a shell on its input"
        )));
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
fn sudo(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<Option<Step>, WrapperError> {
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
fn flock(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<One, WrapperError> {
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
    let cmd = s.parsed.last_value(&["--command"]).cloned().or_else(|| {
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
fn su(i: usize, name: &str, rest: &[ArgWord]) -> Result<One, WrapperError> {
    let s = options(name, rest, &SU, 0)?;
    let Some(cmd) = s.parsed.last_value(&["--command"]).cloned() else {
        return Err(WrapperError(format!(
            "`{name}` without -c runs an interactive shell"
        )));
    };
    if let Some(shell) = s.parsed.last_value(&["--shell"]) {
        let known = !shell.dynamic
            && program::system_name(&shell.text)
                .is_some_and(|b| super::invocation::SHELLS.contains(&b));
        if !known {
            return Err(WrapperError(format!(
                "`{name} -s {}` runs the command string in a shell runner does not analyse",
                shell.raw
            )));
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
) -> Result<Option<Step>, WrapperError> {
    let Some((s, opts)) = COMPILED.iter().find(|(s, _)| s.name == name) else {
        return Ok(None);
    };
    let st = options(name, rest, opts, s.leading)?;
    out.writes.extend(st.writes);
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
    parsed: Parsed,
    /// Files the wrapper's options name for it to write (`time -o`, `strace -o`).
    writes: Vec<ArgWord>,
    /// Words from the wrapper's name to the wrapped command (more than the words there are
    /// when nothing is wrapped).
    skip: usize,
}

/// Parse a wrapper's options against its table; the command starts `leading` operands after
/// them. An option the table does not list, one marked as not followed, a missing value or
/// a word expanded at run time where an option may stand is an error.
fn options(
    name: &str,
    rest: &[ArgWord],
    table: &Compiled,
    leading: usize,
) -> Result<Opts, WrapperError> {
    let parsed = options::parse(table, rest);
    let not = |why: String| {
        Err(WrapperError(format!(
            "runner cannot tell which command `{name}` runs: {why}"
        )))
    };
    if let Some(u) = parsed.unknown.first() {
        return not(format!("`{name} {u}` is not an option runner knows"));
    }
    if let Some(e) = parsed.expanded.first() {
        return not(format!(
            "`{}` is expanded at run time and could become any option of `{name}`",
            e.raw
        ));
    }
    if let Some(g) = parsed.missing_value() {
        return not(format!("`{}` needs a value", g.spelled));
    }
    let mut writes = Vec::new();
    for g in &parsed.given {
        match g.opt.effect {
            Effect::Plain | Effect::Reads | Effect::ArgFile | Effect::Network => {}
            Effect::Writes | Effect::Creates => writes.extend(g.value.clone()),
            _ => {
                return not(format!(
                    "`{name} {}` makes it do something runner does not follow",
                    g.spelled
                ));
            }
        }
    }
    let first = parsed.first_operand.unwrap_or(rest.len());
    if let Some(w) = rest
        .get(first..first + leading)
        .and_then(|ws| ws.iter().find(|w| w.dynamic))
    {
        return not(format!("`{}` is expanded at run time", w.raw));
    }
    Ok(Opts {
        parsed,
        writes,
        skip: first + leading + 1,
    })
}

/// `env`: options, `NAME=VALUE` words, then the command.
fn env(i: usize, rest: &[ArgWord], out: &mut Unwrapped) -> Result<Option<Step>, WrapperError> {
    let s = options("env", rest, &ENV, 0)?;
    out.env_cleared |= s.parsed.has_any(&["--ignore-environment", "--unset"]);
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
fn script_word(cmd: ArgWord) -> Result<ArgWord, WrapperError> {
    if cmd.dynamic {
        return Err(WrapperError(format!(
            "the command string `{}` depends on an expansion",
            cmd.raw
        )));
    }
    Ok(cmd)
}

/// `watch`'s words joined into the string it gives `sh -c`.
fn joined(words: &[ArgWord]) -> Result<ArgWord, WrapperError> {
    if let Some(w) = words.iter().find(|w| w.dynamic) {
        return Err(WrapperError(format!(
            "the command `watch` runs depends on an expansion (`{}`)",
            w.raw
        )));
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
    fn wrapper_options_are_read_by_the_option_model() {
        // Abbreviations, clusters and attached values, as getopt_long reads them.
        assert_eq!(start_of("timeout --sig=KILL 5 git push").0, 3);
        assert_eq!(start_of("timeout --kill=5 -s TERM 10 git push").0, 5);
        assert_eq!(start_of("nice -n5 git push").0, 2);
        assert_eq!(start_of("xargs -0rn1 git push").0, 2);
        assert_eq!(start_of("env -iu HOME git push").0, 3);
        assert_eq!(start_of("sudo -Eu root git push").0, 3);
        assert_eq!(start_of("timeout -- 5 git push").0, 3);
        let writes = |s: &str| {
            unwrap(&words(s))
                .map(|u| u.writes.into_iter().map(|w| w.text).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(writes("strace -fo out.txt ls"), ["out.txt"]);
        assert_eq!(writes("strace --output out.txt ls"), ["out.txt"]);
        // `--out` begins `--output` and `--output-separately`: strace refuses it.
        assert!(unwrap(&words("strace --out=out.txt ls")).is_err());
        assert_eq!(writes("valgrind --log-file=v.log ls"), ["v.log"]);
        assert_eq!(writes("time -ao t.txt ls"), ["t.txt"]);
        assert!(writes("stdbuf -oL ls").is_empty());
        // parallel's options before its command.
        assert_eq!(parallel_command(&words("-kj4 git push ::: a")), Ok(1));
        assert_eq!(parallel_command(&words("--jobs=2 -I{} rm {} ::: a")), Ok(2));
        assert!(parallel_command(&words("--bogus rm")).is_err());
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
            // Abbreviations of options that do something else, and the loader's exact names.
            "env --ch=/ git push",
            "env --split=x",
            "sudo --ed /etc/x",
            "sudo -lU root",
            "ld.so --lib /x git push",
            "timeout -s",
        ] {
            assert!(unwrap(&words(cmd)).is_err(), "{cmd}");
        }
    }
}
