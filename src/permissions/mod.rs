//! Permission policy: modes, allow/deny rules and the decision for one tool call.
//! (Implemented by the permissions work.)
