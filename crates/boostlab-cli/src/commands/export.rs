//! `boostlab export`: a saved model in another format (ONNX).

use std::path::PathBuf;

use anyhow::Result;
use boostlab::Ensemble;
use clap::Args;

/// Arguments of `boostlab export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
    /// The model file.
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// Write the linear model as an ONNX graph here (`ai.onnx.ml` TreeEnsembleRegressor; input
    /// `input`, float32 N × features, a categorical feature as its category code; outputs
    /// `label`, `probabilities`, `scores`).
    #[arg(long)]
    pub onnx: PathBuf,
    /// Export the clipped t-AdaBoost model (refused: it is not a sum of trees).
    #[arg(long)]
    pub clipped: bool,
}

/// `boostlab export --onnx`.
pub fn run(a: ExportArgs) -> Result<()> {
    let m = Ensemble::load(&a.model)?;
    #[cfg(feature = "onnx")]
    {
        let bytes = m.to_onnx_cancellable(a.clipped, Some(crate::signals::cancel()))?;
        {
            // A signal waits for the write (signals.rs): the file is whole or absent.
            let _lock = crate::signals::write_lock();
            if crate::signals::cancelled() {
                return Err(boostlab::Error::Cancelled.into());
            }
            boostlab::model::write_atomic(&a.onnx, &bytes)?;
        }
        outln!("{} written ({} bytes)", a.onnx.display(), bytes.len());
        Ok(())
    }
    #[cfg(not(feature = "onnx"))]
    {
        let _ = m;
        anyhow::bail!("this build of boostlab has no ONNX export (build it with the `onnx` feature)")
    }
}
