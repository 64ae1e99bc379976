//! The metadata family: `meta`, mdtest-class (its tree, phases and rates), and `tree`,
//! fs_mark-class deep trees of small files.

pub mod meta;
pub mod tree;
