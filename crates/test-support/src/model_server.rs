//! What makes a mock server one the `runner` binary can be pointed at.

/// A mock model server the `runner` binary can be pointed at.
pub trait ModelServer {
    /// The environment that sends the binary's model traffic to this server.
    fn runner_env(&self) -> Vec<(&'static str, String)>;
}
