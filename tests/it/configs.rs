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

/// What is not a config file is refused at once, not read without end: a device that never
/// ends (`/dev/zero`), a pipe nobody writes (which would block forever), a directory, and a
/// file far past any config's size.
#[test]
fn a_config_that_is_a_device_a_pipe_a_directory_or_huge_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let huge = dir.path().join("huge.toml");
    std::fs::write(&huge, "# x\n".repeat(600_000)).unwrap();
    for (cfg, want) in [
        ("/dev/zero".into(), "not a regular file"),
        (fifo, "not a regular file"),
        (dir.path().to_path_buf(), "not a regular file"),
        (huge, "bytes; a config file is at most 1024 KiB"),
    ] {
        let start = std::time::Instant::now();
        let mut child = crate::support::agentwatch_in(dir.path())
            .arg("-c")
            .arg(&cfg)
            .args(["-S", "/nonexistent.sock", "status"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut status = None;
        let ended = crate::support::poll_until(*crate::support::WAIT, || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        if !ended {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{}: still reading it after {:?}",
                cfg.display(),
                start.elapsed()
            );
        }
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.unwrap().code(), Some(2), "{}: {err}", cfg.display());
        assert!(err.contains(want), "{}: {err}", cfg.display());
        assert!(
            err.contains(&cfg.display().to_string()),
            "names the file: {err}"
        );
    }
}
