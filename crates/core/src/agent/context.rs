//! Context management: token estimates, microcompact and autocompact.
//!
//! Before each request the loop estimates how many tokens the request holds
//! ([`ContextState::estimate`]): the last response's real usage (its whole context: input,
//! cache and output tokens) plus about one token per four bytes of what was added since. With
//! no usage yet (first request, or just after a compaction) everything is estimated.
//!
//! **Microcompact** works on the request copy only ([`microcompact`]); the stored conversation
//! and the transcript keep every tool result in full. Once the estimate passes
//! `microcompact_threshold` of the window, the content of tool results older than the last
//! `microcompact_keep_turns` turns is replaced by a stub, but only when that frees at least
//! `microcompact_min_savings_tokens`: clearing changes the request prefix, so the prompt cache
//! misses once from the first cleared result on; a large saving pays that back within a turn
//! or two. Cleared ids are remembered and cleared in every later request, so after that one
//! miss the prefix is stable again and the cache keeps hitting.
//!
//! **Autocompact** ([`super::compact`]) makes one model call that summarizes the conversation, when
//! the estimate passes `autocompact_threshold` of the window or the API answered `prompt is
//! too long`. The stored conversation is then replaced by one user message holding the
//! original task prompt and the summary; the transcript gets a `compact_boundary` system
//! record and an `isCompactSummary` user record (Claude Code's shape). The call counts toward
//! the token and cost budgets but is not a turn. [`MAX_COMPACT_FAILURES`] failed compactions
//! in a row end the task with `context_exhausted`, and so does the first compaction after which
//! the server still rejects a request at least as large as the one that made runner compact
//! ([`Rejected`]): when the task itself (system prompt, tools, the first message) does not
//! fit, summarizing again only adds billed calls.

use std::collections::{BTreeSet, HashMap};

use crate::model::{ContentBlock, Message, Role, ToolSpec};
use crate::outcome::{Outcome, OutcomeKind};

/// Failed compactions in a row that end the task (`context_exhausted`), as Claude Code's
/// circuit breaker.
pub(crate) const MAX_COMPACT_FAILURES: u32 = 3;
/// Output cap of the summarizing call.
pub(crate) const COMPACT_MAX_TOKENS: u32 = 16_000;
/// Characters kept of one tool result in the text the summarizer reads.
const RENDER_RESULT_CHARS: usize = 2_000;
/// Share of the context window (in tokens, ~4 bytes each) the summarizer's input may use,
/// by the number of compactions that already failed in a row.
pub(super) const RENDER_WINDOW_SHARE: [f64; 3] = [0.5, 0.3, 0.15];

/// Context settings (the spec's `context:` section over these defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextPolicy {
    /// Summarize when the estimate reaches `autocompact_threshold`.
    pub autocompact: bool,
    /// Fraction of the window at which autocompact runs.
    pub autocompact_threshold: f64,
    /// Fraction of the window above which old tool results are cleared.
    pub microcompact_threshold: f64,
    /// Tool results of this many most recent turns are kept.
    pub microcompact_keep_turns: usize,
    /// Least saving (tokens) for which clearing is worth a prompt-cache miss.
    pub microcompact_min_savings_tokens: u64,
}

impl ContextPolicy {
    /// The policy of a spec's `context:` section: its settings over the defaults.
    pub fn from_settings(s: &crate::spec::ContextSettings) -> ContextPolicy {
        let mut p = ContextPolicy::default();
        if let Some(b) = s.autocompact {
            p.autocompact = b;
        }
        if let Some(f) = s.autocompact_threshold {
            p.autocompact_threshold = f;
        }
        if let Some(f) = s.microcompact_threshold {
            p.microcompact_threshold = f;
        }
        if let Some(n) = s.microcompact_keep_turns {
            p.microcompact_keep_turns = n as usize;
        }
        if let Some(n) = s.microcompact_min_savings_tokens {
            p.microcompact_min_savings_tokens = n;
        }
        p
    }
}

impl Default for ContextPolicy {
    fn default() -> Self {
        ContextPolicy {
            autocompact: true,
            autocompact_threshold: 0.85,
            microcompact_threshold: 0.5,
            microcompact_keep_turns: 3,
            microcompact_min_savings_tokens: 20_000,
        }
    }
}

/// What the loop remembers about the context between requests.
#[derive(Debug, Clone, Default)]
pub struct ContextState {
    /// The last main-loop response's whole context in tokens (input + cache + output) and how
    /// many stored messages it covered.
    pub calibration: Option<(u64, usize)>,
    /// Tool results (by tool_use id) cleared from requests; they stay cleared.
    pub cleared: BTreeSet<String>,
    /// Compactions that failed in a row (reset by a main-loop response).
    pub compact_failures: u32,
    /// Autocompacts that failed in a row (reset by a successful compaction); at
    /// [`MAX_COMPACT_FAILURES`] autocompact stops trying (Claude Code's circuit breaker).
    pub autocompact_failures: u32,
    /// A compaction just replaced the conversation (a `prompt is too long` right after it
    /// counts as a failed compaction).
    pub just_compacted: bool,
    /// The task's first prompt, carried into every compaction summary.
    pub task_prompt: Option<String>,
    /// The size of the last request the server rejected as too long (compared with the next
    /// rejection after a compaction).
    pub rejected: Option<Rejected>,
}

impl ContextState {
    /// Record a main-loop response: its real usage calibrates the next estimate.
    pub fn calibrate(&mut self, context_tokens: u64, messages: usize) {
        self.calibration = Some((context_tokens, messages));
        self.compact_failures = 0;
        self.just_compacted = false;
    }

    /// Estimated tokens of the next request over `messages` (the stored conversation):
    /// the calibration plus the rough size of the messages added since, or the rough size of
    /// everything (`fixed` covers the system prompt and tool schemas) without one.
    pub fn estimate(&self, messages: &[Message], fixed: impl FnOnce() -> u64) -> u64 {
        match self.calibration {
            Some((tokens, n)) if n <= messages.len() => messages[n..]
                .iter()
                .map(message_tokens)
                .fold(tokens, u64::saturating_add),
            _ => messages
                .iter()
                .map(message_tokens)
                .fold(fixed(), u64::saturating_add),
        }
    }
}

/// Rough tokens of a whole request: system prompt, tool schemas and messages.
pub(crate) fn request_estimate(system: &str, tools: &[ToolSpec], messages: &[Message]) -> u64 {
    messages.iter().map(message_tokens).fold(
        text_tokens(system).saturating_add(text_tokens(
            &serde_json::to_string(tools).unwrap_or_default(),
        )),
        u64::saturating_add,
    )
}

/// The size of a request the server rejected as too long: the server's own token count and
/// maximum when its message gives them, and runner's rough estimate ([`request_estimate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// The request's tokens, as the server counted them.
    pub tokens: Option<u64>,
    /// The most the model takes, as the server said.
    pub maximum: Option<u64>,
    /// runner's rough estimate of the request.
    pub estimate: u64,
}

impl Rejected {
    /// The size of the request rejected with `error`, whose rough estimate is `estimate`.
    /// The server's count and maximum are read from its message where it gives them:
    /// Anthropic's `prompt is too long: N tokens > M maximum`, llama.cpp's `request (N tokens)
    /// exceeds the available context size (M tokens)`, OpenAI's `maximum context length is M
    /// tokens. However, your messages resulted in N tokens`.
    pub fn new(error: &str, estimate: u64) -> Rejected {
        let (tokens, maximum) = server_size(&error.to_ascii_lowercase()).unwrap_or_default();
        Rejected {
            tokens,
            maximum,
            estimate,
        }
    }

    /// Whether this request is smaller than `earlier`: by the server's counts when both have
    /// one, else by runner's estimates.
    pub fn smaller_than(&self, earlier: &Rejected) -> bool {
        match (self.tokens, earlier.tokens) {
            (Some(now), Some(before)) => now < before,
            _ => self.estimate < earlier.estimate,
        }
    }

    fn describe(&self) -> String {
        match (self.tokens, self.maximum) {
            (Some(n), Some(m)) => format!("{n} tokens; the model takes at most {m}"),
            (Some(n), None) => format!("{n} tokens"),
            _ => format!("about {} tokens by runner's estimate", self.estimate),
        }
    }
}

/// The whole numbers in `s`, in order (saturating at `u64::MAX`).
fn numbers(s: &str) -> impl Iterator<Item = u64> + '_ {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap_or(u64::MAX))
}

/// (tokens, maximum) from a lowercased too-long message (see [`Rejected::new`]).
fn server_size(m: &str) -> Option<(Option<u64>, Option<u64>)> {
    if let Some((_, rest)) = m.split_once("prompt is too long") {
        let mut n = numbers(rest);
        return Some((n.next(), n.next()));
    }
    if let Some((before, after)) = m.split_once("exceeds the available context size") {
        return Some((numbers(before).last(), numbers(after).next()));
    }
    if let Some((_, rest)) = m.split_once("maximum context length is") {
        let maximum = numbers(rest).next();
        let tokens = rest
            .split_once("resulted in")
            .and_then(|(_, r)| numbers(r).next());
        return Some((tokens, maximum));
    }
    None
}

/// The `context_exhausted` outcome for a compaction after which the server still rejected a
/// request no smaller than the one before it (`before`).
pub(crate) fn not_shrunk(before: &Rejected, after: &Rejected) -> Outcome {
    Outcome::new(
        OutcomeKind::ContextExhausted,
        format!(
            "prompt is too long: compacting the conversation did not shrink the request below \
             the size the server rejected ({}; after compacting: {}), so there is nothing left \
             to compact. The task itself does not fit the model's context window: shorten the \
             prompt or system_prompt_append, offer fewer tools, or use a model with a larger \
             window.",
            before.describe(),
            after.describe()
        ),
    )
}

/// Rough token count of a text: one token per four bytes, rounded up.
pub(crate) fn text_tokens(s: &str) -> u64 {
    (s.len() as u64).div_ceil(4)
}

/// Rough token count of one block.
pub(crate) fn block_tokens(b: &ContentBlock) -> u64 {
    match b {
        ContentBlock::Text { text, .. } => text_tokens(text),
        ContentBlock::Thinking { thinking, .. } => text_tokens(thinking),
        ContentBlock::RedactedThinking { data } => text_tokens(data),
        ContentBlock::ToolUse { name, input, .. } => {
            text_tokens(name) + text_tokens(&input.to_string())
        }
        ContentBlock::ToolResult { content, .. } => text_tokens(content),
        ContentBlock::Other(v) => text_tokens(&v.to_string()),
    }
}

/// Rough token count of one message (a few tokens of framing per block).
pub(crate) fn message_tokens(m: &Message) -> u64 {
    m.content.iter().map(|b| block_tokens(b) + 3).sum::<u64>() + 4
}

/// The stub that replaces a cleared tool result.
pub(crate) fn cleared_stub(tool: &str, chars: usize) -> String {
    format!(
        "[old tool result cleared: {tool} output of {chars} characters, removed to save context; call the tool again if you need it]"
    )
}

/// Microcompact the request copy `messages` (already normalized) in place and return the
/// tokens it freed from `estimate`. Results cleared before are cleared again (a stable
/// prefix); new ones are cleared only past the threshold and when the saving pays off.
pub fn microcompact(
    messages: &mut [Message],
    ctx: &mut ContextState,
    policy: &ContextPolicy,
    window: Option<u64>,
    estimate: u64,
) -> u64 {
    let names: HashMap<String, String> = messages
        .iter()
        .flat_map(|m| m.tool_uses())
        .map(|(id, name, _)| (id.to_string(), name.to_string()))
        .collect();
    let tool_of = |id: &str| names.get(id).map_or("tool", String::as_str).to_string();
    // Which user messages hold tool results, newest last: the last `keep` of them stay.
    let result_msgs: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.role == Role::User
                && m.content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        })
        .map(|(i, _)| i)
        .collect();
    let keep_from = result_msgs
        .len()
        .checked_sub(policy.microcompact_keep_turns)
        .and_then(|k| result_msgs.get(k).copied())
        .unwrap_or(0);
    let over = window.is_some_and(|w| {
        policy.microcompact_threshold < 1.0
            && estimate as f64 >= policy.microcompact_threshold * w as f64
    });
    let mut candidates: Vec<(usize, usize, u64)> = Vec::new();
    for (mi, m) in messages.iter().enumerate() {
        for (bi, b) in m.content.iter().enumerate() {
            if let ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } = b
                && !ctx.cleared.contains(tool_use_id)
                && over
                && mi < keep_from
            {
                let stub = cleared_stub(&tool_of(tool_use_id), content.chars().count());
                let saved = text_tokens(content).saturating_sub(text_tokens(&stub));
                if saved > 0 {
                    candidates.push((mi, bi, saved));
                }
            }
        }
    }
    let saving: u64 = candidates.iter().map(|c| c.2).sum();
    if !candidates.is_empty() && saving >= policy.microcompact_min_savings_tokens {
        for (mi, bi, _) in &candidates {
            if let ContentBlock::ToolResult { tool_use_id, .. } = &messages[*mi].content[*bi] {
                ctx.cleared.insert(tool_use_id.clone());
            }
        }
        tracing::info!(
            results = candidates.len(),
            tokens = saving,
            "microcompact: clearing old tool results from requests"
        );
    }
    if ctx.cleared.is_empty() {
        return 0;
    }
    let mut freed = 0u64;
    for m in messages.iter_mut() {
        for b in m.content.iter_mut() {
            if let ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } = b
                && ctx.cleared.contains(tool_use_id)
                && !content.starts_with("[old tool result cleared:")
            {
                let stub = cleared_stub(&tool_of(tool_use_id), content.chars().count());
                freed += text_tokens(content).saturating_sub(text_tokens(&stub));
                *content = stub;
            }
        }
    }
    // Results cleared before were already out of the calibrated estimate; only new ones free
    // tokens from it.
    if saving >= policy.microcompact_min_savings_tokens {
        saving.min(freed)
    } else {
        0
    }
}

/// Whether the estimate calls for autocompact. A conversation with no model response yet
/// (the prompt alone, or a fresh summary) has nothing to summarize and is never compacted.
pub(crate) fn needs_autocompact(
    policy: &ContextPolicy,
    window: Option<u64>,
    estimate: u64,
    messages: &[Message],
) -> bool {
    policy.autocompact
        && messages.iter().any(|m| m.role == Role::Assistant)
        && over_autocompact_threshold(policy, window, estimate)
}

/// Whether `estimate` tokens pass the autocompact threshold of a known `window`.
pub(crate) fn over_autocompact_threshold(
    policy: &ContextPolicy,
    window: Option<u64>,
    estimate: u64,
) -> bool {
    window.is_some_and(|w| estimate as f64 >= policy.autocompact_threshold * w as f64)
}

/// Cut `s` to at most `max` bytes on char boundaries, keeping its head and tail.
fn head_tail(s: &str, max: usize, head_share: f64) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let head = floor_boundary(s, (max as f64 * head_share) as usize);
    let tail_len = max.saturating_sub(head);
    let tail = ceil_boundary(s, s.len() - tail_len);
    format!(
        "{}\n[... {} characters omitted ...]\n{}",
        &s[..head],
        s[head..tail].chars().count(),
        &s[tail..]
    )
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The conversation as plain text for the summarizer, at most `max_bytes` long (oldest part
/// cut first, the opening prompt kept). Thinking is left out; long tool results are cut.
pub(crate) fn render_conversation(messages: &[Message], max_bytes: usize) -> String {
    let mut out = String::new();
    for m in messages {
        for b in &m.content {
            match (m.role, b) {
                (Role::User, ContentBlock::Text { text, .. }) => {
                    out.push_str("[user]\n");
                    out.push_str(text);
                }
                (Role::Assistant, ContentBlock::Text { text, .. }) => {
                    out.push_str("[assistant]\n");
                    out.push_str(text);
                }
                (_, ContentBlock::ToolUse { name, input, .. }) => {
                    out.push_str(&format!("[assistant called {name}]\n"));
                    out.push_str(&head_tail(&input.to_string(), RENDER_RESULT_CHARS, 0.5));
                }
                (
                    _,
                    ContentBlock::ToolResult {
                        content, is_error, ..
                    },
                ) => {
                    out.push_str(if *is_error {
                        "[tool error]\n"
                    } else {
                        "[tool result]\n"
                    });
                    out.push_str(&head_tail(content, RENDER_RESULT_CHARS, 0.5));
                }
                _ => continue,
            }
            out.push_str("\n\n");
        }
    }
    head_tail(&out, max_bytes, 0.2)
}

/// The system prompt of the summarizing call.
pub(crate) const COMPACT_SYSTEM: &str = "You summarize the work of a coding agent so that it can continue after its conversation is cleared. You never call tools.";

/// The instruction after the rendered conversation.
pub(crate) const COMPACT_INSTRUCTION: &str = "Summarize the conversation above so the agent can continue the task without it. Include: the task and every requirement the user stated; the files read, created or changed, with the important details (names, signatures, snippets that matter); commands run and what they showed; errors hit and how they were fixed; what is done; what remains, and the very next step. Answer with the summary only, as plain text.";

/// The user message that replaces the conversation after a compaction.
pub(crate) fn summary_message(task_prompt: &str, summary: &str) -> String {
    format!(
        "This session is being continued from a previous conversation that ran out of context. The original task was:\n\n<task>\n{}\n</task>\n\nSummary of the conversation so far:\n\n<summary>\n{}\n</summary>\n\nContinue the task from where it was left off without asking questions. Files may have changed since the summary was written; read a file again before editing it.",
        task_prompt.trim(),
        summary.trim()
    )
}

/// Why a compaction did not happen.
#[derive(Debug)]
pub(crate) enum CompactError {
    /// The summarizing call failed or gave nothing; the task may go on.
    Failed(String),
    /// The task ends (interrupted, timed out).
    End(Outcome),
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The estimate passed the autocompact threshold.
    Threshold,
    /// The API answered `prompt is too long`.
    PromptTooLong,
}

/// The `context_exhausted` outcome after [`MAX_COMPACT_FAILURES`] failed compactions.
pub fn exhausted(last_error: &str) -> Outcome {
    Outcome::new(
        OutcomeKind::ContextExhausted,
        format!(
            "prompt is too long: automatic compaction failed {MAX_COMPACT_FAILURES} times in a row (last: {last_error})"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_turn(id: &str, output: &str) -> Vec<Message> {
        vec![
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: id.into(),
                    name: "Read".into(),
                    input: json!({"file_path": "a"}),
                }],
                id: Some(format!("m_{id}")),
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id.into(),
                    content: output.into(),
                    is_error: false,
                }],
                id: None,
            },
        ]
    }

    fn conversation(turns: usize, result_bytes: usize) -> Vec<Message> {
        let mut m = vec![Message::user_text("do it")];
        for i in 0..turns {
            m.extend(tool_turn(&format!("t{i}"), &"x".repeat(result_bytes)));
        }
        m
    }

    fn result_text(m: &Message) -> &str {
        match &m.content[0] {
            ContentBlock::ToolResult { content, .. } => content,
            _ => panic!("not a tool result"),
        }
    }

    #[test]
    fn estimate_uses_real_usage_plus_rough_rest() {
        let msgs = conversation(2, 400);
        let mut ctx = ContextState::default();
        let rough = ctx.estimate(&msgs, || 100);
        assert!(rough > 200, "{rough}");
        ctx.calibrate(5_000, 3);
        let refined = ctx.estimate(&msgs, || unreachable!());
        // 5000 real + the two messages of the second turn.
        assert_eq!(
            refined,
            5_000 + message_tokens(&msgs[3]) + message_tokens(&msgs[4])
        );
        // A calibration past the end (after a compaction shrank the list) is ignored.
        ctx.calibrate(5_000, 99);
        assert_eq!(ctx.estimate(&msgs, || 100), rough);
    }

    #[test]
    fn microcompact_clears_old_results_only_past_threshold_and_keeps_recent_turns() {
        let policy = ContextPolicy {
            microcompact_keep_turns: 2,
            microcompact_min_savings_tokens: 100,
            ..ContextPolicy::default()
        };
        let stored = conversation(5, 4_000);
        let mut ctx = ContextState::default();

        // Below the threshold: nothing changes.
        let mut req = stored.clone();
        assert_eq!(
            microcompact(&mut req, &mut ctx, &policy, Some(100_000), 10_000),
            0
        );
        assert_eq!(req, stored);

        // Above: the three oldest results are stubs, the last two kept; stored untouched.
        let mut req = stored.clone();
        let freed = microcompact(&mut req, &mut ctx, &policy, Some(10_000), 6_000);
        assert!(freed > 2_500, "{freed}");
        for i in [2, 4, 6] {
            assert!(
                result_text(&req[i])
                    .starts_with("[old tool result cleared: Read output of 4000 characters"),
                "{}",
                result_text(&req[i])
            );
        }
        for i in [8, 10] {
            assert_eq!(result_text(&req[i]).len(), 4_000);
        }
        assert_eq!(stored, conversation(5, 4_000));
        assert_eq!(ctx.cleared.len(), 3);

        // Next request, now under the threshold: the same results stay cleared (stable
        // prefix), no new ones, and nothing more is subtracted from the calibrated estimate.
        let mut later = conversation(6, 4_000);
        assert_eq!(
            microcompact(&mut later, &mut ctx, &policy, Some(100_000), 1_000),
            0
        );
        for i in [2, 4, 6] {
            assert!(result_text(&later[i]).starts_with("[old tool result cleared:"));
        }
        assert_eq!(result_text(&later[8]).len(), 4_000);
    }

    #[test]
    fn microcompact_skips_clearing_that_does_not_pay_off() {
        let policy = ContextPolicy {
            microcompact_keep_turns: 1,
            microcompact_min_savings_tokens: 20_000,
            ..ContextPolicy::default()
        };
        let stored = conversation(3, 4_000);
        let mut req = stored.clone();
        let mut ctx = ContextState::default();
        assert_eq!(
            microcompact(&mut req, &mut ctx, &policy, Some(1_000), 900),
            0
        );
        assert_eq!(req, stored);
        assert!(ctx.cleared.is_empty());
    }

    #[test]
    fn autocompact_threshold() {
        let p = ContextPolicy::default();
        let msgs = conversation(1, 10);
        assert!(!needs_autocompact(&p, Some(1_000), 849, &msgs));
        assert!(needs_autocompact(&p, Some(1_000), 850, &msgs));
        assert!(!needs_autocompact(&p, None, u64::MAX, &msgs));
        // The prompt alone: nothing to summarize.
        assert!(!needs_autocompact(&p, Some(1_000), 999, &msgs[..1]));
        let off = ContextPolicy {
            autocompact: false,
            ..p
        };
        assert!(!needs_autocompact(&off, Some(1_000), 999, &msgs));
    }

    #[test]
    fn rendering_keeps_the_prompt_and_the_end_within_budget() {
        let mut msgs = conversation(50, 3_000);
        msgs.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    thinking: "secret thoughts".into(),
                    signature: "s".into(),
                },
                ContentBlock::text("último paso ✓"),
            ],
            id: Some("end".into()),
        });
        let full = render_conversation(&msgs, usize::MAX);
        assert!(!full.contains("secret thoughts"));
        assert!(full.contains("[tool result]\n"));
        // Each result is cut to its own budget.
        assert!(full.contains("characters omitted"));
        let cut = render_conversation(&msgs, 10_000);
        assert!(cut.len() <= 10_100, "{}", cut.len());
        assert!(cut.starts_with("[user]\ndo it"));
        assert!(cut.trim_end().ends_with("último paso ✓"));
    }

    #[test]
    fn head_tail_cuts_on_char_boundaries() {
        let s = "é".repeat(1_000) + "✓";
        for max in [0, 1, 2, 3, 101, 1_000] {
            let cut = head_tail(&s, max, 0.2);
            assert!(cut.contains("characters omitted"), "{max}");
            assert!(cut.len() <= max + 40, "{max}: {}", cut.len());
        }
        assert_eq!(head_tail("short", 10, 0.2), "short");
    }

    #[test]
    fn summary_message_carries_task_and_summary() {
        let m = summary_message("fix the bug\n", "  read a.rs; next: edit it ");
        assert!(m.contains("<task>\nfix the bug\n</task>"));
        assert!(m.contains("<summary>\nread a.rs; next: edit it\n</summary>"));
    }

    #[test]
    fn rejected_sizes_from_the_servers_messages() {
        let cases = [
            (
                "invalid request (400 invalid_request_error): prompt is too long: 210000 tokens > 200000 maximum",
                (Some(210_000), Some(200_000)),
            ),
            (
                "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
                (Some(9_000), Some(8_192)),
            ),
            (
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
                (Some(9_000), Some(8_192)),
            ),
            (
                "the request exceeds the available context size, try increasing it",
                (None, None),
            ),
            ("context_length_exceeded", (None, None)),
            (
                "prompt is too long: 99999999999999999999999 tokens > 5 maximum",
                (Some(u64::MAX), Some(5)),
            ),
        ];
        for (msg, (tokens, maximum)) in cases {
            let r = Rejected::new(msg, 7);
            assert_eq!(
                (r.tokens, r.maximum, r.estimate),
                (tokens, maximum, 7),
                "{msg}"
            );
        }
    }

    #[test]
    fn a_request_shrinks_by_the_server_count_else_by_the_estimate() {
        let at = |tokens: Option<u64>, estimate: u64| Rejected {
            tokens,
            maximum: Some(200_000),
            estimate,
        };
        assert!(at(Some(205_000), 900).smaller_than(&at(Some(210_000), 100)));
        assert!(!at(Some(210_000), 100).smaller_than(&at(Some(210_000), 900)));
        assert!(at(None, 100).smaller_than(&at(Some(210_000), 900)));
        assert!(!at(Some(1), 900).smaller_than(&at(None, 900)));
        let o = not_shrunk(&at(Some(210_000), 1), &at(Some(210_400), 1));
        assert_eq!(o.kind, OutcomeKind::ContextExhausted);
        assert!(
            o.message
                .contains("210000 tokens; the model takes at most 200000")
                && o.message.contains("after compacting: 210400 tokens"),
            "{}",
            o.message
        );
    }

    #[test]
    fn exhausted_outcome_is_prompt_too_long() {
        let o = exhausted("boom");
        assert_eq!(o.kind, OutcomeKind::ContextExhausted);
        assert!(o.message.contains("3 times"));
    }
}
