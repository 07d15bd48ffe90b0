//! A model of Anthropic's prompt cache for tests: it replays the request bodies a mock
//! received and bills each as the API would (cache reads, cache writes, uncached input), so a
//! test can measure what a breakpoint strategy costs.
//!
//! The model: a request is a sequence of blocks (each tool, the system prompt's blocks, each
//! message content block), about 4 bytes of JSON per token. Every `cache_control` breakpoint
//! writes the prefix that ends with its block. A breakpoint reads the longest prefix already
//! written that ends at its block or at most `lookback` blocks before it (the API looks back
//! about 20 blocks); the request reads the longest prefix any of its breakpoints finds, writes
//! from there to its last breakpoint, and pays the full input price for the rest. Prices are
//! relative to one input token: writes 1.25, reads 0.1.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// How far back from a breakpoint the API looks for a cache write, in blocks.
pub const API_LOOKBACK_BLOCKS: usize = 20;

/// What one request is billed, in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Billed {
    /// Uncached input tokens.
    pub input: u64,
    /// Tokens written to the cache.
    pub cache_write: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
}

impl Billed {
    /// The cost in units of one uncached input token.
    pub fn cost(&self) -> f64 {
        self.input as f64 + 1.25 * self.cache_write as f64 + 0.1 * self.cache_read as f64
    }
}

/// The cache, across the requests of one run.
#[derive(Debug, Clone)]
pub struct PromptCache {
    lookback: usize,
    /// Hashes of the prefixes written so far.
    written: HashSet<u64>,
}

/// One block of a request: its identity (with its place: tool, system, or message and role)
/// and its size in tokens, and whether it carries a breakpoint.
struct Block {
    key: String,
    tokens: u64,
    breakpoint: bool,
}

fn block(place: String, v: &Value) -> Block {
    let mut v = v.clone();
    let breakpoint = v
        .as_object_mut()
        .is_some_and(|m| m.remove("cache_control").is_some());
    let json = v.to_string();
    Block {
        tokens: (json.len() as u64).div_ceil(4),
        key: format!("{place}:{json}"),
        breakpoint,
    }
}

/// The blocks of a Messages request body, in the order the API caches them.
fn blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    for t in body["tools"].as_array().into_iter().flatten() {
        out.push(block("tool".into(), t));
    }
    match &body["system"] {
        Value::String(s) => out.push(block(
            "system".into(),
            &serde_json::json!({"type": "text", "text": s}),
        )),
        Value::Array(items) => out.extend(items.iter().map(|b| block("system".into(), b))),
        _ => {}
    }
    for (i, m) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let place = format!("message {i} {}", m["role"].as_str().unwrap_or("?"));
        match &m["content"] {
            Value::String(s) => out.push(block(
                place,
                &serde_json::json!({"type": "text", "text": s}),
            )),
            Value::Array(items) => out.extend(items.iter().map(|b| block(place.clone(), b))),
            _ => {}
        }
    }
    out
}

impl PromptCache {
    /// An empty cache whose lookups reach `lookback` blocks back from a breakpoint
    /// ([`API_LOOKBACK_BLOCKS`] as the API does; `usize::MAX` for an ideal cache).
    pub fn new(lookback: usize) -> PromptCache {
        PromptCache {
            lookback,
            written: HashSet::new(),
        }
    }

    /// Bill one request body and write its breakpoints' prefixes to the cache.
    pub fn bill(&mut self, body: &Value) -> Billed {
        let blocks = blocks(body);
        // prefix[i]: hash of blocks[..=i]; tokens[i]: tokens of blocks[..i].
        let mut prefix = Vec::with_capacity(blocks.len());
        let mut tokens = vec![0u64];
        let mut h = DefaultHasher::new();
        for b in &blocks {
            b.key.hash(&mut h);
            prefix.push(h.finish());
            tokens.push(tokens.last().copied().unwrap_or(0) + b.tokens);
        }
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|i| blocks[*i].breakpoint)
            .collect();
        let Some(&last) = breakpoints.last() else {
            return Billed {
                input: tokens[blocks.len()],
                ..Billed::default()
            };
        };
        // The longest cached prefix any breakpoint's lookup finds (blocks read: `read`).
        let read = breakpoints
            .iter()
            .filter_map(|&bp| {
                (bp.saturating_sub(self.lookback)..=bp)
                    .rev()
                    .find(|&i| self.written.contains(&prefix[i]))
                    .map(|i| i + 1)
            })
            .max()
            .unwrap_or(0);
        for &bp in &breakpoints {
            self.written.insert(prefix[bp]);
        }
        let end = last + 1;
        Billed {
            cache_read: tokens[read],
            cache_write: tokens[end].saturating_sub(tokens[read.min(end)]),
            input: tokens[blocks.len()] - tokens[end.max(read)],
        }
    }
}

/// The total cost of `bodies` billed in order by a fresh cache with `lookback`.
pub fn total_cost<'a>(bodies: impl IntoIterator<Item = &'a Value>, lookback: usize) -> f64 {
    let mut cache = PromptCache::new(lookback);
    bodies.into_iter().map(|b| cache.bill(b).cost()).sum()
}
