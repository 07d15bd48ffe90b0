//! Secret redaction for every output (`[REDACTED:NAME]`). (Implemented by the report work.)
