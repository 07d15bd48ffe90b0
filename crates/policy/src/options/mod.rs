//! How runner reads a program's options: one model ([`model`]: per program, a table of its
//! options, what each takes and what its value is), the tables as data ([`tables`]), and one
//! parser for all of them ([`mod@parse`]). `args` maps what the parser finds onto risks.

pub mod model;
pub mod parse;
pub mod tables;

pub use model::{Compiled, Effect, Opt, Style, Table, Takes};
pub use parse::{Given, Parsed, parse};
