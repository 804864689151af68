//! Every file in tests/invalid_configs is refused with the message its first line expects
//! (`# expect: ...`, which must appear in `file:line:column: key: message`); every file in
//! tests/valid_configs loads. The binary exits 2 on a bad config.

use std::path::Path;

use agentwatch::config::parse;

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_invalid_config_gets_its_message() {
    let all = files("tests/invalid_configs");
    assert!(all.len() >= 12);
    for path in all {
        let text = std::fs::read_to_string(&path).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{} lacks '# expect:'", path.display()));
        let err = parse(&text, &path).expect_err(&path.display().to_string());
        let shown = err.to_string();
        assert!(
            shown.starts_with(&format!("{}:", path.display())),
            "names the file: {shown}"
        );
        assert!(
            shown.contains(expect),
            "{}:\n  expected {expect:?}\n  got      {shown:?}",
            path.display()
        );
        assert!(
            !err.key.is_empty() || expect.contains("(file)"),
            "names the key: {shown}"
        );
    }
}

#[test]
fn every_valid_config_loads() {
    for path in files("tests/valid_configs") {
        let text = std::fs::read_to_string(&path).unwrap();
        parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_binary_exits_2_on_a_bad_config_and_on_a_missing_one() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_configs/zero_tick.toml");
    for (cfg, want) in [
        (
            bad.to_string_lossy().into_owned(),
            "tick_ms: must be between 50 and 60000",
        ),
        (
            "/no/such/agentwatch.toml".to_string(),
            "cannot read the config file",
        ),
    ] {
        let home = tempfile::tempdir().unwrap();
        let out = crate::support::agentwatch_in(home.path())
            .args(["-c", &cfg, "-S", "/nonexistent.sock"])
            .env_remove("TMUX")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}
