//! Documents generated from the one clap definition of the command line: shell completions
//! (`boostlab completions SHELL`), the manual page (`boostlab man`) and the Markdown reference
//! page docs/reference/cli.md (a test keeps the committed page equal to what clap says).

use anyhow::{Context, Result};
use clap::{Arg, Args, Command};
use clap_complete::Shell;

/// Arguments of `boostlab completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell. For bash:
    /// `boostlab completions bash > ~/.local/share/bash-completion/completions/boostlab`.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `boostlab completions SHELL`: the completion script on standard output.
pub fn completions(a: CompletionsArgs, cmd: &mut Command) -> Result<()> {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, cmd, "boostlab", &mut buf);
    // Completion scripts and roff are UTF-8 text; a closed pipe (`boostlab man | head`) ends quietly.
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(())
}

/// Arguments of `boostlab man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Output format: `roff` (for `man -l -`) or `markdown` (the reference page of the docs).
    #[arg(long, value_enum, default_value = "roff")]
    pub format: ManFormat,
}

/// Formats of `boostlab man`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ManFormat {
    /// A manual page per command, as roff.
    Roff,
    /// One Markdown page with every command and option.
    Markdown,
}

/// `boostlab man`: the manual page of the tool and its subcommands on standard output.
pub fn man(a: ManArgs, cmd: &Command) -> Result<()> {
    if let ManFormat::Markdown = a.format {
        out!("{}", markdown(cmd));
        return Ok(());
    }
    let mut buf = Vec::new();
    let cmd = cmd.clone().name("boostlab");
    clap_mangen::Man::new(cmd.clone()).render(&mut buf).context("rendering the manual page")?;
    // One page per subcommand after the tool's own, each titled `boostlab-NAME`.
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let title = format!("boostlab-{}", sub.get_name());
        clap_mangen::Man::new(sub.clone()).title(title).render(&mut buf).context("rendering the manual page")?;
    }
    // Completion scripts and roff are UTF-8 text; a closed pipe (`boostlab man | head`) ends quietly.
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(())
}

/// The Markdown reference of every subcommand and option, in the order clap shows them, grouped by
/// their help headings.
pub fn markdown(cmd: &Command) -> String {
    let mut cmd = cmd.clone().name("boostlab");
    cmd.build();
    let mut s = String::new();
    s.push_str("# Command-line reference\n\n");
    s.push_str(
        "Generated from the command line's own definition (`boostlab <command> --help` prints the \
         same text); a test fails when this page is out of date. Regenerate it with \
         `BOOSTLAB_REGENERATE=1 cargo test -p boostlab-cli reference`, or print it with \
         `boostlab man --format markdown`.\n\n",
    );
    if let Some(about) = cmd.get_about() {
        s.push_str(&format!("{about}\n\n"));
    }
    s.push_str("| command | what it does |\n|---|---|\n");
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
        let about = sub.get_about().map(|a| sentence(&a.to_string())).unwrap_or_default().replace('|', "\\|");
        s.push_str(&format!("| [`{0}`](#boostlab-{0}) | {1} |\n", sub.get_name(), about));
    }
    s.push('\n');
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
        command_section(&mut s, sub);
    }
    s
}

fn command_section(s: &mut String, sub: &Command) {
    let name = sub.get_name();
    s.push_str(&format!("(boostlab-{name})=\n## `boostlab {name}`\n\n"));
    if let Some(about) = sub.get_long_about().or(sub.get_about()) {
        s.push_str(&format!("{}\n\n", sentence(&about.to_string())));
    }
    let usage = sub.clone().bin_name(format!("boostlab {name}")).render_usage().to_string();
    s.push_str(&format!("```text\n{}\n```\n\n", usage.trim_start_matches("Usage: ").trim()));
    let args: Vec<&Arg> = sub.get_arguments().filter(|a| !a.is_hide_set()).collect();
    let mut headings: Vec<Option<&str>> = Vec::new();
    for a in &args {
        if !headings.contains(&a.get_help_heading()) {
            headings.push(a.get_help_heading());
        }
    }
    for heading in headings {
        let group: Vec<&&Arg> = args.iter().filter(|a| a.get_help_heading() == heading).collect();
        s.push_str(&format!(
            "**{}**\n\n",
            heading.unwrap_or(if group.iter().all(|a| a.is_positional()) { "Arguments" } else { "Options" })
        ));
        s.push_str("| option | description |\n|---|---|\n");
        for a in group {
            s.push_str(&format!("| `{}` | {} |\n", spelling(a), describe(a)));
        }
        s.push('\n');
    }
}

/// `--name VALUE`, `-q, --quiet`, or `<KIND>` for a positional argument.
fn spelling(a: &Arg) -> String {
    let value = a
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
    if a.is_positional() {
        return format!("<{value}>");
    }
    let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
    let mut out = String::new();
    if let Some(c) = a.get_short() {
        out.push_str(&format!("-{c}, "));
    }
    if let Some(l) = a.get_long() {
        out.push_str(&format!("--{l}"));
    }
    if takes_value {
        out.push_str(&format!(" <{value}>"));
    }
    out
}

fn describe(a: &Arg) -> String {
    let mut d = a.get_long_help().or(a.get_help()).map(|h| sentence(&h.to_string())).unwrap_or_default();
    let values: Vec<String> =
        a.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| format!("`{}`", v.get_name())).collect();
    if !values.is_empty() && a.get_num_args().is_some_and(|n| n.takes_values()) {
        d.push_str(&format!(" Values: {}.", values.join(", ")));
    }
    let defaults: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    if !defaults.is_empty() {
        d.push_str(&format!(" Default: `{}`.", defaults.join(",")));
    }
    if a.is_required_set() {
        d.push_str(" Required.");
    }
    d.replace('|', "\\|")
}

/// One line, ending with a full stop (clap drops the one that ends a doc comment).
fn sentence(s: &str) -> String {
    let mut line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if !line.is_empty() && !line.ends_with(['.', ':']) {
        line.push('.');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn page_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/cli.md")
    }

    /// docs/reference/cli.md is what clap says today; `BOOSTLAB_REGENERATE=1` rewrites it.
    #[test]
    fn reference_page_matches_the_command_line() {
        let page = markdown(&crate::Cli::command());
        let path = page_path();
        if std::env::var("BOOSTLAB_REGENERATE").as_deref() == Ok("1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &page).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == page,
            "docs/reference/cli.md is out of date: run `BOOSTLAB_REGENERATE=1 cargo test -p boostlab-cli reference`"
        );
    }

    #[test]
    fn reference_page_lists_every_subcommand_and_option() {
        let cmd = crate::Cli::command();
        let page = markdown(&cmd);
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            assert!(page.contains(&format!("## `boostlab {}`", sub.get_name())), "{}", sub.get_name());
            for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(l) = a.get_long() {
                    let listed = page.contains(&format!("--{l}`")) || page.contains(&format!("--{l} <"));
                    assert!(listed, "boostlab {} --{l}", sub.get_name());
                }
            }
        }
    }

    #[test]
    fn every_command_takes_its_model_file_as_the_model_option() {
        let cmd = crate::Cli::command();
        for name in ["predict", "inspect", "plot", "export"] {
            let sub = cmd.find_subcommand(name).unwrap();
            let model = sub.get_arguments().find(|a| a.get_id() == "model").unwrap();
            assert_eq!(model.get_long(), Some("model"), "{name}");
            assert!(!model.is_positional(), "{name}");
        }
    }

    #[test]
    fn completions_and_man_page_name_every_subcommand() {
        let mut cmd = crate::Cli::command();
        let mut buf = Vec::new();
        clap_complete::generate(Shell::Bash, &mut cmd, "boostlab", &mut buf);
        let bash = String::from_utf8(buf).unwrap();
        let mut roff = Vec::new();
        clap_mangen::Man::new(cmd.clone()).render(&mut roff).unwrap();
        let roff = String::from_utf8(roff).unwrap();
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            assert!(bash.contains(sub.get_name()), "completion lacks {}", sub.get_name());
            assert!(roff.contains(sub.get_name()), "man page lacks {}", sub.get_name());
        }
        assert!(bash.contains("--max-leaves"));
    }
}
