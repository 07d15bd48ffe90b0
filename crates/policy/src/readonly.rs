//! The read-only command set: commands that run without a rule in every mode.
//!
//! Defined as data: each program with the options its manual documents as only changing what
//! it prints (checked flag by flag against the GNU coreutils, grep, findutils, diffutils,
//! file, tree, sed and ripgrep manuals). An option not on its list — one that writes, runs a
//! program, reads a file named elsewhere, or simply one runner does not know — makes the
//! command not read-only, and [`check`] says which.

use std::path::Path;
use std::sync::LazyLock;

use super::options::{self, Compiled, Effect, Parsed, Style, Table};
use super::word::ArgWord;
use super::{git, sed};
use crate::roots::SessionRoots;

/// Why a command is not in the read-only set (shown in the permission decision's reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotReadOnly(pub String);

impl From<&str> for NotReadOnly {
    fn from(s: &str) -> Self {
        NotReadOnly(s.to_string())
    }
}

/// How a read-only program's words are read.
struct Program {
    name: &'static str,
    /// Its options, as an option table ([`Table`] syntax): a plain entry is harmless, an `r`
    /// entry's value is a file it reads, and any other entry (one that writes, runs a
    /// program, reads arguments from a file, or `u`) makes the command not read-only. `*`:
    /// every word is an operand (`echo`).
    table: Table,
    /// Every option is harmless, so a run-time expansion may stand where one could.
    expansions_ok: bool,
    /// Its operands are files it reads (for path confinement).
    reads_operands: bool,
}

/// [`Style::GNU`], for a table that lists every option of its program.
const GNU: Style = Style::GNU;

/// Like [`GNU`], with `-NUM` (`head -5`).
const GNU_NUMERIC: Style = Style {
    numeric: true,
    ..GNU
};

/// [`Style::EXACT`], for tables that list only the harmless options.
const EXACT: Style = Style::EXACT;

const fn p(
    name: &'static str,
    style: Style,
    options: &'static str,
    expansions_ok: bool,
    reads_operands: bool,
) -> Program {
    Program {
        name,
        table: Table {
            programs: &[],
            style,
            complete: style.prefixes,
            expansions_risky: !expansions_ok,
            options,
        },
        expansions_ok,
        reads_operands,
    }
}

const GREP: &str = "--exclude-from=u -E -F -G -P -i -y -w -x -z -s -v -V -b -n -H -h -o -q -a -I -r -R -L -l -c -T -Z -U -e= -f=r -m= -A= -B= -C= -d= -D= --extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file=r --ignore-case --no-ignore-case --word-regexp --line-regexp --null-data --no-messages --invert-match --version --help --max-count= --byte-offset --line-number --no-line-number --line-buffered --with-filename --no-filename --label= --only-matching --quiet --silent --binary-files= --text --directories= --devices= --recursive --dereference-recursive --include= --exclude= --exclude-dir= --files-without-match --files-with-matches --count --initial-tab --null --before-context= --after-context= --context= --group-separator= --no-group-separator --color|--colour? --binary";

/// The read-only programs (git and `cd` are checked on their own).
static PROGRAMS: &[Program] = &[
    p(
        "ls",
        GNU,
        "-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v -x -X -Z -1 -I= -T= -w= --all --almost-all --author --escape --ignore-backups --directory --dired --classify? --file-type --full-time --group-directories-first --no-group --human-readable --si --dereference-command-line --dereference-command-line-symlink-to-dir --inode --kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars --quote-name --reverse --recursive --size --context --zero --block-size= --color? --format= --hide= --hyperlink? --indicator-style= --ignore= --quoting-style= --sort= --time= --time-style= --tabsize= --width= --help --version",
        false,
        true,
    ),
    p(
        "cat",
        GNU,
        "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs --show-nonprinting --help --version",
        false,
        true,
    ),
    p("echo", EXACT, "*", true, false),
    p("pwd", EXACT, "-L -P", false, false),
    p(
        "head",
        GNU_NUMERIC,
        "-q -v -z -c= -n= --bytes= --lines= --quiet --silent --verbose --zero-terminated --help --version",
        false,
        true,
    ),
    p(
        "tail",
        GNU_NUMERIC,
        "-f -F -q -v -z -c= -n= -s= --follow? --retry --pid= --max-unchanged-stats= --bytes= --lines= --quiet --silent --verbose --zero-terminated --sleep-interval= --help --version",
        false,
        true,
    ),
    p("grep", GNU_NUMERIC, GREP, false, true),
    p("egrep", GNU_NUMERIC, GREP, false, true),
    p("fgrep", GNU_NUMERIC, GREP, false, true),
    p(
        "rg",
        EXACT,
        "-a -b -c -F -H -i -I -l -L -n -N -o -p -P -q -s -S -u -U -v -w -x -0 -. -A= -B= -C= -e= -f=r -g= -j= -m= -M= -r= -t= -T= -E= --after-context= --before-context= --context= --context-separator= --no-context-separator --auto-hybrid-regex --no-auto-hybrid-regex --binary --no-binary --block-buffered --no-block-buffered --byte-offset --no-byte-offset --case-sensitive --color= --colors= --column --no-column --count --count-matches --crlf --no-crlf --debug --trace --dfa-size-limit= --encoding= --no-encoding --engine= --field-context-separator= --field-match-separator= --file=r --files --files-with-matches --files-without-match --fixed-strings --no-fixed-strings --follow --no-follow --glob= --glob-case-insensitive --no-glob-case-insensitive --heading --no-heading --hidden --no-hidden --iglob= --ignore-case --ignore-file=r --ignore-file-case-insensitive --no-ignore-file-case-insensitive --include-zero --no-include-zero --invert-match --no-invert-match --json --no-json --line-buffered --no-line-buffered --line-number --no-line-number --line-regexp --max-columns= --max-columns-preview --no-max-columns-preview --max-count= --max-depth= --maxdepth= --max-filesize= --mmap --no-mmap --multiline --no-multiline --multiline-dotall --no-multiline-dotall --no-config --no-filename --with-filename --no-ignore --ignore --no-ignore-dot --ignore-dot --no-ignore-exclude --ignore-exclude --no-ignore-files --ignore-files --no-ignore-global --ignore-global --no-ignore-messages --ignore-messages --no-ignore-parent --ignore-parent --no-ignore-vcs --ignore-vcs --no-messages --messages --no-pcre2-unicode --pcre2-unicode --no-require-git --require-git --no-unicode --unicode --null --null-data --one-file-system --no-one-file-system --only-matching --passthru --passthrough --path-separator= --pcre2 --no-pcre2 --pcre2-version --pretty --quiet --regex-size-limit= --regexp= --replace= --smart-case --sort= --sortr= --sort-files --no-sort-files --stats --no-stats --text --no-text --threads= --trim --no-trim --type= --type-add= --type-clear= --type-list --type-not= --unrestricted --vimgrep --word-regexp --no-search-zip --no-pre --help --version",
        false,
        true,
    ),
    p(
        "wc",
        GNU,
        "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total= --help --version --files0-from=@",
        false,
        true,
    ),
    p("which", EXACT, "-a -s", true, false),
    p(
        "diff",
        GNU,
        "-q -s -c -e -n -y -t -T -r -N -i -E -Z -b -w -B -a -d -u -p -C= -U= -W= -F= -I= -x= -X=r -S= --normal --brief --report-identical-files --ed --rcs --side-by-side --left-column --suppress-common-lines --show-c-function --expand-tabs --initial-tab --suppress-blank-empty --recursive --no-dereference --new-file --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case --ignore-case --ignore-tab-expansion --ignore-trailing-space --ignore-space-change --ignore-all-space --ignore-blank-lines --text --strip-trailing-cr --minimal --speed-large-files --context? --unified? --width= --show-function-line= --label= --tabsize= --exclude= --exclude-from=r --starting-file= --from-file=r --to-file=r --ignore-matching-lines= --horizon-lines= --color? --palette= --help --version -l|--paginate!x -D|--ifdef=u --line-format=u --old-line-format=u --new-line-format=u --unchanged-line-format=u --old-group-format=u --new-group-format=u --changed-group-format=u --unchanged-group-format=u",
        false,
        true,
    ),
    p(
        "stat",
        GNU,
        "-L -f -t -c= --dereference --file-system --terse --cached= --format= --printf= --help --version",
        false,
        true,
    ),
    p(
        "du",
        GNU,
        "-0 -a -b -c -D -H -h -k -l -L -m -P -S -s -x -B= -d= -t= -X=r --null --all --apparent-size --bytes --total --dereference-args --human-readable --inodes --count-links --dereference --no-dereference --separate-dirs --si --summarize --one-file-system --time? --block-size= --max-depth= --threshold= --time-style= --exclude= --exclude-from=r --help --version --files0-from=@",
        false,
        true,
    ),
    p(
        "file",
        GNU,
        "-b -i -k -L -h -N -n -r -0 -d -l -v -e= -F= -P= --brief --mime --mime-type --mime-encoding --apple --extension --keep-going --dereference --no-dereference --no-pad --no-buffer --print0 --raw --debug --list --exclude= --exclude-quiet= --separator= --parameter= --help --version -c|--checking-printout!u -C|--compile!u -f|--files-from=@ -m|--magic-file=u -S|--no-sandbox!u -p|--preserve-date!u -s|--special-files!u -z|--uncompress!u -Z|--uncompress-noreport!u",
        false,
        true,
    ),
    p(
        "tree",
        EXACT,
        "-a -d -l -f -x -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -i -A -S -n -C -X -J -L= -P= -I= -T= --noreport --dirsfirst --filesfirst --inodes --device --du --si --prune --matchdirs --metafirst --ignore-case --charset= --filelimit= --timefmt= --sort= --help --version",
        false,
        true,
    ),
    p(
        "sort",
        GNU,
        "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k= -t= -S= --ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort --check? --merge --stable --unique --zero-terminated --debug --sort= --key= --field-separator= --buffer-size= --parallel= --batch-size= --help --version -o|--output=w --compress-program=x -T|--temporary-directory=d --files0-from=@ --random-source=u",
        false,
        true,
    ),
    p(
        "uniq",
        GNU,
        "-c -d -D -i -u -z -f= -s= -w= --count --repeated --all-repeated? --group? --ignore-case --unique --zero-terminated --skip-fields= --skip-chars= --check-chars= --help --version",
        false,
        true,
    ),
    p(
        "cut",
        GNU,
        "-n -s -z -b= -c= -d= -f= --complement --only-delimited --zero-terminated --bytes= --characters= --delimiter= --fields= --output-delimiter= --help --version",
        false,
        true,
    ),
    p(
        "tr",
        GNU,
        "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help --version",
        true,
        false,
    ),
    p("true", EXACT, "*", true, false),
    p("false", EXACT, "*", true, false),
    p(
        "basename",
        GNU,
        "-a -z -s= --multiple --zero --suffix= --help --version",
        true,
        false,
    ),
    p("dirname", GNU, "-z --zero --help --version", true, false),
    p(
        "realpath",
        GNU,
        "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical --quiet --strip --no-symlinks --zero --relative-to= --relative-base= --help --version",
        false,
        false,
    ),
    // Only waits: no files, no other programs (durations and --help/--version are its only
    // arguments). A long sleep is bounded by the Bash tool's timeout like any other command.
    p("sleep", GNU, "--help --version", true, false),
    p(
        "uname",
        GNU,
        "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version --machine --processor --hardware-platform --operating-system --help --version",
        false,
        false,
    ),
    // Its operands are `+FORMAT` only (checked in [`check`]): any other operand sets the clock.
    p(
        "date",
        GNU,
        "-u -R -d= -I? -f=r -r=r --date= --iso-8601? --rfc-3339= --rfc-email --reference=r --file=r --utc --universal --debug --resolution --help --version -s|--set=u",
        false,
        false,
    ),
    p("type", EXACT, "-a -f -p -P -t", false, false),
    p(
        "sed",
        GNU,
        "-n -E -r -s -u -z -e= -l= --quiet --silent --regexp-extended --expression= --debug --posix --sandbox --separate --unbuffered --null-data --line-length= --help --version -f|--file=@ -i|--in-place?u --follow-symlinks",
        false,
        true,
    ),
];

static COMPILED: LazyLock<Vec<(&'static Program, Compiled)>> = LazyLock::new(|| {
    PROGRAMS
        .iter()
        .map(|p| (p, Compiled::new(&p.table)))
        .collect()
});

/// `find`'s expression words: tests and actions that only look and print.
const FIND_NO_ARG: &[&str] = &[
    "-daystart",
    "-depth",
    "-d",
    "-follow",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-mount",
    "-noleaf",
    "-nowarn",
    "-warn",
    "-xdev",
    "-empty",
    "-executable",
    "-false",
    "-nogroup",
    "-nouser",
    "-readable",
    "-true",
    "-writable",
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-not",
    "!",
    "-a",
    "-and",
    "-o",
    "-or",
    "(",
    ")",
    ",",
    "-help",
    "--help",
    "-version",
    "--version",
];

/// `find` expression words with one argument (a pattern, number or name).
const FIND_ONE_ARG: &[&str] = &[
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-amin",
    "-atime",
    "-cmin",
    "-ctime",
    "-mmin",
    "-mtime",
    "-used",
    "-fstype",
    "-gid",
    "-uid",
    "-group",
    "-user",
    "-inum",
    "-links",
    "-name",
    "-iname",
    "-lname",
    "-ilname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-perm",
    "-size",
    "-type",
    "-xtype",
    "-context",
    "-printf",
];

/// `find` expression words whose argument is a file it looks at.
const FIND_FILE_ARG: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];

/// A read-only command's words, understood: what it reads and how.
#[derive(Debug, Clone, Default)]
pub struct Reads {
    /// Files and directories it reads (operands and file-valued options).
    pub paths: Vec<ArgWord>,
    /// Directories among `paths` it walks recursively (the command's directory when it names
    /// none), and whether it follows symlinks while doing so.
    pub recursive: Option<bool>,
}

/// Whether `argv` (after wrappers) is read-only. `Err` says why not.
pub fn check(argv: &[ArgWord], cwd: &Path, roots: &SessionRoots) -> Result<(), NotReadOnly> {
    let Some(name) = argv.first() else {
        return Err("it has no command".into());
    };
    let args = &argv[1..];
    match name.text.as_str() {
        "cd" | "chdir" | "pushd" | "popd" => check_cd(name.text.as_str(), args, cwd, roots),
        "git" => git::check_read_only(args).map_err(|e| NotReadOnly(e.0)),
        "test" | "[" => check_test(name.text.as_str(), args),
        "[[" => Ok(()),
        "printf" => check_printf(args),
        "command" => match args.first().map(|a| a.text.as_str()) {
            // `command -v NAME`: prints how a name would be found, runs nothing.
            Some("-v" | "-V") if args.iter().all(|a| !a.dynamic) => Ok(()),
            _ => Err("`command` runs the command it names".into()),
        },
        // Its operands are `+FORMAT` only: any other sets the clock.
        "date" => match date_setting(args) {
            Some(a) => Err(NotReadOnly(format!("`date {}` sets the clock", a.raw))),
            None => reads(argv).map(|_| ()),
        },
        // They set shell variables only; the names are checked on their own (a special name,
        // one that steers later commands, or an integer-typed one is denied).
        n if VARIABLE_BUILTINS.contains(&n) => Ok(()),
        _ => reads(argv).map(|_| ()),
    }
}

/// The first operand of `date` that is not a `+FORMAT` (a date to set the clock to).
fn date_setting(args: &[ArgWord]) -> Option<ArgWord> {
    let (_, table) = COMPILED.iter().find(|(p, _)| p.name == "date")?;
    options::parse(table, args)
        .operands
        .into_iter()
        .find(|a| !a.text.starts_with('+'))
}

/// Builtins that only set (or unset, or print) shell variables: read-only, since which
/// variables they set is decided by the variable checks.
pub const VARIABLE_BUILTINS: &[&str] = &[
    "export",
    "read",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "getopts",
    "mapfile",
    "readarray",
];

/// What a read-only program in `argv` reads; `Err` when it is not in the read-only set or its
/// words are not all harmless. Programs that read no file give an empty list.
pub fn reads(argv: &[ArgWord]) -> Result<Reads, NotReadOnly> {
    let Some(name) = argv.first() else {
        return Err("it has no command".into());
    };
    let prog = name.text.as_str();
    let args = &argv[1..];
    if prog == "find" {
        return find_reads(args);
    }
    let Some((program, table)) = COMPILED.iter().find(|(p, _)| p.name == prog) else {
        return Err(NotReadOnly(format!(
            "`{prog}` is not in the read-only command set"
        )));
    };
    if program.table.options == "*" {
        return Ok(Reads::default());
    }
    let parsed = options::parse(table, args);
    harmless(prog, program, &parsed)?;
    let mut out = Reads {
        paths: parsed
            .given
            .iter()
            .filter(|g| g.opt.effect == Effect::Reads)
            .filter_map(|g| g.value.clone())
            .collect(),
        recursive: None,
    };
    if !program.reads_operands {
        return Ok(out);
    }
    let mut operands = parsed.operands.clone();
    match prog {
        "grep" | "egrep" | "fgrep" => {
            if !parsed.has_any(&["-e", "--regexp", "-f", "--file"]) && !operands.is_empty() {
                operands.remove(0);
            }
            let recurse = parsed.has_any(&["-r", "-R", "--recursive", "--dereference-recursive"])
                || parsed
                    .last_value(&["-d", "--directories"])
                    .is_some_and(|v| v.text == "recurse");
            if recurse {
                out.recursive = Some(parsed.has_any(&["-R", "--dereference-recursive"]));
                if operands.is_empty() {
                    operands.push(ArgWord::literal("."));
                }
            }
        }
        "rg" => {
            let no_pattern =
                parsed.has_any(&["-e", "--regexp", "-f", "--file", "--files", "--type-list"]);
            if !no_pattern && !operands.is_empty() {
                operands.remove(0);
            }
            out.recursive = Some(parsed.has_any(&["-L", "--follow"]));
            if operands.is_empty() {
                operands.push(ArgWord::literal("."));
            }
        }
        "diff" if parsed.has_any(&["-r", "--recursive"]) => {
            out.recursive = Some(!parsed.has("--no-dereference"));
        }
        "ls" => {
            if parsed.has_any(&["-R", "--recursive"]) {
                out.recursive = Some(parsed.has_any(&["-L", "--dereference"]));
            }
            if operands.is_empty() {
                operands.push(ArgWord::literal("."));
            }
        }
        "du" => {
            out.recursive = Some(parsed.has_any(&["-L", "--dereference"]));
            if operands.is_empty() {
                operands.push(ArgWord::literal("."));
            }
        }
        "tree" => {
            out.recursive = Some(parsed.has("-l"));
            if operands.is_empty() {
                operands.push(ArgWord::literal("."));
            }
        }
        "uniq" if operands.len() > 1 => {
            return Err("`uniq` with two file arguments writes the second".into());
        }
        "sed" => {
            sed_check(&parsed, &mut operands)?;
        }
        _ => {}
    }
    out.paths
        .extend(operands.into_iter().filter(|w| w.text != "-" || w.dynamic));
    Ok(out)
}

/// Whether every option `parsed` found is harmless for `program`: `Err` names the first
/// that is not (unknown, expanded at run time, missing its value, or one that writes, runs or
/// reads arguments from a file).
fn harmless(prog: &str, program: &Program, parsed: &Parsed) -> Result<(), NotReadOnly> {
    if let Some(u) = parsed.unknown.first() {
        return Err(NotReadOnly(format!(
            "`{prog} {u}` is not an option runner knows to be read-only"
        )));
    }
    if let Some(e) = parsed.expanded.first().filter(|_| !program.expansions_ok) {
        return Err(NotReadOnly(format!(
            "`{}` is expanded at run time and could become any option of `{prog}`",
            e.raw
        )));
    }
    if let Some(g) = parsed.missing_value() {
        return Err(NotReadOnly(format!("`{prog} {}` needs a value", g.spelled)));
    }
    if let Some(g) = parsed
        .given
        .iter()
        .find(|g| !matches!(g.opt.effect, Effect::Plain | Effect::Reads))
    {
        let what = match g.opt.effect {
            Effect::Writes | Effect::Creates | Effect::WritesInto | Effect::Recreates => {
                "writes files"
            }
            Effect::Runs | Effect::Code => "runs another program",
            Effect::ArgFile => "reads its arguments from a file runner cannot check",
            _ => "is not an option runner knows to be read-only",
        };
        return Err(NotReadOnly(format!("`{prog} {}` {what}", g.spelled)));
    }
    Ok(())
}

/// sed: the script (first operand unless `-e` gives one) must do nothing but edit the stream;
/// the remaining operands are files it reads.
fn sed_check(parsed: &Parsed, operands: &mut Vec<ArgWord>) -> Result<(), NotReadOnly> {
    let mut scripts: Vec<ArgWord> = parsed
        .given
        .iter()
        .filter(|g| g.opt.name == "-e" || g.opt.name == "--expression")
        .filter_map(|g| g.value.clone())
        .collect();
    if scripts.is_empty() {
        if operands.is_empty() {
            return Err("`sed` without a script".into());
        }
        scripts.push(operands.remove(0));
    }
    for s in scripts {
        if s.dynamic {
            return Err(NotReadOnly(format!(
                "the sed script `{}` is expanded at run time",
                s.raw
            )));
        }
        if let Some(e) = sed::effects(&s.text).first() {
            return Err(NotReadOnly(match e {
                sed::SedEffect::Runs => format!("the sed script `{}` runs a command", s.raw),
                sed::SedEffect::Writes(f) => {
                    format!("the sed script `{}` writes the file `{f}`", s.raw)
                }
                sed::SedEffect::Reads(f) => {
                    format!("the sed script `{}` reads the file `{f}`", s.raw)
                }
                sed::SedEffect::Unparsed(why) => {
                    format!("runner cannot follow the sed script `{}`: {why}", s.raw)
                }
            }));
        }
    }
    Ok(())
}

/// `find`: options, start points, then an expression of harmless tests and actions only.
fn find_reads(args: &[ArgWord]) -> Result<Reads, NotReadOnly> {
    let mut out = Reads::default();
    let mut follow = false;
    let mut i = 0;
    // Options before the start points.
    while let Some(a) = args.get(i) {
        if a.dynamic {
            break;
        }
        match a.text.as_str() {
            "-H" | "-P" => i += 1,
            "-L" => {
                follow = true;
                i += 1;
            }
            "-D" => i += 2,
            t if t.starts_with("-O") && t[2..].chars().all(|c| c.is_ascii_digit()) => i += 1,
            _ => break,
        }
    }
    // Start points: up to the first word that starts an expression.
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if a.dynamic {
            if a.expands {
                return Err(NotReadOnly(format!(
                    "`find` arguments must be static for the read-only set, and `{}` is expanded at run time",
                    a.raw
                )));
            }
            out.paths.push(a.clone());
            i += 1;
            continue;
        }
        if t.starts_with('-') || t == "(" || t == "!" {
            break;
        }
        out.paths.push(a.clone());
        i += 1;
    }
    if out.paths.is_empty() {
        out.paths.push(ArgWord::literal("."));
    }
    while let Some(a) = args.get(i) {
        i += 1;
        if a.dynamic {
            return Err(NotReadOnly(format!(
                "`find` arguments must be static for the read-only set, and `{}` is expanded at run time",
                a.raw
            )));
        }
        let t = a.text.as_str();
        if t == "-follow" {
            follow = true;
        }
        if FIND_NO_ARG.contains(&t) {
            continue;
        }
        if FIND_ONE_ARG.contains(&t) {
            i += 1;
            continue;
        }
        if FIND_FILE_ARG.contains(&t) || (t.starts_with("-newer") && t.len() == 8) {
            if let Some(f) = args.get(i) {
                // `-newerXt` takes a date, the other `-newerXY` a file.
                if !t.ends_with('t') || !t.starts_with("-newer") || t.len() != 8 {
                    out.paths.push(f.clone());
                }
            }
            i += 1;
            continue;
        }
        return Err(NotReadOnly(format!(
            "`find {t}` can write files, run commands, or is not an expression runner knows to be read-only"
        )));
    }
    out.recursive = Some(follow);
    Ok(out)
}

/// `printf`: its only option, `-v NAME`, assigns a variable; the format and arguments are
/// harmless.
fn check_printf(args: &[ArgWord]) -> Result<(), NotReadOnly> {
    match args.first() {
        Some(a) if !a.dynamic && a.text.starts_with("-v") => {
            Err("`printf -v` assigns a variable".into())
        }
        Some(a) if a.dynamic && (a.text.is_empty() || a.text.starts_with('-')) => {
            Err(NotReadOnly(format!(
                "`printf {}` is expanded at run time and could become `-v NAME`",
                a.raw
            )))
        }
        _ => Ok(()),
    }
}

/// `test`/`[`: no `-v` (it evaluates a subscript) or `-R`, and no word expanded at run time
/// where an operator may stand (a value `-v` there is the unary test).
fn check_test(name: &str, args: &[ArgWord]) -> Result<(), NotReadOnly> {
    let mut words: Vec<&ArgWord> = args.iter().collect();
    if name == "[" {
        match words.last() {
            Some(w) if !w.dynamic && w.text == "]" => {
                words.pop();
            }
            _ => return Err("`[` without a closing `]`".into()),
        }
    }
    if let Some(w) = words.iter().find(|w| w.splits) {
        return Err(NotReadOnly(format!(
            "`{}` is split into words at run time and may become an operator of `{name}`",
            w.raw
        )));
    }
    for w in &words {
        if !w.dynamic && matches!(w.text.as_str(), "-v" | "-R") {
            return Err(NotReadOnly(format!(
                "`{name} {}` evaluates a variable's subscript",
                w.text
            )));
        }
    }
    let dynamic = |i: usize| words.get(i).is_some_and(|w| w.dynamic);
    let operator_positions: &[usize] = match words.len() {
        0 | 1 => &[],
        2 => &[0],
        3 => &[0, 1],
        4 => &[0, 1, 2],
        _ => {
            if words.iter().any(|w| w.dynamic) {
                return Err(NotReadOnly(format!(
                    "`{name}` with more than four words and a run-time expansion is not analysed"
                )));
            }
            &[]
        }
    };
    if let Some(&i) = operator_positions.iter().find(|&&i| dynamic(i)) {
        // A dynamic first word of 3 is an operand unless the second is dynamic too.
        let operand_ok = words.len() == 3 && i == 0 && !dynamic(1);
        if !operand_ok {
            return Err(NotReadOnly(format!(
                "`{}` is expanded at run time where `{name}` may read an operator",
                words[i].raw
            )));
        }
    }
    Ok(())
}

fn check_cd(
    name: &str,
    args: &[ArgWord],
    cwd: &Path,
    roots: &SessionRoots,
) -> Result<(), NotReadOnly> {
    let dirs: Vec<&ArgWord> = args
        .iter()
        .filter(|a| !(a.text.starts_with('-') && a.text.len() > 1 && !a.dynamic) && a.text != "--")
        .collect();
    match dirs.as_slice() {
        // The walk followed it back to where an earlier `pushd` left.
        [] if name == "popd" => Ok(()),
        [dir] if !dir.dynamic && dir.text != "-" && name != "popd" => {
            let target = super::paths::resolve(cwd, Path::new(&dir.text));
            if roots.is_inside_workspace(&target) {
                Ok(())
            } else {
                Err(NotReadOnly(format!(
                    "`{name} {}` leaves the workspace ({})",
                    dir.raw,
                    target.display()
                )))
            }
        }
        _ => Err(NotReadOnly(format!(
            "`{name}` is read-only only with one static directory inside the workspace"
        ))),
    }
}

/// What copying and archiving programs read (they are not read-only, but Read deny rules,
/// kernel file systems and symlinks followed out of the workspace hold for them whatever
/// allows them): `cp` and `rsync` sources, `tar`/`zip` members, with recursion and link
/// following as their options say, and the local files curl and wget send
/// ([`super::netreads`]). All but `zip` are read against their option tables; `None` for
/// other programs.
pub fn copy_reads(argv: &[ArgWord]) -> Option<Reads> {
    let name = argv.first()?;
    let prog = name.text.rsplit('/').next().unwrap_or_default();
    let args = &argv[1..];
    match prog {
        "cp" | "rsync" | "scp" => {
            let p = options::parse(options::tables::find(prog)?, args);
            let mut sources = p.operands.clone();
            if !p.has("--target-directory") {
                sources.pop();
            }
            let recursive = p.has_any(&["--recursive", "--archive", "-r"]);
            let follow = p.has_any(&["--dereference", "--copy-links"]) || !recursive;
            Some(Reads {
                paths: sources,
                recursive: recursive.then_some(follow),
            })
        }
        "tar" => {
            let p = options::parse(options::tables::find(prog)?, args);
            if !p.has_any(&["--create", "--append", "--update"]) {
                return None;
            }
            // Members are read relative to the directory a `-C` before them names, or the
            // command's: both are checked.
            let mut members = p.operands.clone();
            for dir in p.values("--directory").filter(|d| !d.dynamic) {
                for m in p.operands.iter().filter(|m| !m.text.starts_with('/')) {
                    let mut w = m.clone();
                    w.text = format!("{}/{}", dir.text.trim_end_matches('/'), m.text);
                    w.home_rest = None;
                    members.push(w);
                }
            }
            members.extend(p.values("--directory").filter(|d| d.dynamic).cloned());
            Some(Reads {
                paths: members,
                recursive: Some(p.has("--dereference")),
            })
        }
        "curl" | "wget" => Some(Reads {
            paths: super::netreads::reads(argv)?,
            recursive: None,
        }),
        "zip" => {
            let flag = |short: char, long: &str| {
                args.iter().any(|a| {
                    let t = a.text.as_str();
                    (t.len() > 1
                        && t.starts_with('-')
                        && !t.starts_with("--")
                        && t[1..].contains(short))
                        || t == long
                })
            };
            let mut members: Vec<ArgWord> = args
                .iter()
                .filter(|a| !a.text.starts_with('-') || a.dynamic)
                .cloned()
                .collect();
            if !members.is_empty() {
                members.remove(0);
            }
            Some(Reads {
                paths: members,
                recursive: flag('r', "--recurse-paths").then_some(!flag('y', "--symlinks")),
            })
        }
        _ => None,
    }
}

/// Programs outside the read-only set whose operands are files they read (a rule may allow
/// them; Read deny rules still hold for their operands).
const OTHER_READERS: &[&str] = &[
    "less",
    "more",
    "most",
    "bat",
    "batcat",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "base64",
    "base32",
    "basenc",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "cmp",
    "comm",
    "join",
    "paste",
    "fold",
    "fmt",
    "column",
    "tac",
    "rev",
    "iconv",
    "expand",
    "unexpand",
    "pr",
    "split",
    "csplit",
    "shuf",
    "look",
    "jq",
    "yq",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "xmllint",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "lzcat",
    "zless",
    "zmore",
    "zgrep",
    "zegrep",
    "zfgrep",
    "bzgrep",
    "xzgrep",
    "gzip",
    "gunzip",
    "bzip2",
    "xz",
    "zstd",
    "openssl",
    "gpg",
    "sh",
    "bash",
    "zsh",
    "python",
    "python3",
    "node",
    "ruby",
    "perl",
    "php",
    "vi",
    "vim",
    "nvim",
    "nano",
    "emacs",
    "view",
    "diff3",
    "sdiff",
    "colordiff",
    "wdiff",
    "patch",
    "mail",
    "sendmail",
    "nc",
    "ncat",
    "socat",
    "curl",
    "wget",
    "scp",
    "rsync",
    "dd",
    "install",
    "ln",
    "mv",
    "tee",
    "xargs",
];

/// For a file reader whose words are not all understood: every word that is not an option,
/// and every option value after `=`, as a file it may read (more than it reads: the checks
/// these feed only deny).
pub fn lenient_paths(argv: &[ArgWord]) -> Vec<ArgWord> {
    let Some(name) = argv.first() else {
        return vec![];
    };
    let base = name.text.rsplit('/').next().unwrap_or_default();
    let known = base == "find"
        || OTHER_READERS.contains(&base)
        || PROGRAMS.iter().any(|p| p.name == base && p.reads_operands);
    if !known {
        return vec![];
    }
    let mut out = Vec::new();
    for a in &argv[1..] {
        if let Some((_, v)) = a.text.split_once('=').filter(|_| a.text.starts_with('-')) {
            let mut w = a.clone();
            w.text = v.to_string();
            w.home_rest = None;
            out.push(w);
        } else if !a.text.starts_with('-') || a.dynamic {
            out.push(a.clone());
        } else if let Some(rest) = a.text.strip_prefix("-f").filter(|r| !r.is_empty()) {
            let mut w = a.clone();
            w.text = rest.to_string();
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<ArgWord> {
        ArgWord::split(s)
    }

    #[test]
    fn read_only_programs_and_their_options() {
        for ok in [
            "ls -la src",
            "ls --color=auto -1",
            "cat -n README.md",
            "head -5 a",
            "head -n 5 a",
            "tail -n +3 a",
            "grep -rn foo src",
            "grep -e x -e y f",
            "rg -n TODO",
            "rg --files",
            "rg -t rust -g *.rs x src",
            "wc -l a b",
            "find . -name *.rs -type f",
            "find -L . -maxdepth 2 -print0",
            "find . -newer Cargo.toml",
            "diff -u a b",
            "stat -c %s a",
            "du -sh .",
            "file -b a",
            "tree -L 2",
            "sort -u a",
            "uniq -c a",
            "cut -d : -f 1 a",
            "tr a-z A-Z",
            "sed -n 1,5p a",
            "sed -e s/a/b/ -e /x/d a",
            "sed -E s/(a)/\\1/g a",
            "basename a/b.rs .rs",
            "sleep 1",
            "echo -n hi",
            "[ -f a ]",
            "test -d b",
            "printf %s\\n a",
            // Abbreviations of harmless options, resolved as the program resolves them.
            "head --lin=3 a",
            "ls --almost -l",
            "grep --ignore-c --colo=never x f",
            "sort --rev --numeric a",
            // Values attached or expanded at run time where only a value can stand.
            "head -n$N a",
            "cut --delimiter=: -f1,2 a",
            "tail -fn20 a",
        ] {
            let r = check(&words(ok), Path::new("/w"), &roots());
            assert!(r.is_ok(), "{ok}: {r:?}");
        }
    }

    #[test]
    fn options_that_run_write_or_read_elsewhere_are_not_read_only() {
        for bad in [
            "rg --pre ./evil x",
            "rg --pre=./evil x",
            "rg --pre-glob *.x x",
            "rg -z x",
            "rg --search-zip x",
            "rg --hostname-bin ./evil x",
            "rg --hyperlink-format x x",
            "find . -exec rm {} ;",
            "find . -execdir rm {} ;",
            "find . -ok rm {} ;",
            "find . -delete",
            "find . -fprint /tmp/x",
            "find . -fprintf /tmp/x %p",
            "find . -fls /tmp/x",
            "find -files0-from list",
            "find . -frobnicate",
            "file -f list",
            "file -m magic x",
            "file --magic-file magic x",
            "file -z x",
            "file -C -m x",
            "file -p x",
            "sort -o out a",
            "sort --output=out a",
            "sort --compress-program=sh a",
            "sort -T /tmp a",
            "sort --files0-from=list",
            "sort --random-source=/dev/x a",
            "sort -ro out a",
            "uniq a b",
            "tree -o out",
            "tree -R",
            "tree --fromfile list",
            "diff -l a b",
            "diff --paginate a b",
            "du --files0-from=list",
            "wc --files0-from=list",
            "ls --frobnicate",
            "cat --number=3 a",
            "sort --out=x a",
            "wc --files0=list",
            "file --magic=m x",
            "date --se=2020-01-01",
            "sed --in=.bak s/a/b/ a",
            "sed -i s/a/b/ a",
            "sed --in-place s/a/b/ a",
            "sed -f script a",
            "sed 1e a",
            "sed /x/Ie\\ id a",
            "sed s/a/b/w\\ out a",
            "sed 1r/etc/passwd a",
            "printf -v PATH x",
            "test -v x",
            "[ -R x ]",
            "[ -f a",
            "xxd a",
        ] {
            let r = check(&words(bad), Path::new("/w"), &roots());
            assert!(r.is_err(), "{bad} was allowed");
        }
    }

    #[test]
    fn test_operators_cannot_come_from_expansions() {
        let dynw = |raw: &str, splits: bool| ArgWord {
            raw: raw.into(),
            dynamic: true,
            expands: true,
            splits,
            ..ArgWord::default()
        };
        let lit = ArgWord::literal;
        let ok = |w: Vec<ArgWord>| check_test("test", &w).is_ok();
        assert!(ok(vec![lit("-n"), dynw("\"$x\"", false)]));
        assert!(ok(vec![
            dynw("\"$a\"", false),
            lit("="),
            dynw("\"$b\"", false)
        ]));
        assert!(ok(vec![dynw("\"$x\"", false)]));
        assert!(!ok(vec![dynw("$x", true)]));
        assert!(!ok(vec![dynw("\"$op\"", false), dynw("\"$y\"", false)]));
        assert!(!ok(vec![lit("a"), dynw("\"$op\"", false), lit("b")]));
    }

    #[test]
    fn recursive_readers_are_reported() {
        let r = reads(&words("grep -R foo")).unwrap();
        assert_eq!(r.recursive, Some(true));
        assert_eq!(r.paths[0].text, ".");
        let r = reads(&words("grep -r foo src")).unwrap();
        assert_eq!(r.recursive, Some(false));
        let r = reads(&words("rg -L foo")).unwrap();
        assert_eq!(r.recursive, Some(true));
        let r = reads(&words("find -L src")).unwrap();
        assert_eq!(r.recursive, Some(true));
        let r = reads(&words("cat a")).unwrap();
        assert_eq!(r.recursive, None);
    }

    fn roots() -> SessionRoots {
        SessionRoots {
            spec_dir: "/w".into(),
            repo_root: Some("/w".into()),
            workdir: "/w".into(),
            additional_dirs: vec![],
            output_dir: "/o".into(),
            source_root: None,
        }
    }
}
