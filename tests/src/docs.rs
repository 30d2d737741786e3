//! Executable documentation: the fenced ```sh blocks of a markdown page,
//! run in one bash against a real `wrangler dev`, so a doc cannot rot.

use std::path::Path;
use std::process::Command;

use crate::run_ok;

/// The fenced ```sh blocks of a markdown text, in order.
pub fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_end() == "```sh" => current = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "an unclosed ```sh block");
    blocks
}

/// The part of a markdown text under the `## heading` line, up to the next
/// heading of level 2.
pub fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let marker = format!("\n## {heading}\n");
    let start = markdown
        .find(&marker)
        .unwrap_or_else(|| panic!("no section '## {heading}'"))
        + marker.len();
    let rest = &markdown[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

/// Runs `script` under `bash -c 'set -euo pipefail; …'` in `dir` with
/// `BASE` set and `path_prefix` first on the PATH; panics with both outputs
/// when it fails, and returns its stdout.
pub fn run_bash(script: &str, base: &str, dir: &Path, path_prefix: Option<&Path>) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("set -euo pipefail\n{script}"))
        .env("BASE", base)
        .current_dir(dir);
    if let Some(prefix) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", prefix.display()));
    }
    run_ok(&mut cmd, "the documented commands failed")
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sh_blocks_are_extracted_in_order() {
        let md = "text\n```sh\necho 1\n```\n```console\n$ no\n```\n```sh\necho 2\n```\n";
        assert_eq!(sh_blocks(md), vec!["echo 1\n", "echo 2\n"]);
    }

    #[test]
    fn a_section_ends_at_the_next_level_two_heading() {
        let md = "# T\n\n## A\na\n### sub\nb\n## B\nc\n";
        assert_eq!(section(md, "A"), "a\n### sub\nb");
        assert_eq!(section(md, "B"), "c\n");
    }
}
