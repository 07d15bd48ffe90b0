//! The Landlock ruleset of confined commands: read everything but the credential locations,
//! write only the writable roots (and the harmless devices), TCP only to the egress proxy (or
//! nowhere), no signals or abstract Unix sockets out of the sandbox.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError, Scope, path_beneath_rules,
};

use super::SandboxError;
use super::plan::Plan;
use super::support::Support;
use runner_policy::Scope as CallScope;

/// The newest Landlock ABI whose rights the ruleset asks for; an older kernel enforces the
/// subset it knows (best effort), which [`Support`] reports.
const ABI_USED: ABI = ABI::V6;

/// The ruleset for a command of `scope` under `plan`.
pub(super) fn ruleset(
    plan: &Plan,
    scope: CallScope,
    support: &Support,
) -> Result<RulesetCreated, SandboxError> {
    build(plan, scope, support).map_err(|e| SandboxError::Landlock(e.to_string()))
}

fn build(plan: &Plan, scope: CallScope, support: &Support) -> Result<RulesetCreated, RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_USED))?;
    let restrict_net = plan.network.restricts() && support.landlock_net();
    if restrict_net {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    if support.landlock_scope() {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    }
    let read = AccessFs::from_read(ABI_USED);
    let device = read | AccessFs::WriteFile | AccessFs::IoctlDev;
    let mut created = ruleset
        .create()?
        .add_rules(path_beneath_rules(&plan.read_grants, read))?
        .add_rules(path_beneath_rules(&plan.devices, device))?;
    if scope == CallScope::Write {
        created = created.add_rules(path_beneath_rules(
            &plan.write_grants,
            AccessFs::from_all(ABI_USED),
        ))?;
    }
    if restrict_net && let Some(port) = plan.network.proxy_port() {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp))?;
    }
    Ok(created)
}
