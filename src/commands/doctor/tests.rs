//! `agentwatch doctor`'s checks, each on its own.

use super::*;

#[test]
fn an_agent_not_on_path_is_plainly_not_installed_and_an_installed_one_keeps_its_line() {
    let absent = agent_check("codex", "codex", None);
    assert_eq!(absent.level, Level::Info);
    assert_eq!(
        absent.line(),
        "- agent codex: not installed (codex not found on PATH)"
    );
    let elsewhere = agent_check("mine", "/opt/mine/bin/agent", None);
    assert_eq!(
        elsewhere.line(),
        "- agent mine: not installed (/opt/mine/bin/agent is not an executable file)"
    );
    let there = agent_check(
        "claude",
        "claude",
        Some(("/usr/bin/claude".into(), "(2.1.0 (Claude Code))".into())),
    );
    assert_eq!(
        there.line(),
        "✔ agent claude: /usr/bin/claude (2.1.0 (Claude Code))"
    );
}

#[test]
fn a_store_path_that_is_a_directory_fails_and_a_file_or_a_free_path_passes() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    assert_eq!(store_check("journal", &journal, false).level, Level::Ok);
    std::fs::write(&journal, "{}\n").unwrap();
    assert_eq!(store_check("journal", &journal, false).level, Level::Ok);
    std::fs::remove_file(&journal).unwrap();
    std::fs::create_dir(&journal).unwrap();
    let c = store_check("journal", &journal, false);
    assert_eq!(c.level, Level::Fail, "{}", c.line());
    assert!(c.detail.contains("not a regular file"), "{}", c.line());
    assert!(c.fix.unwrap().contains("move the directory away"));
    // The crash records' directory is one.
    assert_eq!(
        store_check("crash records", &journal, true).level,
        Level::Ok
    );
}

#[test]
fn a_webhook_says_whether_curl_can_send_it_and_keeps_its_secrets() {
    let url = "https://me:pw@ntfy.sh/secret-topic?tpl=yes";
    let sent = webhook_check(url, Some("/usr/bin/curl".into()));
    assert_eq!(
        sent.line(),
        "✔ webhook: https://ntfy.sh, sent through /usr/bin/curl"
    );
    let missing = webhook_check(url, None);
    assert_eq!(missing.level, Level::Warn);
    assert_eq!(
        missing.line(),
        "! webhook: https://ntfy.sh cannot be sent: not installed (curl not found on PATH)\n    \
         fix: install curl to send [notify] webhook notifications (apt-get install curl, brew install curl)"
    );
}

#[test]
fn passthrough_off_is_said_with_its_fix() {
    let off = passthrough_check("off");
    assert_eq!(off.level, Level::Warn);
    assert!(
        off.detail.contains("allow-passthrough is off"),
        "{}",
        off.detail
    );
    assert!(off.fix.as_deref().unwrap().contains("allow-passthrough on"));
    assert_eq!(passthrough_check("").level, Level::Warn);
    assert_eq!(passthrough_check("on").level, Level::Ok);
    assert_eq!(passthrough_check("all").level, Level::Ok);
}
