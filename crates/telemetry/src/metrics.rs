//! The metric instruments a run records.

use opentelemetry::metrics::{Counter, Histogram, Meter};

/// Instrument names, as documented in docs/src/observability.md.
pub(crate) mod name {
    /// GenAI semconv: tokens per model request, by `gen_ai.token.type` (input, output).
    pub(crate) const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
    /// GenAI semconv: model request duration, seconds.
    pub(crate) const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
    /// Tokens by `runner.token.kind` (input, output, cache_read, cache_creation).
    pub(crate) const TOKENS: &str = "runner.tokens";
    /// Cost in USD of the tasks' model use (tasks whose model has a price).
    pub(crate) const COST: &str = "runner.cost";
    /// Model requests answered.
    pub(crate) const REQUESTS: &str = "runner.model.requests";
    /// Model requests retried, by `error.type`.
    pub(crate) const RETRIES: &str = "runner.model.retries";
    /// Tool calls the permission policy denied.
    pub(crate) const DENIALS: &str = "runner.tool.denials";
    /// Tool call duration, seconds.
    pub(crate) const TOOL_DURATION: &str = "runner.tool.duration";
    /// Tasks ended, by `runner.task.outcome`.
    pub(crate) const TASKS: &str = "runner.tasks";
}

/// The instruments, built once per run.
#[derive(Debug, Clone)]
pub(crate) struct Instruments {
    pub(crate) token_usage: Histogram<u64>,
    pub(crate) operation_duration: Histogram<f64>,
    pub(crate) tokens: Counter<u64>,
    pub(crate) cost: Counter<f64>,
    pub(crate) requests: Counter<u64>,
    pub(crate) retries: Counter<u64>,
    pub(crate) denials: Counter<u64>,
    pub(crate) tool_duration: Histogram<f64>,
    pub(crate) tasks: Counter<u64>,
}

impl Instruments {
    /// Build them on `meter`.
    pub(crate) fn new(meter: &Meter) -> Instruments {
        Instruments {
            token_usage: meter
                .u64_histogram(name::TOKEN_USAGE)
                .with_unit("{token}")
                .with_description("Tokens used per model request")
                .build(),
            operation_duration: meter
                .f64_histogram(name::OPERATION_DURATION)
                .with_unit("s")
                .with_description("Duration of model requests")
                .build(),
            tokens: meter
                .u64_counter(name::TOKENS)
                .with_unit("{token}")
                .with_description("Tokens by kind")
                .build(),
            cost: meter
                .f64_counter(name::COST)
                .with_unit("USD")
                .with_description("Cost of the tasks' model use")
                .build(),
            requests: meter
                .u64_counter(name::REQUESTS)
                .with_unit("{request}")
                .with_description("Model requests answered")
                .build(),
            retries: meter
                .u64_counter(name::RETRIES)
                .with_unit("{retry}")
                .with_description("Model requests retried")
                .build(),
            denials: meter
                .u64_counter(name::DENIALS)
                .with_unit("{call}")
                .with_description("Tool calls the permission policy denied")
                .build(),
            tool_duration: meter
                .f64_histogram(name::TOOL_DURATION)
                .with_unit("s")
                .with_description("Duration of tool calls")
                .build(),
            tasks: meter
                .u64_counter(name::TASKS)
                .with_unit("{task}")
                .with_description("Tasks ended, by outcome")
                .build(),
        }
    }
}
