//! Built-in model table: context window, output cap and prices, overridable from the spec.
//!
//! Model ids match with or without a release date (`claude-sonnet-4-5-20250929`) or a
//! `-latest` suffix. A spec's `models:` entry wins field by field over the built-in entry.
//!
//! An override for a model the table does not know gets, for the fields it leaves unset,
//! [`DEFAULT_CONTEXT_WINDOW`] and [`DEFAULT_MAX_OUTPUT_TOKENS`]. It is priced only when it sets
//! both `input_usd_per_mtok` and `output_usd_per_mtok`; unset cache prices then follow
//! Anthropic's multipliers ([`CACHE_WRITE_MULTIPLIER`] and [`CACHE_READ_MULTIPLIER`] × input).

use std::collections::BTreeMap;

use super::settings::ModelInfoOverride;
use super::types::Usage;

/// Context window assumed for a spec-defined model that does not set `context_window`.
pub(crate) const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;
/// Output cap assumed for a spec-defined model that does not set `max_output_tokens`.
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;
/// Cache-write price as a multiple of the input price, when a spec-defined model omits it.
pub(crate) const CACHE_WRITE_MULTIPLIER: f64 = 1.25;
/// Cache-read price as a multiple of the input price, when a spec-defined model omits it.
pub(crate) const CACHE_READ_MULTIPLIER: f64 = 0.1;

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
}

/// What runner knows about a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// Context window in tokens.
    pub context_window: u64,
    /// Most output tokens per response.
    pub max_output_tokens: u32,
    /// Prices, when known; without them cost is reported as unknown.
    pub prices: Option<Prices>,
}

impl ModelInfo {
    /// Cost of `usage` in USD, or `None` when the model has no price (never 0 for unknown).
    pub fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        let p = self.prices?;
        let mtok = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        Some(
            mtok(usage.input_tokens, p.input)
                + mtok(usage.output_tokens, p.output)
                + mtok(usage.cache_creation_input_tokens, p.cache_write)
                + mtok(usage.cache_read_input_tokens, p.cache_read),
        )
    }
}

const fn entry(out: u32, input: f64, output: f64, cache_write: f64, cache_read: f64) -> ModelInfo {
    ModelInfo {
        context_window: 200_000,
        max_output_tokens: out,
        prices: Some(Prices {
            input,
            output,
            cache_write,
            cache_read,
        }),
    }
}

/// The built-in entries, by canonical id (no date, no `-latest`).
pub const BUILTIN_MODELS: &[(&str, ModelInfo)] = &[
    ("claude-opus-4-5", entry(64_000, 5.0, 25.0, 6.25, 0.50)),
    ("claude-opus-4-1", entry(32_000, 15.0, 75.0, 18.75, 1.50)),
    ("claude-opus-4", entry(32_000, 15.0, 75.0, 18.75, 1.50)),
    ("claude-sonnet-4-5", entry(64_000, 3.0, 15.0, 3.75, 0.30)),
    ("claude-sonnet-4", entry(64_000, 3.0, 15.0, 3.75, 0.30)),
    ("claude-haiku-4-5", entry(64_000, 1.0, 5.0, 1.25, 0.10)),
    ("claude-3-7-sonnet", entry(64_000, 3.0, 15.0, 3.75, 0.30)),
    ("claude-3-5-haiku", entry(8_192, 0.80, 4.0, 1.0, 0.08)),
];

/// Release dates of the built-in models: the suffix of their dated Anthropic id, of their
/// Bedrock id (`anthropic.{id}-{date}-v1:0`) and of their Vertex AI id (`{id}@{date}`).
const RELEASES: &[(&str, &str)] = &[
    ("claude-opus-4-5", "20251101"),
    ("claude-opus-4-1", "20250805"),
    ("claude-opus-4", "20250514"),
    ("claude-sonnet-4-5", "20250929"),
    ("claude-sonnet-4", "20250514"),
    ("claude-haiku-4-5", "20251001"),
    ("claude-3-7-sonnet", "20250219"),
    ("claude-3-5-haiku", "20241022"),
];

fn release(model: &str) -> Option<&'static str> {
    let id = canonical_id(model);
    RELEASES.iter().find(|(n, _)| *n == id).map(|(_, d)| *d)
}

/// The Bedrock base model id of a built-in model (`anthropic.claude-sonnet-4-5-20250929-v1:0`),
/// without an inference-profile prefix.
pub fn bedrock_id(model: &str) -> Option<String> {
    let date = release(model)?;
    Some(format!("anthropic.{}-{date}-v1:0", canonical_id(model)))
}

/// The Vertex AI model id of a built-in model (`claude-sonnet-4-5@20250929`).
pub fn vertex_id(model: &str) -> Option<String> {
    let date = release(model)?;
    Some(format!("{}@{date}", canonical_id(model)))
}

/// The canonical id of `model`: a trailing `-YYYYMMDD` or `-latest` removed; a Bedrock id
/// (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`: inference-profile prefix, `anthropic.`
/// and version suffix) or a Vertex AI id (`claude-sonnet-4-5@20250929`) reduced to the same.
pub fn canonical_id(model: &str) -> &str {
    let model = platform_base(model);
    if let Some(base) = model.strip_suffix("-latest") {
        return base;
    }
    if let Some((base, date)) = model.rsplit_once('-')
        && date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
    {
        return base;
    }
    model
}

/// `model` without a Bedrock or Vertex AI decoration (see [`canonical_id`]).
fn platform_base(model: &str) -> &str {
    let mut m = model;
    if let Some((base, _)) = m.split_once('@') {
        m = base;
    }
    if let Some(i) = m.find("anthropic.") {
        m = &m[i + "anthropic.".len()..];
        // `-v1:0`, `-v2`.
        if let Some((base, version)) = m.rsplit_once("-v")
            && version
                .split(':')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            m = base;
        }
    }
    m
}

/// The built-in entry for `model` (dated and `-latest` ids included), without spec overrides.
pub fn builtin(model: &str) -> Option<ModelInfo> {
    let id = canonical_id(model);
    BUILTIN_MODELS
        .iter()
        .find(|(name, _)| *name == id)
        .map(|(_, info)| *info)
}

/// The spec override that applies to `model`: an entry under the exact id, else one under its
/// canonical id.
pub(crate) fn override_for<'a>(
    model: &str,
    overrides: &'a BTreeMap<String, ModelInfoOverride>,
) -> Option<&'a ModelInfoOverride> {
    overrides
        .get(model)
        .or_else(|| overrides.get(canonical_id(model)))
}

/// What runner knows about `model`: the built-in entry with the spec's `models:` override
/// applied field by field. `None` when neither knows the model.
pub fn lookup(model: &str, overrides: &BTreeMap<String, ModelInfoOverride>) -> Option<ModelInfo> {
    let base = builtin(model);
    let Some(o) = override_for(model, overrides) else {
        return base;
    };
    let prices = match base.and_then(|b| b.prices) {
        Some(p) => Some(Prices {
            input: o.input_usd_per_mtok.unwrap_or(p.input),
            output: o.output_usd_per_mtok.unwrap_or(p.output),
            cache_write: o.cache_write_usd_per_mtok.unwrap_or(p.cache_write),
            cache_read: o.cache_read_usd_per_mtok.unwrap_or(p.cache_read),
        }),
        None => match (o.input_usd_per_mtok, o.output_usd_per_mtok) {
            (Some(input), Some(output)) => Some(Prices {
                input,
                output,
                cache_write: o
                    .cache_write_usd_per_mtok
                    .unwrap_or(input * CACHE_WRITE_MULTIPLIER),
                cache_read: o
                    .cache_read_usd_per_mtok
                    .unwrap_or(input * CACHE_READ_MULTIPLIER),
            }),
            _ => None,
        },
    };
    Some(ModelInfo {
        context_window: o
            .context_window
            .or(base.map(|b| b.context_window))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW),
        max_output_tokens: o
            .max_output_tokens
            .or(base.map(|b| b.max_output_tokens))
            .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
        prices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeMap<String, ModelInfoOverride> {
        BTreeMap::new()
    }

    #[test]
    fn builtin_entries_match_the_price_list() {
        let opus = lookup("claude-opus-4-5", &none()).unwrap();
        assert_eq!(opus.context_window, 200_000);
        assert_eq!(opus.max_output_tokens, 64_000);
        assert_eq!(
            opus.prices,
            Some(Prices {
                input: 5.0,
                output: 25.0,
                cache_write: 6.25,
                cache_read: 0.5
            })
        );
        let old_opus = lookup("claude-opus-4", &none()).unwrap();
        assert_eq!(old_opus.max_output_tokens, 32_000);
        assert_eq!(old_opus.prices.unwrap().output, 75.0);
        assert_eq!(
            lookup("claude-opus-4-1", &none()).unwrap().prices,
            old_opus.prices
        );
        let haiku35 = lookup("claude-3-5-haiku", &none()).unwrap();
        assert_eq!(haiku35.max_output_tokens, 8_192);
        assert_eq!(haiku35.prices.unwrap().cache_read, 0.08);
        assert_eq!(
            lookup("claude-haiku-4-5", &none())
                .unwrap()
                .prices
                .unwrap()
                .input,
            1.0
        );
        assert_eq!(BUILTIN_MODELS.len(), 8);
    }

    #[test]
    fn bedrock_and_vertex_ids_match() {
        for id in [
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "claude-sonnet-4-5@20250929",
        ] {
            assert_eq!(canonical_id(id), "claude-sonnet-4-5", "{id}");
            assert_eq!(builtin(id), builtin("claude-sonnet-4-5"), "{id}");
        }
        assert_eq!(
            canonical_id("eu.anthropic.claude-3-5-haiku-20241022-v1:0"),
            "claude-3-5-haiku"
        );
        assert_eq!(
            bedrock_id("claude-haiku-4-5-20251001").as_deref(),
            Some("anthropic.claude-haiku-4-5-20251001-v1:0")
        );
        assert_eq!(
            vertex_id("claude-opus-4-1").as_deref(),
            Some("claude-opus-4-1@20250805")
        );
        assert_eq!(vertex_id("gpt-4o"), None);
        for (name, _) in BUILTIN_MODELS {
            assert!(
                bedrock_id(name).is_some() && vertex_id(name).is_some(),
                "{name}"
            );
        }
    }

    #[test]
    fn dated_and_latest_ids_match() {
        let sonnet = lookup("claude-sonnet-4-5", &none());
        assert!(sonnet.is_some());
        assert_eq!(lookup("claude-sonnet-4-5-20250929", &none()), sonnet);
        assert_eq!(lookup("claude-sonnet-4-5-latest", &none()), sonnet);
        assert_eq!(
            lookup("claude-3-7-sonnet-20250219", &none()),
            lookup("claude-3-7-sonnet", &none())
        );
        assert_eq!(
            canonical_id("claude-3-7-sonnet-latest"),
            "claude-3-7-sonnet"
        );
        // Not a date: 7 digits, or letters.
        assert_eq!(
            canonical_id("claude-sonnet-4-5-2025092"),
            "claude-sonnet-4-5-2025092"
        );
        assert_eq!(lookup("claude-sonnet-4-5-2025092", &none()), None);
        assert_eq!(lookup("gpt-4o", &none()), None);
        assert_eq!(lookup("", &none()), None);
    }

    #[test]
    fn overrides_win_field_by_field() {
        let mut o = none();
        o.insert(
            "claude-sonnet-4-5".into(),
            ModelInfoOverride {
                context_window: Some(1_000_000),
                output_usd_per_mtok: Some(22.5),
                ..Default::default()
            },
        );
        let info = lookup("claude-sonnet-4-5-20250929", &o).unwrap();
        assert_eq!(info.context_window, 1_000_000);
        assert_eq!(info.max_output_tokens, 64_000);
        let p = info.prices.unwrap();
        assert_eq!(
            (p.input, p.output, p.cache_write, p.cache_read),
            (3.0, 22.5, 3.75, 0.30)
        );
        // Other models are untouched.
        assert_eq!(
            lookup("claude-sonnet-4", &o).unwrap().context_window,
            200_000
        );
    }

    #[test]
    fn exact_override_beats_canonical_override() {
        let mut o = none();
        o.insert(
            "claude-haiku-4-5".into(),
            ModelInfoOverride {
                max_output_tokens: Some(100),
                ..Default::default()
            },
        );
        o.insert(
            "claude-haiku-4-5-20251001".into(),
            ModelInfoOverride {
                max_output_tokens: Some(200),
                ..Default::default()
            },
        );
        assert_eq!(
            lookup("claude-haiku-4-5-20251001", &o)
                .unwrap()
                .max_output_tokens,
            200
        );
        assert_eq!(
            lookup("claude-haiku-4-5-20250101", &o)
                .unwrap()
                .max_output_tokens,
            100
        );
    }

    #[test]
    fn unknown_model_from_override_gets_defaults() {
        let mut o = none();
        o.insert("my-model".into(), ModelInfoOverride::default());
        let info = lookup("my-model", &o).unwrap();
        assert_eq!(info.context_window, DEFAULT_CONTEXT_WINDOW);
        assert_eq!(info.max_output_tokens, DEFAULT_MAX_OUTPUT_TOKENS);
        assert_eq!(info.prices, None);
        assert_eq!(info.cost_usd(&Usage::default()), None);

        // Only one of input/output: still unpriced.
        o.insert(
            "half".into(),
            ModelInfoOverride {
                input_usd_per_mtok: Some(2.0),
                ..Default::default()
            },
        );
        assert_eq!(lookup("half", &o).unwrap().prices, None);

        o.insert(
            "priced".into(),
            ModelInfoOverride {
                context_window: Some(32_000),
                max_output_tokens: Some(4_096),
                input_usd_per_mtok: Some(2.0),
                output_usd_per_mtok: Some(8.0),
                cache_read_usd_per_mtok: Some(0.5),
                ..Default::default()
            },
        );
        let info = lookup("priced", &o).unwrap();
        assert_eq!(info.context_window, 32_000);
        assert_eq!(info.max_output_tokens, 4_096);
        let p = info.prices.unwrap();
        assert_eq!(
            (p.input, p.output, p.cache_write, p.cache_read),
            (2.0, 8.0, 2.5, 0.5)
        );
    }

    #[test]
    fn cost_arithmetic() {
        let info = lookup("claude-sonnet-4-5", &none()).unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_creation_input_tokens: 200_000,
            cache_read_input_tokens: 2_000_000,
        };
        // 3 + 1.5 + 0.75 + 0.6
        let cost = info.cost_usd(&usage).unwrap();
        assert!((cost - 5.85).abs() < 1e-9, "{cost}");
        assert_eq!(info.cost_usd(&Usage::default()), Some(0.0));

        let opus = lookup("claude-opus-4-5", &none()).unwrap();
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        };
        let cost = opus.cost_usd(&usage).unwrap();
        assert!(
            (cost - (10.0 * 5.0 + 20.0 * 25.0) / 1e6).abs() < 1e-15,
            "{cost}"
        );

        let unpriced = ModelInfo {
            context_window: 1,
            max_output_tokens: 1,
            prices: None,
        };
        assert_eq!(unpriced.cost_usd(&usage), None);
    }
}
