//! SSE block assembler: provider events → completed blocks → ModelResponse. (Implemented by the provider work.)
