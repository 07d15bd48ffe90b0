//! Bash command analysis: parse a command with brush-parser and reduce it to the simple commands
//! it would run and the files its redirections would write, or say why that cannot be done
//! safely.
//!
//! Fail closed: anything the walk does not model (functions, arithmetic commands, coprocesses,
//! `eval`/`exec`/`source`, expansions in command position, `${...}` with side effects, nested
//! substitutions inside `${...}`/`$((...))`) is [`Unanalysable`]. Command and process
//! substitutions are analysed recursively: their commands are part of the result.

use std::path::{Path, PathBuf};

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, RedirectList, SimpleCommand,
    Word,
};
use brush_parser::word::{ParameterExpr, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use super::paths;

/// Commands longer than this are never analysed (they are denied).
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// How a process substitution (`<(...)`, `>(...)`) word is shown; its commands are analysed.
pub const PROCESS_SUBSTITUTION: &str = "<(…)";

/// How deeply substitutions may nest before the analysis gives up.
const MAX_DEPTH: usize = 16;

/// How deeply brackets may nest (counted lexically, quotes ignored) before the command is
/// refused unparsed: the parser recurses per level and must not overflow the stack.
const MAX_BRACKET_DEPTH: usize = 32;

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

/// One word of a simple command after unquoting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgWord {
    /// The word's text; when `dynamic`, only the static prefix before the first expansion.
    pub text: String,
    /// Whether part of the word is only known at run time (parameter expansion, substitution,
    /// glob, tilde, ANSI-C escapes).
    pub dynamic: bool,
    /// The word as written in the command.
    pub raw: String,
    /// Whether something other than a glob pattern makes it dynamic (parameter expansion,
    /// substitution, tilde, ANSI-C escapes): its value cannot be bounded statically.
    pub expands: bool,
    /// For `~` or `~/rest` with nothing else dynamic: `rest` (the path relative to `$HOME`).
    pub home_rest: Option<String>,
}

impl ArgWord {
    fn literal(text: &str) -> ArgWord {
        ArgWord {
            text: text.into(),
            raw: text.into(),
            ..ArgWord::default()
        }
    }
}

/// A leading `NAME=value` assignment.
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
    /// Leading assignments (`FOO=1 cmd`), or the whole command for `FOO=1` alone.
    pub assignments: Vec<EnvAssignment>,
    /// All words, wrappers included (`timeout 10 cargo test`).
    pub words: Vec<ArgWord>,
    /// Index of the real command in `words` after stripping wrappers (`timeout`, `time`,
    /// `nice`, `nohup`, `stdbuf`, `command`, `builtin`, bare `xargs`).
    pub start: usize,
    /// Whether a bare `xargs` wrapper appends arguments read from stdin.
    pub args_from_stdin: bool,
    /// The directory the command runs in, as far as `cd` commands before it tell.
    pub cwd: PathBuf,
    /// The starting directory, when `cd` made it differ from `cwd` (a `cd` may fail, so
    /// relative paths are checked against both).
    pub alt_cwd: Option<PathBuf>,
    /// `bash -c SCRIPT` / `sh -c SCRIPT` with a static script: the script's commands are in
    /// the analysis, so this command itself only needs to pass deny and ask rules.
    pub shell_wrapper: bool,
}

impl SimpleCmd {
    /// The words from `from` on, joined by spaces, for rule matching. Returns the text and
    /// whether it stops at a dynamic word (the text is then only a static prefix).
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
        (out, false)
    }

    /// The real command's words (after wrappers).
    pub fn argv(&self) -> &[ArgWord] {
        self.words.get(self.start..).unwrap_or(&[])
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
    /// Resolved against the starting directory too, when `cd` made the two differ (both are
    /// checked, since a `cd` may fail).
    pub alt_path: Option<PathBuf>,
}

/// A file an input redirection (`< file`) would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The source word.
    pub word: ArgWord,
    /// The directory it resolves against.
    pub cwd: PathBuf,
    /// The starting directory too, when `cd` made the two differ.
    pub alt_cwd: Option<PathBuf>,
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
        start_cwd: cwd.to_path_buf(),
        cwd: cwd.to_path_buf(),
        out: Analysis::default(),
        opts: ParserOptions::default(),
        depth: 0,
    };
    w.source(command)?;
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

/// Names that run strings as code or change how later commands are looked up.
const CODE_RUNNERS: &[&str] = &[
    "eval", "exec", "source", ".", "alias", "trap", "enable", "coproc", "fc",
];

struct Walker {
    start_cwd: PathBuf,
    cwd: PathBuf,
    out: Analysis,
    opts: ParserOptions,
    depth: usize,
}

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

    /// The starting directory, when it differs from the tracked one.
    fn alt_cwd(&self) -> Option<PathBuf> {
        (self.cwd != self.start_cwd).then(|| self.start_cwd.clone())
    }

    /// Walk something that runs in a subshell: `cd` inside does not leak out.
    fn isolated<F>(&mut self, f: F) -> Result<(), Unanalysable>
    where
        F: FnOnce(&mut Self) -> Result<(), Unanalysable>,
    {
        let saved = self.cwd.clone();
        let r = f(self);
        self.cwd = saved;
        r
    }

    fn list(&mut self, list: &CompoundList) -> Result<(), Unanalysable> {
        for item in &list.0 {
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
            for c in &p.seq {
                self.isolated(|w| w.command(c))?;
            }
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
                self.out.commands.push(SimpleCmd {
                    assignments: vec![],
                    words: vec![ArgWord::literal("[[")],
                    start: 0,
                    args_from_stdin: false,
                    cwd: self.cwd.clone(),
                    alt_cwd: self.alt_cwd(),
                    shell_wrapper: false,
                });
                self.redirect_list(redirects.as_ref())
            }
        }
    }

    fn compound(&mut self, cc: &CompoundCommand) -> Result<(), Unanalysable> {
        match cc {
            CompoundCommand::BraceGroup(b) => self.list(&b.list),
            CompoundCommand::Subshell(s) => self.isolated(|w| w.list(&s.list)),
            CompoundCommand::ForClause(f) => {
                for v in f.values.iter().flatten() {
                    self.word(v)?;
                }
                self.list(&f.body.list)
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
                self.list(&w.0)?;
                self.list(&w.1.list)
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
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    let (name, static_value) = self.assignment(a)?;
                    assignments.push(EnvAssignment { name, static_value });
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
            return Ok(());
        }
        let (start, args_from_stdin) = strip_wrappers(&words);
        for (i, w) in words.iter().enumerate() {
            if i > start {
                break;
            }
            if w.dynamic || w.text.is_empty() {
                return unanalysable(format!(
                    "the command name `{}` depends on an expansion",
                    w.raw
                ));
            }
            if w.text.chars().any(char::is_whitespace) {
                return unanalysable(format!("the command name `{}` contains whitespace", w.raw));
            }
            if CODE_RUNNERS.contains(&w.text.as_str()) {
                return unanalysable(format!(
                    "`{}` runs text as shell code or changes how commands are found",
                    w.text
                ));
            }
        }
        let script = shell_script(&words[start..])?;
        let cmd = SimpleCmd {
            assignments,
            words,
            start,
            args_from_stdin,
            cwd: self.cwd.clone(),
            alt_cwd: self.alt_cwd(),
            shell_wrapper: script.is_some(),
        };
        if let Some(script) = script {
            self.out.commands.push(cmd);
            return self.isolated(|w| w.source(&script));
        }
        // Track `cd DIR` so later relative redirect targets resolve where the shell would.
        if let [name, dir] = cmd.argv()
            && name.text == "cd"
            && !dir.dynamic
        {
            self.cwd = paths::resolve(&self.cwd, Path::new(&dir.text));
        }
        self.out.commands.push(cmd);
        Ok(())
    }

    fn assignment(
        &mut self,
        a: &brush_parser::ast::Assignment,
    ) -> Result<(String, bool), Unanalysable> {
        use brush_parser::ast::{AssignmentName, AssignmentValue};
        let name = match &a.name {
            AssignmentName::VariableName(n) => n.clone(),
            AssignmentName::ArrayElementName(n, _) => {
                return unanalysable(format!("it assigns an array element of `{n}`"));
            }
        };
        let static_value = match &a.value {
            AssignmentValue::Scalar(w) => !self.word(w)?.dynamic,
            AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(k)?;
                    }
                    self.word(v)?;
                }
                false
            }
        };
        Ok((name, static_value))
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
            CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
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
                        let word = self.word(w)?;
                        self.out.reads.push(FileRead {
                            word,
                            cwd: self.cwd.clone(),
                            alt_cwd: self.alt_cwd(),
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
                    let mut acc = ArgWord::default();
                    self.pieces(&pieces, true, &mut acc)?;
                }
                Ok(())
            }
            IoRedirect::HereString(_, w) => self.word(w).map(|_| ()),
            IoRedirect::OutputAndError(w, _) => self.write_target(w),
        }
    }

    fn write_target(&mut self, w: &Word) -> Result<(), Unanalysable> {
        let a = self.word(w)?;
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
        let path = paths::resolve(&self.cwd, Path::new(&a.text));
        let alt = paths::resolve(&self.start_cwd, Path::new(&a.text));
        self.out.writes.push(FileWrite {
            target: a.text,
            alt_path: (alt != path).then_some(alt),
            path,
        });
        Ok(())
    }

    /// Unquote a word, analysing any substitutions inside it.
    fn word(&mut self, w: &Word) -> Result<ArgWord, Unanalysable> {
        let pieces = brush_parser::word::parse(&w.value, &self.opts).map_err(|e| Unanalysable {
            reason: format!("the word `{}` could not be parsed ({e})", w.value),
        })?;
        let mut acc = ArgWord {
            raw: w.value.clone(),
            ..ArgWord::default()
        };
        self.pieces(&pieces, false, &mut acc)?;
        Ok(acc)
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        in_dq: bool,
        acc: &mut ArgWord,
    ) -> Result<(), Unanalysable> {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => {
                    let glob_at = if in_dq { None } else { glob_start(s) };
                    match glob_at {
                        Some(i) => {
                            push_static(acc, &s[..i]);
                            acc.dynamic = true;
                            acc.home_rest = None;
                        }
                        None => push_static(acc, s),
                    }
                }
                WordPiece::SingleQuotedText(s) => push_static(acc, s),
                WordPiece::AnsiCQuotedText(s) => {
                    if s.contains('\\') {
                        expanded(acc);
                    } else {
                        push_static(acc, s);
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, true, acc)?;
                }
                WordPiece::TildeExpansion(t) => {
                    let at_start = !acc.dynamic && acc.text.is_empty();
                    expanded(acc);
                    if at_start && matches!(t, brush_parser::word::TildeExpr::Home) {
                        acc.home_rest = Some(String::new());
                    }
                }
                WordPiece::ParameterExpansion(expr) => {
                    check_parameter(expr)?;
                    expanded(acc);
                }
                WordPiece::CommandSubstitution(body)
                | WordPiece::BackquotedCommandSubstitution(body) => {
                    let body = body.clone();
                    self.isolated(|w| w.source(&body))?;
                    expanded(acc);
                }
                WordPiece::EscapeSequence(s) => {
                    let rest = s.strip_prefix('\\').unwrap_or(s);
                    if rest == "\n" {
                        // Line continuation.
                    } else if in_dq && !matches!(rest, "$" | "`" | "\"" | "\\") {
                        push_static(acc, s);
                    } else {
                        push_static(acc, rest);
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    if has_nested_code(&e.value) {
                        return unanalysable(format!(
                            "an arithmetic expansion `$(({}))` contains a substitution",
                            e.value
                        ));
                    }
                    expanded(acc);
                }
            }
        }
        Ok(())
    }
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

fn push_static(acc: &mut ArgWord, s: &str) {
    if let Some(rest) = &mut acc.home_rest {
        rest.push_str(s);
    }
    if !acc.dynamic {
        acc.text.push_str(s);
    }
}

/// Mark `acc` as holding a run-time expansion (not just a glob).
fn expanded(acc: &mut ArgWord) {
    acc.dynamic = true;
    acc.expands = true;
    acc.home_rest = None;
}

fn has_nested_code(s: &str) -> bool {
    s.contains("$(") || s.contains('`') || s.contains("<(") || s.contains(">(")
}

/// `${...}` forms: plain reads are fine; assignment, prompt expansion and nested code are not.
fn check_parameter(expr: &ParameterExpr) -> Result<(), Unanalysable> {
    if matches!(expr, ParameterExpr::AssignDefaultValues { .. }) {
        return unanalysable("a `${name:=value}` expansion assigns a variable");
    }
    if matches!(expr, ParameterExpr::Transform { .. }) {
        return unanalysable("a `${name@op}` transformation is not analysed");
    }
    // Nested strings (defaults, patterns, subscripts) stay unparsed in brush's AST: refuse any
    // substitution inside them rather than guess.
    if has_nested_code(&format!("{expr:?}")) {
        return unanalysable("a `${...}` expansion contains a substitution");
    }
    Ok(())
}

/// Shells whose `-c SCRIPT` is analysed as part of the command.
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh"];

/// For `bash -c SCRIPT ...` (also `sh`, `dash`, `zsh`, `ksh`, path-qualified, with option
/// clusters of `e`, `u`, `x`, `v` before or with the `c`): the script. A dynamic script is
/// unanalysable; any other option (`-i`, `-l`, `-s`, `--rcfile`, ...) makes it an ordinary
/// command that needs its own rule.
fn shell_script(argv: &[ArgWord]) -> Result<Option<String>, Unanalysable> {
    let Some(name) = argv.first() else {
        return Ok(None);
    };
    let base = name.text.rsplit('/').next().unwrap_or_default();
    if name.dynamic || !SHELLS.contains(&base) {
        return Ok(None);
    }
    let mut saw_c = false;
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if w.dynamic || !t.starts_with('-') || t.len() < 2 || t.starts_with("--") {
            break;
        }
        if !t[1..].chars().all(|c| "ceuxv".contains(c)) {
            return Ok(None);
        }
        saw_c |= t.contains('c');
        i += 1;
    }
    if !saw_c {
        return Ok(None);
    }
    match argv.get(i) {
        Some(script) if !script.dynamic => Ok(Some(script.text.clone())),
        Some(script) => unanalysable(format!(
            "the script given to `{} -c` (`{}`) depends on an expansion",
            base, script.raw
        )),
        None => Ok(None),
    }
}

/// Skip wrapper commands; returns the index of the real command and whether a bare `xargs`
/// feeds it arguments from stdin. A wrapper whose options are not understood is not stripped.
fn strip_wrappers(words: &[ArgWord]) -> (usize, bool) {
    let mut i = 0;
    let mut from_stdin = false;
    let st =
        |j: usize| -> Option<&str> { words.get(j).filter(|w| !w.dynamic).map(|w| w.text.as_str()) };
    while let Some(name) = st(i) {
        let mut j = i + 1;
        let ok = match name {
            "time" => {
                if st(j) == Some("-p") {
                    j += 1;
                }
                true
            }
            "nohup" | "builtin" => true,
            "command" => match st(j) {
                Some("-p") => {
                    j += 1;
                    true
                }
                Some(a) => !a.starts_with('-'),
                None => false,
            },
            "nice" => {
                match st(j) {
                    Some("-n") => j += 2,
                    Some(a)
                        if a.starts_with("--adjustment=")
                            || (a.len() > 1
                                && a.starts_with('-')
                                && a[1..].chars().all(|c| c.is_ascii_digit())) =>
                    {
                        j += 1
                    }
                    _ => {}
                }
                true
            }
            "timeout" => {
                loop {
                    match st(j) {
                        Some("--foreground" | "--preserve-status" | "-v" | "--verbose") => j += 1,
                        Some("-s" | "-k" | "--signal" | "--kill-after") => j += 2,
                        Some(a) if a.starts_with("--signal=") || a.starts_with("--kill-after=") => {
                            j += 1
                        }
                        _ => break,
                    }
                }
                // The duration.
                match st(j) {
                    Some(d)
                        if !d.starts_with('-')
                            && d.chars().next().is_some_and(|c| c.is_ascii_digit()) =>
                    {
                        j += 1;
                        true
                    }
                    _ => false,
                }
            }
            "stdbuf" => {
                loop {
                    match st(j) {
                        Some("-i" | "-o" | "-e") => j += 2,
                        Some(a)
                            if (a.len() > 2
                                && (a.starts_with("-i")
                                    || a.starts_with("-o")
                                    || a.starts_with("-e")))
                                || a.starts_with("--input=")
                                || a.starts_with("--output=")
                                || a.starts_with("--error=") =>
                        {
                            j += 1
                        }
                        _ => break,
                    }
                }
                true
            }
            "xargs" => match st(j) {
                Some(a) if !a.starts_with('-') => {
                    from_stdin = true;
                    true
                }
                _ => false,
            },
            _ => break,
        };
        if !ok || j >= words.len() {
            break;
        }
        i = j;
    }
    (i, from_stdin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &Analysis) -> Vec<String> {
        a.commands.iter().map(|c| c.match_text(c.start).0).collect()
    }

    #[test]
    fn splits_every_operator_and_newline() {
        let a = analyse(
            "echo a | echo b | echo c\nrm -rf ~ && echo d; x || y & z |& w",
            Path::new("/w"),
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
        let a = analyse("echo \"$(rm -rf x)\" `id` <(ls)", Path::new("/w")).unwrap();
        assert_eq!(names(&a), vec!["rm -rf x", "id", "ls", "echo "]);
    }

    #[test]
    fn unquoting_and_wrappers() {
        let a = analyse("timeout 10 nice -n 5 'git' \"diff\" a\\ b", Path::new("/w")).unwrap();
        let c = &a.commands[0];
        assert_eq!(c.start, 5);
        assert_eq!(c.match_text(c.start), ("git diff a b".to_string(), false));
    }

    #[test]
    fn redirect_targets_follow_cd() {
        let a = analyse("cd sub && echo x > out.txt 2>/dev/null", Path::new("/w")).unwrap();
        assert_eq!(a.writes.len(), 1);
        assert_eq!(a.writes[0].path, PathBuf::from("/w/sub/out.txt"));
        assert_eq!(a.writes[0].alt_path, Some(PathBuf::from("/w/out.txt")));
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
        ] {
            assert!(analyse(cmd, Path::new("/w")).is_err(), "{cmd}");
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
