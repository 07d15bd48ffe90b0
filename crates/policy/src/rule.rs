//! Permission rules: parsing `Tool` / `Tool(specifier)` and matching one rule against a call.
//!
//! Syntax (Claude Code's permission rules): a tool name (`Bash`, `Edit`, `mcp__server__tool`, globs such as
//! `mcp__server__*`), optionally followed by a parenthesised specifier. `Tool(*)` is the same as
//! the bare name. Bash specifiers are command patterns ([`BashPattern`]); Read/Edit/Write/Glob/
//! Grep/NotebookEdit specifiers are gitignore-style path patterns ([`PathPattern`]); any other
//! tool's specifier is kept verbatim ([`Specifier::Opaque`]) for tools that interpret their own.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use crate::roots::SessionRoots;

/// A rule that cannot be parsed. The message quotes the rule and says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule `{rule}`: {problem}")]
pub struct RuleError {
    /// The rule exactly as written.
    pub rule: String,
    /// What is wrong with it.
    pub problem: String,
}

impl RuleError {
    fn new(rule: &str, problem: impl Into<String>) -> Self {
        RuleError {
            rule: rule.to_string(),
            problem: problem.into(),
        }
    }
}

/// A path specifier that cannot be compiled.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PatternError {
    /// It climbs out of its anchor with `..`.
    #[error("path pattern `{pattern}` may not contain `..`")]
    ParentDir {
        /// The pattern as written (trimmed).
        pattern: String,
    },
    /// Its glob does not compile.
    #[error("path pattern `{pattern}`: {source}")]
    Glob {
        /// The pattern as written (trimmed).
        pattern: String,
        /// What the glob compiler reported.
        source: globset::Error,
    },
}

/// Tools whose specifiers are path patterns.
const PATH_TOOLS: &[&str] = &["Read", "Edit", "Write", "Glob", "Grep", "NotebookEdit"];

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written (quoted in decision reasons).
    pub raw: String,
    /// The tool-name part.
    pub tool: String,
    /// What the rule says about the call's input.
    pub spec: Specifier,
}

/// The specifier part of a rule.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// No specifier, or `(*)`: every call of the tool.
    Any,
    /// A Bash command pattern.
    Bash(BashPattern),
    /// A file path pattern.
    Path(PathPattern),
    /// A specifier for a tool runner does not interpret (kept for future tools).
    Opaque(String),
}

impl Rule {
    /// Parse one rule.
    pub fn parse(raw: &str) -> Result<Rule, RuleError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(RuleError::new(raw, "the rule is empty"));
        }
        let (name, spec) = match text.find('(') {
            None => {
                if text.contains(')') {
                    return Err(RuleError::new(raw, "`)` without a matching `(`"));
                }
                (text, None)
            }
            Some(open) => {
                if !text.ends_with(')') {
                    return Err(RuleError::new(
                        raw,
                        "the specifier must end with `)` as the rule's last character",
                    ));
                }
                let inner = &text[open + 1..text.len() - 1];
                check_balanced(raw, inner)?;
                (&text[..open], Some(inner))
            }
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(RuleError::new(raw, "the tool name is empty"));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*')))
        {
            return Err(RuleError::new(
                raw,
                format!(
                    "the tool name `{name}` contains `{bad}`; names are letters, digits, `_`, `-` and `*`"
                ),
            ));
        }
        let spec = match spec {
            None => Specifier::Any,
            Some(s) if s.trim().is_empty() => {
                return Err(RuleError::new(
                    raw,
                    format!("the specifier is empty; write `{name}` or `{name}(*)` for every call"),
                ));
            }
            Some(s) if s.trim() == "*" => Specifier::Any,
            Some(s) if name == "Bash" => Specifier::Bash(BashPattern::parse(s)),
            Some(s) if PATH_TOOLS.contains(&name) => Specifier::Path(
                PathPattern::parse(s).map_err(|p| RuleError::new(raw, p.to_string()))?,
            ),
            Some(s) => Specifier::Opaque(s.to_string()),
        };
        Ok(Rule {
            raw: text.to_string(),
            tool: name.to_string(),
            spec,
        })
    }

    /// Whether the rule's tool-name part names `tool` (exact, an `mcp__server` prefix, or a glob).
    pub fn names_tool(&self, tool: &str) -> bool {
        tool_name_matches(&self.tool, tool)
    }

    /// Whether this is a bare-name rule (no specifier, or `(*)`).
    pub fn is_bare(&self) -> bool {
        matches!(self.spec, Specifier::Any)
    }
}

fn check_balanced(raw: &str, inner: &str) -> Result<(), RuleError> {
    let mut depth: i64 = 0;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(RuleError::new(
                        raw,
                        "unbalanced parentheses in the specifier",
                    ));
                }
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(RuleError::new(
            raw,
            "unbalanced parentheses in the specifier",
        ));
    }
    Ok(())
}

/// Tool-name matching: exact; `mcp__server` covers every `mcp__server__*` tool; `*` is a glob.
pub fn tool_name_matches(rule_name: &str, tool: &str) -> bool {
    if rule_name == tool {
        return true;
    }
    if rule_name.starts_with("mcp__")
        && !rule_name.contains('*')
        && rule_name.matches("__").count() == 1
        && tool.starts_with(rule_name)
        && tool[rule_name.len()..].starts_with("__")
    {
        return true;
    }
    if rule_name.contains('*') {
        let segs: Vec<Seg> = split_stars(rule_name);
        return glob_segments(&segs, tool, Tail::Exact);
    }
    false
}

/// One piece of a compiled command pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// Literal text.
    Lit(String),
    /// `*`: any sequence, spaces included.
    Any,
    /// Trailing ` *` or `:*`: nothing, or a space followed by anything (word boundary).
    WordTail,
}

/// A compiled Bash command pattern (`git diff:*`, `git diff *`, `npm run *:ci`, `npm test`).
#[derive(Debug, Clone)]
pub struct BashPattern {
    segs: Vec<Seg>,
    /// The literal text before the first wildcard, for suggestions and reasons.
    pub raw: String,
}

/// How the end of the text relates to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The text is the whole command.
    Exact,
    /// The text is a static prefix; the rest is unknown and the pattern must match every
    /// continuation (allow matching with expansions).
    AnyContinuation,
    /// The text is a static prefix; the pattern matches if some continuation matches
    /// (deny matching with expansions).
    SomeContinuation,
}

impl BashPattern {
    /// Compile a Bash specifier.
    pub fn parse(spec: &str) -> BashPattern {
        let spec = spec.trim();
        let (body, tail) = if let Some(b) = spec.strip_suffix(":*") {
            (b, true)
        } else if let Some(b) = spec.strip_suffix(" *") {
            (b, true)
        } else {
            (spec, false)
        };
        let mut segs = split_stars(body);
        if tail {
            segs.push(Seg::WordTail);
        }
        BashPattern {
            segs,
            raw: spec.to_string(),
        }
    }

    /// Whether the pattern matches `text` (a command's words joined by single spaces).
    pub fn matches(&self, text: &str, tail: Tail) -> bool {
        glob_segments(&self.segs, text, tail)
    }

    /// The program the pattern names: its first word, when the pattern spells one out
    /// (`zsh` for `zsh -c:*`, none for `*` or `z*`).
    pub fn program(&self) -> Option<&str> {
        let Some(Seg::Lit(first)) = self.segs.first() else {
            return None;
        };
        let word = first.split(' ').next()?;
        let complete = first.contains(' ') || !matches!(self.segs.get(1), Some(Seg::Any));
        (complete && !word.is_empty()).then(|| word.rsplit('/').next().unwrap_or(word))
    }
}

fn split_stars(s: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut lit = String::new();
    for c in s.chars() {
        if c == '*' {
            if !lit.is_empty() {
                segs.push(Seg::Lit(std::mem::take(&mut lit)));
            }
            if segs.last() != Some(&Seg::Any) {
                segs.push(Seg::Any);
            }
        } else {
            lit.push(c);
        }
    }
    if !lit.is_empty() {
        segs.push(Seg::Lit(lit));
    }
    segs
}

/// Match segments against text with memoised backtracking (patterns are short).
fn glob_segments(segs: &[Seg], text: &str, tail: Tail) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut memo = vec![None; (segs.len() + 1) * (chars.len() + 1)];
    go(segs, &chars, 0, 0, tail, &mut memo)
}

fn go(
    segs: &[Seg],
    text: &[char],
    si: usize,
    ti: usize,
    tail: Tail,
    memo: &mut Vec<Option<bool>>,
) -> bool {
    let key = si * (text.len() + 1) + ti;
    if let Some(v) = memo.get(key).copied().flatten() {
        return v;
    }
    let result = step(segs, text, si, ti, tail, memo);
    if let Some(slot) = memo.get_mut(key) {
        *slot = Some(result);
    }
    result
}

fn step(
    segs: &[Seg],
    text: &[char],
    si: usize,
    ti: usize,
    tail: Tail,
    memo: &mut Vec<Option<bool>>,
) -> bool {
    let at_end = ti == text.len();
    let Some(seg) = segs.get(si) else {
        // Pattern exhausted: the text must be exhausted too, and nothing may follow.
        return at_end && tail != Tail::AnyContinuation;
    };
    if at_end {
        return match tail {
            Tail::Exact => segs[si..]
                .iter()
                .all(|s| matches!(s, Seg::Any | Seg::WordTail)),
            // Every continuation must match: only `*` accepts anything.
            Tail::AnyContinuation => segs[si..].iter().all(|s| matches!(s, Seg::Any)),
            Tail::SomeContinuation => true,
        };
    }
    match seg {
        Seg::Lit(lit) => {
            let lit: Vec<char> = lit.chars().collect();
            let n = lit.len().min(text.len() - ti);
            if text[ti..ti + n] != lit[..n] {
                return false;
            }
            if n < lit.len() {
                // Text ended inside the literal.
                return tail == Tail::SomeContinuation;
            }
            go(segs, text, si + 1, ti + n, tail, memo)
        }
        Seg::Any => (ti..=text.len()).any(|t| go(segs, text, si + 1, t, tail, memo)),
        Seg::WordTail => {
            // Either nothing more, or a space and then anything.
            text[ti] == ' ' && (si + 1 == segs.len() || go(segs, text, si + 1, ti + 1, tail, memo))
        }
    }
}

/// Where a path pattern is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// `//abs`: the filesystem root.
    Root,
    /// `~/x`: the home directory.
    Home,
    /// `/x`: the spec's directory.
    SpecDir,
    /// `./x` or bare `x`: the workdir.
    Workdir,
}

/// A gitignore-style path pattern from a Read/Edit rule.
#[derive(Debug, Clone)]
pub struct PathPattern {
    /// The pattern as written.
    pub raw: String,
    /// Where it is anchored.
    pub anchor: Anchor,
    /// Matcher for the path relative to the anchor.
    matcher: GlobMatcher,
    /// The same, ignoring case (for deny and ask rules).
    matcher_folded: GlobMatcher,
    /// The relative glob text (for protected-path checks).
    pub rel: String,
}

impl PathPattern {
    /// Compile a path specifier; `Err` says what is wrong.
    pub fn parse(spec: &str) -> Result<PathPattern, PatternError> {
        let raw = spec.trim();
        let (anchor, rest, anchored) = if let Some(r) = raw.strip_prefix("//") {
            (Anchor::Root, r, true)
        } else if let Some(r) = raw.strip_prefix("~/") {
            (Anchor::Home, r, true)
        } else if let Some(r) = raw.strip_prefix('/') {
            (Anchor::SpecDir, r, true)
        } else if let Some(r) = raw.strip_prefix("./") {
            (Anchor::Workdir, r, true)
        } else {
            (Anchor::Workdir, raw, false)
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.split('/').any(|c| c == "..") {
            return Err(PatternError::ParentDir {
                pattern: raw.to_string(),
            });
        }
        let rel = if rest.is_empty() {
            "**".to_string()
        } else if !anchored && !rest.contains('/') {
            // gitignore: a name without a slash matches at any depth.
            format!("**/{rest}")
        } else {
            rest.to_string()
        };
        let build = |fold: bool| {
            GlobBuilder::new(&rel)
                .literal_separator(true)
                .case_insensitive(fold)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|source| PatternError::Glob {
                    pattern: raw.to_string(),
                    source,
                })
        };
        Ok(PathPattern {
            raw: raw.to_string(),
            anchor,
            matcher: build(false)?,
            matcher_folded: build(true)?,
            rel,
        })
    }

    /// The directory the pattern's literal part names (its anchor joined with the components
    /// before the first one with a glob character): every path it matches is at or below it.
    pub fn base(&self, roots: &SessionRoots, home: Option<&Path>) -> Option<PathBuf> {
        let mut p = self.anchor_dir(roots, home)?;
        for c in self.literal_components() {
            p.push(c);
        }
        Some(p)
    }

    /// The components of the pattern before the first one with a glob character.
    pub fn literal_components(&self) -> Vec<&str> {
        self.rel
            .split('/')
            .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
            .collect()
    }

    /// Whether the pattern spells out the path `marker` (`.git`, `.github/workflows`) in its
    /// literal part and matches `path`: a rule that names a protected path, as opposed to one
    /// that happens to match it (`Edit(**)`, `Edit(.git*)`).
    pub fn names(
        &self,
        marker: &str,
        path: &Path,
        roots: &SessionRoots,
        home: Option<&Path>,
    ) -> bool {
        let lit: Vec<String> = self
            .literal_components()
            .iter()
            .map(|c| crate::paths::fold(c))
            .collect();
        let want: Vec<String> = marker.split('/').map(crate::paths::fold).collect();
        lit.windows(want.len()).any(|w| w == want.as_slice()) && self.matches(path, roots, home)
    }

    fn anchor_dir(&self, roots: &SessionRoots, home: Option<&Path>) -> Option<PathBuf> {
        Some(match self.anchor {
            Anchor::Root => PathBuf::from("/"),
            Anchor::Home => home?.to_path_buf(),
            Anchor::SpecDir => roots.spec_dir.clone(),
            Anchor::Workdir => roots.workdir.clone(),
        })
    }

    /// [`PathPattern::matches`] ignoring case and the characters a case-insensitive file
    /// system ignores: how deny and ask rules match, so they hold wherever the file system
    /// folds names (`.ENV` is `.env` on macOS).
    pub fn matches_folded(&self, path: &Path, roots: &SessionRoots, home: Option<&Path>) -> bool {
        let Some(anchor) = self.anchor_dir(roots, home) else {
            return false;
        };
        let fold_all = |p: &Path| -> Vec<String> {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(crate::paths::fold(&s.to_string_lossy())),
                    _ => None,
                })
                .collect()
        };
        let a = fold_all(&anchor);
        let p = fold_all(path);
        if p.len() < a.len() || p[..a.len()] != a[..] {
            return false;
        }
        let mut prefix = PathBuf::new();
        for c in &p[a.len()..] {
            prefix.push(c);
            if self.matcher_folded.is_match(&prefix) {
                return true;
            }
        }
        false
    }

    /// Whether the (absolute, normalized) `path` matches: the path itself or a directory that
    /// contains it (gitignore semantics: a matched directory covers its contents).
    pub fn matches(&self, path: &Path, roots: &SessionRoots, home: Option<&Path>) -> bool {
        let anchor: PathBuf = match self.anchor {
            Anchor::Root => PathBuf::from("/"),
            Anchor::Home => match home {
                Some(h) => h.to_path_buf(),
                None => return false,
            },
            Anchor::SpecDir => roots.spec_dir.clone(),
            Anchor::Workdir => roots.workdir.clone(),
        };
        let Ok(rel) = path.strip_prefix(&anchor) else {
            return false;
        };
        let mut prefix = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => prefix.push(s),
                _ => return false,
            }
            if self.matcher.is_match(&prefix) {
                return true;
            }
        }
        false
    }
}
