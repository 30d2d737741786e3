//! The SDKs against a real `wrangler dev` (issue 29): each SDK's own suite
//! (sdk/typescript: `npm test`, node:test, with a consumer Worker of its
//! own in wrangler dev; sdk/python: pytest in `.venv-sdk`) gets this
//! binary's service, an Enterprise API key and its dashboard JWT; then the
//! quickstart's TypeScript and Python tabs (docs/quickstart.md) run as a
//! newcomer would, each ending with a verified receipt.
//! `scripts/setup-test.sh` builds the SDKs (scripts/build-sdks.sh) and
//! makes `.venv-sdk`.

use std::path::PathBuf;
use std::process::Command;

use bvs_tests::tenant::{new_tenant_on_plan, Tenant};
use bvs_tests::{api, repo_root, run_ok, shared};

/// `PATH` with the repository's Node tools (Node 22, wrangler) first.
fn path_with_node() -> String {
    format!(
        "{}:{}",
        repo_root().join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn tenant() -> (String, Tenant) {
    let base = shared();
    let api = api();
    (base, new_tenant_on_plan(&api, "enterprise"))
}

fn suite(cmd: &mut Command, base: &str, t: &Tenant, failure: &str) -> String {
    let out = run_ok(
        cmd.env("BVS_BASE", base)
            .env("BVS_API_KEY", &t.test_key)
            .env("BVS_JWT", &t.jwt)
            .env("PATH", path_with_node()),
        failure,
    );
    println!("{out}");
    out
}

fn python() -> PathBuf {
    let py = repo_root().join(".venv-sdk/bin/python");
    assert!(
        py.exists(),
        ".venv-sdk is missing: run scripts/setup-test.sh"
    );
    py
}

/// The fenced block of `lang` under the `## heading` section of the
/// quickstart.
fn tab(lang: &str, heading: &str) -> String {
    let markdown = std::fs::read_to_string(repo_root().join("docs/quickstart.md")).unwrap();
    let section = bvs_tests::docs::section(&markdown, heading);
    let fence = format!("```{lang}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no ```{lang} block under '## {heading}'"))
        + fence.len();
    let end = section[start..].find("\n```").unwrap() + start;
    section[start..end].to_string()
}

#[test]
fn the_typescript_sdk_suite_passes_on_node_and_in_a_worker() {
    let (base, t) = tenant();
    let out = suite(
        Command::new("npm")
            .args(["test", "--silent"])
            .current_dir(repo_root().join("sdk/typescript")),
        &base,
        &t,
        "the TypeScript SDK's suite failed",
    );
    assert!(out.contains("# fail 0"), "{out}");
}

/// The Python SDK as installed from its sources into `.venv-sdk`, once per
/// run: its suite and the quickstart's Python tab both import it, and the
/// tests run at the same time in any order.
fn python_with_sdk() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        run_ok(
            Command::new(python())
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-deps",
                    "--no-build-isolation",
                ])
                .arg(repo_root().join("sdk/python")),
            "pip install ./sdk/python",
        );
    });
    python()
}

#[test]
fn the_python_sdk_suite_passes_sync_and_async() {
    let (base, t) = tenant();
    // The suite tests the package as installed, so reinstall the sources.
    python_with_sdk();
    suite(
        Command::new(python())
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(repo_root().join("sdk/python/tests")),
        &base,
        &t,
        "the Python SDK's suite failed",
    );
}

#[test]
fn the_quickstart_typescript_tab_ends_with_a_verified_receipt() {
    let (base, t) = tenant();
    let file = repo_root().join("sdk/typescript/quickstart.mjs");
    std::fs::write(&file, tab("ts", "TypeScript tab")).unwrap();
    let out = run_ok(
        Command::new("node")
            .arg(&file)
            .env("BASE", &base)
            .env("KEY", &t.test_key)
            .env("PATH", path_with_node()),
        "the quickstart's TypeScript tab failed",
    );
    assert!(out.contains("verified: true"), "{out}");
    assert!(out.contains("balance 95.75"), "{out}");
}

#[test]
fn the_quickstart_python_tab_ends_with_a_verified_receipt() {
    let (base, t) = tenant();
    let out = run_ok(
        Command::new(python_with_sdk())
            .args(["-c", &tab("python", "Python tab")])
            .env("BASE", &base)
            .env("KEY", &t.test_key),
        "the quickstart's Python tab failed",
    );
    assert!(out.contains("verified: True"), "{out}");
    assert!(out.contains("balance 95.75"), "{out}");
}
