//! Built-in model table: context window, output cap, prices. (Implemented by the spec work.)
