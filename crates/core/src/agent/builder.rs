//! [`AgentBuilder`]: the one way to make an [`Agent`]. What the agent is given is set here,
//! before [`AgentBuilder::build`]; the agent never changes it after.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;

use super::core::{Agent, LoopConfig, Running};
use super::stop::Stopper;
use crate::events::Sinks;
use crate::governor::TaskGovernor;
use crate::model::Provider;
use crate::permissions::Policy;
use crate::sandbox::NetworkAttempt;
use crate::tools::structured_output::StructuredOutputHandle;
use crate::tools::{Registry, ToolContext, ToolSession};

/// The parts of an [`Agent`], gathered one by one. The loop settings, the provider, the policy,
/// the tool session and the rate-limit governor are required; the rest default to nothing (no
/// tools, no sinks, a stopper of its own, no structured output, no network reports, no MCP
/// servers).
pub(crate) struct AgentBuilder {
    config: LoopConfig,
    provider: Arc<dyn Provider>,
    policy: Arc<Policy>,
    tools: Arc<ToolSession>,
    registry: Registry,
    governor: TaskGovernor,
    sinks: Sinks,
    stopper: Stopper,
    structured: Option<StructuredOutputHandle>,
    network: Option<UnboundedReceiver<NetworkAttempt>>,
    mcp: Option<Arc<crate::mcp::McpServers>>,
}

impl AgentBuilder {
    /// A builder of an agent that runs `config` against `provider` (its requests paced by
    /// `governor`), deciding with `policy`, its tool calls sharing `tools`.
    pub(crate) fn new(
        config: LoopConfig,
        provider: Arc<dyn Provider>,
        governor: TaskGovernor,
        policy: Arc<Policy>,
        tools: Arc<ToolSession>,
    ) -> Self {
        AgentBuilder {
            config,
            provider,
            policy,
            tools,
            registry: Registry::default(),
            governor,
            sinks: Sinks::default(),
            stopper: Stopper::default(),
            structured: None,
            network: None,
            mcp: None,
        }
    }

    /// The tools offered at the start.
    pub(crate) fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Where the events go.
    pub(crate) fn sinks(mut self, sinks: Sinks) -> Self {
        self.sinks = sinks;
        self
    }

    /// The stop requests (signals, timeout) the run answers.
    pub(crate) fn stopper(mut self, stopper: Stopper) -> Self {
        self.stopper = stopper;
        self
    }

    /// The `StructuredOutput` state, when the spec sets `output:`.
    pub(crate) fn structured(mut self, structured: Option<StructuredOutputHandle>) -> Self {
        self.structured = structured;
        self
    }

    /// Where the sandbox's egress proxy reports connection attempts.
    pub(crate) fn network(mut self, network: UnboundedReceiver<NetworkAttempt>) -> Self {
        self.network = Some(network);
        self
    }

    /// The task's MCP servers (their tools are listed again between turns when they change).
    pub(crate) fn mcp(mut self, mcp: Arc<crate::mcp::McpServers>) -> Self {
        self.mcp = Some(mcp);
        self
    }

    /// The agent.
    pub(crate) fn build(self) -> Agent {
        let busy = self.tools.hooks.busy();
        let run = Running::start(&self.config, self.registry, self.network, busy);
        Agent {
            config: self.config,
            provider: self.provider,
            policy: self.policy,
            tool_ctx: ToolContext::of(self.tools),
            governor: self.governor,
            sinks: self.sinks,
            stopper: self.stopper,
            structured: self.structured,
            mcp: self.mcp,
            run,
        }
    }
}
