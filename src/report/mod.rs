//! Reports: stream-json frames, json results, text blocks and JUnit XML. (Implemented by the report work.)
