//! `boostlab cv`: stratified k-fold cross-validation.

use anyhow::Result;
use clap::Args;

use crate::common::{BoostArgs, DataArgs};

/// Arguments of `boostlab cv`.
#[derive(Args, Debug)]
pub struct CvArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub boost: BoostArgs,
    /// Number of folds.
    #[arg(long, default_value_t = 10)]
    pub folds: usize,
    /// File with one integer fold id per data row (instead of the seeded stratified assignment).
    #[arg(long)]
    pub fold_file: Option<std::path::PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_a: CvArgs) -> Result<()> {
    anyhow::bail!("cv: not yet wired")
}
