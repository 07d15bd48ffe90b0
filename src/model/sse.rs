//! SSE framing on top of sse-stream, with EOF flush. (Implemented by the provider work.)
