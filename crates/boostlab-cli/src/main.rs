//! `boostlab`: train, predict, inspect and cross-validate boosted ensembles from the command line.
//!
//! Conversion and presentation only: every algorithm lives in the `boostlab` library.

#[macro_use]
mod output;

mod args;
mod commands;
mod input;
mod signals;
mod svg;

use clap::{CommandFactory, Parser, Subcommand};
use commands::{cv, demo, experiment, export, inspect, plot, predict, reference, report, train};

/// Boosting from the AdaBoost family: discrete, Real, t-AdaBoost, SecBoost, AdaBoost.MH/MO/MR/M2.
#[derive(Parser)]
#[command(name = "boostlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Train an ensemble on a CSV or LIBSVM file and save it as a JSON model.
    Train(train::TrainArgs),
    /// Predict with a saved model (reports accuracy when the data have labels).
    Predict(predict::PredictArgs),
    /// Describe a saved model.
    Inspect(inspect::InspectArgs),
    /// Stratified k-fold cross-validation.
    Cv(cv::CvArgs),
    /// Train AdaBoost and Real AdaBoost on an embedded dataset (red wine quality ≥ 6) and print
    /// their test accuracy. Needs no files.
    Demo(demo::DemoArgs),
    /// Run an experiment grid (datasets × settings × noise × folds) from a TOML spec; resumable.
    Experiment(experiment::ExperimentArgs),
    /// Draw a saved model as SVG: learning curve, feature importance, margin distributions.
    Plot(plot::PlotArgs),
    /// Export a saved model to another format: `--onnx OUT.onnx`.
    Export(export::ExportArgs),
    /// Summarise a results directory: tables, paired t-tests against a reference, SVG plots.
    Report(report::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on standard output.
    Completions(reference::CompletionsArgs),
    /// Print the manual page on standard output: `boostlab man | man -l -` (roff), or the
    /// Markdown command-line reference with `--format markdown`.
    Man(reference::ManArgs),
}

fn main() {
    let cli = Cli::parse();
    signals::install();
    // `--threads N`: each command runs on a local pool of N worker threads; the experiment grid
    // has its own `--threads` (cells in parallel).
    let threads = match &cli.command {
        Command::Train(a) => a.threads.threads,
        Command::Predict(a) => a.threads.threads,
        Command::Inspect(a) => a.threads.threads,
        Command::Cv(a) => a.threads.threads,
        Command::Demo(a) => a.threads.threads,
        Command::Report(a) => a.threads.threads,
        Command::Plot(a) => a.threads.threads,
        Command::Export(a) => a.threads.threads,
        Command::Experiment(_) | Command::Completions(_) | Command::Man(_) => None,
    };
    let res = match cli.command {
        Command::Experiment(a) => experiment::run(a),
        Command::Completions(a) => reference::completions(a, &mut Cli::command()),
        Command::Man(a) => reference::man(a, &Cli::command()),
        command => args::with_threads(threads, move || match command {
            Command::Train(a) => train::run(a),
            Command::Predict(a) => predict::run(a),
            Command::Inspect(a) => inspect::run(a),
            Command::Cv(a) => cv::run(a),
            Command::Demo(a) => demo::run(a),
            Command::Report(a) => report::run(a),
            Command::Plot(a) => plot::run(a),
            Command::Export(a) => export::run(a),
            Command::Experiment(_) | Command::Completions(_) | Command::Man(_) => unreachable!("handled above"),
        }),
    };
    if let Some(code) = signals::exit_code() {
        // SIGINT / SIGTERM: 128 + the signal, nothing partial written (src/signals.rs).
        signals::exit_now(code);
    }
    if let Err(e) = res {
        eprintln!("error: {}", output::message(&e));
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use boostlab::params::registry::PARAMETERS;
    use clap::{Args, CommandFactory};

    /// Every registry parameter with a CLI flag is a `train` argument under the help heading of
    /// its topic, and every training-parameter flag (`BoostArgs`, `ValidationArgs`) is in the registry.
    #[test]
    fn train_flags_match_the_parameter_registry() {
        let cli = super::Cli::command();
        let train = cli.find_subcommand("train").expect("a train command");
        for p in PARAMETERS {
            let Some(flag) = p.cli_flag else { continue };
            let arg = train
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .unwrap_or_else(|| panic!("parameter `{}`: `boostlab train` has no --{flag}", p.name));
            assert_eq!(arg.get_help_heading(), Some(p.topic.heading()), "--{flag}'s help heading");
        }
        let boost = crate::args::BoostArgs::augment_args(clap::Command::new("boost"));
        let boost = crate::args::ValidationArgs::augment_args(boost);
        for a in boost.get_arguments() {
            let long = a.get_long().unwrap_or_else(|| panic!("{} has no long flag", a.get_id()));
            assert!(
                PARAMETERS.iter().any(|p| p.cli_flag == Some(long)),
                "--{long} is a training parameter missing from boostlab::params::registry::PARAMETERS"
            );
        }
    }
}
