//! The default system prompt for an unattended coding agent in CI.

use std::path::Path;

/// Build the system prompt: who the agent is, where it works, which tools it has, and that no
/// human will answer. `append` is the spec's `system_prompt_append`.
pub fn system_prompt(
    workdir: &Path,
    tools: &[String],
    date: &str,
    is_git_repo: bool,
    append: Option<&str>,
) -> String {
    with_instructions(
        &default_instructions(),
        workdir,
        tools,
        date,
        is_git_repo,
        append,
    )
}

/// The system prompt with `instructions` (a spec's `system_prompt`) in place of runner's own:
/// the environment facts and `append` still follow, since the agent needs them either way.
pub fn with_instructions(
    instructions: &str,
    workdir: &Path,
    tools: &[String],
    date: &str,
    is_git_repo: bool,
    append: Option<&str>,
) -> String {
    let mut s = instructions.trim_end().to_string();
    s.push_str("\n\n");
    s.push_str(&environment(workdir, tools, date, is_git_repo));
    if let Some(extra) = append.map(str::trim).filter(|a| !a.is_empty()) {
        s.push('\n');
        s.push_str(extra);
        s.push('\n');
    }
    s
}

/// Runner's own instructions: the agent's role, how an unattended run works, working rules.
fn default_instructions() -> String {
    let mut s = String::new();
    s.push_str(
        "You are an autonomous software engineering agent running non-interactively inside a CI \
         job or batch automation, driven by `runner`. You complete the task in the user's first \
         message by using the tools provided, then stop.\n\n",
    );
    s.push_str("# How this run works\n");
    s.push_str(
        "- No human is watching and nobody will answer questions. Never ask for confirmation or \
         clarification: make reasonable, conservative assumptions, state them briefly, and \
         proceed.\n\
         - Every tool call is checked against a fixed permission policy. A denied call returns an \
         error explaining why; do not retry the same call in another form to get around the \
         policy. Find an allowed way or explain in your final answer what you could not do.\n\
         - Tool results may be truncated; read files in parts when they are large.\n\
         - When the task is done, reply with a short final summary of what you changed and how \
         you verified it. That final message is the job's result: make it self-contained.\n\n",
    );
    s.push_str("# Working rules\n");
    s.push_str(
        "- Stay inside the working directory unless the task says otherwise. Use absolute paths \
         with the file tools.\n\
         - Read a file before you edit or overwrite it. Prefer small, exact edits over rewriting \
         whole files.\n\
         - Keep changes minimal and focused on the task; match the existing code style.\n\
         - Do not commit, push, or change git configuration unless the task asks for it.\n\
         - Verify your work (build, tests, linters) when the tools allow it.\n\n",
    );
    s
}

/// The environment section: workdir, git, platform, date and the tools offered.
fn environment(workdir: &Path, tools: &[String], date: &str, is_git_repo: bool) -> String {
    let mut s = String::new();
    s.push_str("# Environment\n");
    s.push_str(&format!("- Working directory: {}\n", workdir.display()));
    s.push_str(&format!(
        "- Is the working directory a git repository: {}\n",
        if is_git_repo { "yes" } else { "no" }
    ));
    s.push_str(&format!(
        "- Platform: {} ({})\n",
        std::env::consts::OS,
        std::env::consts::ARCH
    ));
    s.push_str(&format!("- Today's date: {date}\n"));
    if tools.is_empty() {
        s.push_str("- Tools: none; answer from the task text alone.\n");
    } else {
        s.push_str(&format!("- Tools available: {}\n", tools.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_workdir_tools_date_and_append() {
        let p = system_prompt(
            Path::new("/w"),
            &["Read".into(), "Bash".into()],
            "2026-12-02",
            true,
            Some("Be brief."),
        );
        assert!(p.contains("Working directory: /w"));
        assert!(p.contains("Read, Bash"));
        assert!(p.contains("2026-12-02"));
        assert!(p.contains("nobody will answer"));
        assert!(p.ends_with("Be brief.\n"));
    }

    #[test]
    fn custom_instructions_replace_runners_and_keep_the_environment() {
        let p = with_instructions(
            "You are a release-notes writer.\n",
            Path::new("/w"),
            &["Read".into()],
            "2026-12-02",
            false,
            Some("Be brief."),
        );
        assert!(p.starts_with("You are a release-notes writer.\n\n# Environment\n"));
        assert!(!p.contains("nobody will answer"));
        assert!(p.contains("Tools available: Read"));
        assert!(p.ends_with("Be brief.\n"));
        let default = system_prompt(Path::new("/w"), &[], "2026-12-02", false, None);
        assert!(default.contains("make it self-contained.\n\n# Working rules\n"));
        assert!(default.contains("when the tools allow it.\n\n# Environment\n"));
    }
}
