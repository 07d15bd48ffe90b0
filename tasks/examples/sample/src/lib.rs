/// Adds two numbers.
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

// TODO: handle overflow explicitly instead of relying on debug-build panics.
pub fn double(a: i32) -> i32 {
    add(a, a)
}
