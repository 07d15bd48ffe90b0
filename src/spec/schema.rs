//! TEMP STUB
#![allow(missing_docs)]
pub fn task_schema_pretty() -> String {
    String::new()
}
