//! The fallback model (`fallback_model:`): when the main model stays overloaded after its
//! retries, the attempt is made again on the fallback model, which answers for the rest of
//! the task. Thinking blocks carry a signature only the model that wrote them accepts, so
//! those written before the switch are left out of every later request.

use std::collections::HashSet;

use crate::model::table::ModelInfo;
use crate::model::{ContentBlock, Message, Role};

/// The fallback model, until it is switched to.
#[derive(Debug, Clone)]
pub(crate) struct Fallback {
    /// Its id.
    pub model: String,
    /// What the model table knows of it (prices, window, output cap).
    pub info: Option<ModelInfo>,
}

/// What identifies each thinking block of the conversation: its signature (the opaque data of
/// a redacted one).
pub(super) fn thinking_keys(messages: &[Message]) -> impl Iterator<Item = String> + '_ {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::Thinking { signature, .. } => Some(signature.clone()),
            ContentBlock::RedactedThinking { data } => Some(data.clone()),
            _ => None,
        })
}

/// Leave out of the request the thinking blocks another model signed (`foreign`). An
/// assistant message left empty keeps a short text instead (the API refuses empty content).
pub(crate) fn drop_foreign_thinking(messages: &mut [Message], foreign: &HashSet<String>) {
    if foreign.is_empty() {
        return;
    }
    for m in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        let before = m.content.len();
        m.content.retain(|b| match b {
            ContentBlock::Thinking { signature, .. } => !foreign.contains(signature),
            ContentBlock::RedactedThinking { data } => !foreign.contains(data),
            _ => true,
        });
        if before > 0 && m.content.is_empty() {
            m.content
                .push(ContentBlock::text("(thinking by another model left out)"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_other_models_thinking_is_dropped() {
        let thinking = |sig: &str| ContentBlock::Thinking {
            thinking: "hmm".into(),
            signature: sig.into(),
        };
        let mut messages = vec![
            Message::user_text("go".to_string()),
            Message {
                role: Role::Assistant,
                content: vec![thinking("main-1"), ContentBlock::text("a")],
                id: None,
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::RedactedThinking {
                    data: "main-2".into(),
                }],
                id: None,
            },
            Message {
                role: Role::Assistant,
                content: vec![thinking("fallback-1"), ContentBlock::text("b")],
                id: None,
            },
        ];
        let foreign: HashSet<String> = thinking_keys(&messages[..3]).collect();
        assert_eq!(foreign.len(), 2);
        drop_foreign_thinking(&mut messages, &foreign);
        assert_eq!(messages[1].content, vec![ContentBlock::text("a")]);
        assert_eq!(
            messages[2].content,
            vec![ContentBlock::text("(thinking by another model left out)")]
        );
        assert_eq!(messages[3].content.len(), 2);
    }
}
