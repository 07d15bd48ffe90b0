//! Replay provider: serves recorded cassettes. (Implemented by the replay work.)
