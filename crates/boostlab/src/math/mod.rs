//! The maths the boosters build on: tempered arithmetic ([`tempered`]) and the value-only losses
//! ([`loss`]).

pub mod loss;
pub mod tempered;
