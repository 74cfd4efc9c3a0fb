//! Model selection around the trainer: parameters chosen from the data by inner
//! cross-validation ([`auto_t`]: t-AdaBoost's temperature).

pub mod auto_t;
