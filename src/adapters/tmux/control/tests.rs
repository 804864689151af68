use super::*;

fn feed(p: &mut Parser, text: &[u8]) -> Vec<Completed> {
    text.split_inclusive(|&b| b == b'\n')
        .filter_map(|l| p.line(l))
        .collect()
}

#[test]
fn blocks_are_read_byte_for_byte_and_only_ours_count() {
    let mut p = Parser::default();
    let out = b"%begin 1 267 0\n%end 1 267 0\n%session-changed $0 main\n\
%begin 2 268 1\n\x1e%0\x1fsleep\x1f\xff\xfe\n%end looks like an end\n%end 2 999 1\n%end 2 268 1\n\
%output %1 hello\n%begin 3 269 1\ncan't find pane: %99\n%error 3 269 1\n%exit\n";
    let events: Vec<Completed> = feed(&mut p, out)
        .into_iter()
        .filter(|e| {
            !matches!(
                e,
                Completed::Change(_)
                    | Completed::Output(_)
                    | Completed::Paused(_)
                    | Completed::Attached(..)
            )
        })
        .collect();
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[0],
        Completed::Block(Ok(
            b"\x1e%0\x1fsleep\x1f\xff\xfe\n%end looks like an end\n%end 2 999 1\n".to_vec()
        ))
    );
    assert_eq!(
        events[1],
        Completed::Block(Err(ErrorBlock("can't find pane: %99".into())))
    );
    assert_eq!(events[2], Completed::Exit);
}

#[test]
fn the_server_changing_shape_and_panes_writing_are_noticed_and_nothing_else_is() {
    let mut p = Parser::default();
    let out = b"%window-add @3\n%output %1 x\n%unlinked-window-close @4\n\
%session-renamed $1 new\n%pane-mode-changed %1\n%sessions-changed\n\
%begin 1 2 1\n%window-add @9 (captured text, not a notice)\n%output %5 captured\n%end 1 2 1\n\
%extended-output %12 37 : \\033[2K\n%output %x\n%output %\n%pause %3\n";
    let events = feed(&mut p, out);
    assert_eq!(
        events,
        [
            Completed::Change(Change::Shape),
            Completed::Output(1),
            Completed::Change(Change::Shape),
            Completed::SessionRenamed("$1".into(), "new".into()),
            Completed::Change(Change::Shape),
            Completed::Block(Ok(
                b"%window-add @9 (captured text, not a notice)\n%output %5 captured\n".to_vec()
            )),
            Completed::Output(12),
            Completed::Paused(3),
        ]
    );
}

#[test]
fn garbage_never_panics() {
    let mut p = Parser::default();
    for junk in [
        &b"%begin\n"[..],
        b"%end\n",
        b"%begin 1\n%error\n",
        b"\xff\n",
        b"%begin 1 2 1\n",
    ] {
        let _ = feed(&mut p, junk);
    }
}

/// Records each write the pump makes, as tmux would read it.
#[derive(Clone, Default)]
struct Writes(Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

impl tokio::io::AsyncWrite for Writes {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.lock().unwrap().push(buf.to_vec());
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A connection whose writes are recorded; the server's side of its output.
fn connection() -> (Arc<Control>, Writes, tokio::io::DuplexStream) {
    let (tx, rx) = mpsc::unbounded_channel();
    let writes = Writes::default();
    let alive = Arc::new(AtomicBool::new(true));
    let (server, client) = tokio::io::duplex(4096);
    tokio::spawn(pump(
        writes.clone(),
        BufReader::new(client),
        rx,
        Arc::clone(&alive),
        Arc::new(Notices::default()),
        1,
    ));
    let c = Control {
        tx,
        alive,
        serial: 1,
    };
    (Arc::new(c), writes, server)
}

/// Once the pump has written what it was asked, the server answers `replies`.
async fn answer(writes: &Writes, server: &mut tokio::io::DuplexStream, replies: &[u8]) {
    while writes.0.lock().unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    server.write_all(replies).await.unwrap();
}

const THREE: &[u8] = b"%begin 1 1 1\na\n%end 1 1 1\n%begin 1 2 1\nno such pane\n%error 1 2 1\n\
%begin 1 3 1\nc\n%end 1 3 1\n";
const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_batch_is_one_write_and_a_failure_in_it_stops_nothing() {
    let (c, writes, mut server) = connection();
    let asked = tokio::spawn(async move {
        c.run_many(
            &[&["display-message", "-p", "a"], &["x", "-t", "%9"], &["y"]],
            T,
        )
        .await
    });
    answer(&writes, &mut server, THREE).await;
    let blocks = asked.await.unwrap().unwrap();
    assert_eq!(
        *writes.0.lock().unwrap(),
        [b"'display-message' '-p' 'a'\n'x' '-t' '%9'\n'y'\n".to_vec()],
        "one write: tmux reads the batch at one wake-up"
    );
    assert_eq!(
        blocks,
        [
            Ok(b"a\n".to_vec()),
            Err(ErrorBlock("no such pane".into())),
            Ok(b"c\n".to_vec())
        ]
    );
}

#[tokio::test]
async fn requests_queued_together_go_in_one_write_and_get_their_own_blocks() {
    let (c, writes, mut server) = connection();
    let asked =
        tokio::spawn(
            async move { tokio::join!(c.run(&["a"], T), c.run_many(&[&["b"], &["c"]], T)) },
        );
    answer(&writes, &mut server, THREE).await;
    let (a, b) = asked.await.unwrap();
    assert_eq!(*writes.0.lock().unwrap(), [b"'a'\n'b'\n'c'\n".to_vec()]);
    assert_eq!(a.unwrap(), Ok(b"a\n".to_vec()));
    assert_eq!(
        b.unwrap(),
        [Err(ErrorBlock("no such pane".into())), Ok(b"c\n".to_vec())]
    );
}

#[tokio::test]
async fn a_list_stops_at_its_first_failure_and_the_next_request_reads_on() {
    let (c, writes, mut server) = connection();
    let asked = tokio::spawn(async move {
        tokio::join!(
            c.run_list(&[&["a"], &["b"], &["never run"]], T),
            c.run(&["c"], T)
        )
    });
    answer(&writes, &mut server, THREE).await;
    let (list, after) = asked.await.unwrap();
    assert_eq!(
        list.unwrap(),
        [Ok(b"a\n".to_vec()), Err(ErrorBlock("no such pane".into()))]
    );
    assert_eq!(after.unwrap(), Ok(b"c\n".to_vec()));
}

#[test]
fn arguments_are_quoted_for_tmux() {
    assert_eq!(quote("a b").as_deref(), Some("'a b'"));
    assert_eq!(quote("it's").as_deref(), Some(r"'it'\''s'"));
    assert_eq!(
        quote("\u{1e}#{pane_id};").as_deref(),
        Some("'\u{1e}#{pane_id};'")
    );
    assert_eq!(quote("a\nb"), None);
}

#[tokio::test]
async fn a_rider_goes_in_the_next_write_of_another_request() {
    let (c, writes, mut server) = connection();
    let rider = Arc::clone(&c);
    let rode = tokio::spawn(async move {
        rider
            .ride_many(&[&["lease"]], Duration::from_secs(60), T)
            .await
    });
    // Held: nothing written while only the rider waits.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(writes.0.lock().unwrap().is_empty());
    let asked = tokio::spawn(async move { c.run_many(&[&["a"], &["b"]], T).await });
    answer(&writes, &mut server, THREE).await;
    assert_eq!(
        *writes.0.lock().unwrap(),
        [b"'a'\n'b'\n'lease'\n".to_vec()],
        "one write: the rider after the request it rode with"
    );
    assert_eq!(
        asked.await.unwrap().unwrap(),
        [Ok(b"a\n".to_vec()), Err(ErrorBlock("no such pane".into()))]
    );
    assert_eq!(rode.await.unwrap().unwrap(), [Ok(b"c\n".to_vec())]);
}

#[tokio::test(start_paused = true)]
async fn a_rider_with_no_one_to_ride_with_goes_alone_in_time() {
    let (c, writes, mut server) = connection();
    let within = Duration::from_secs(2);
    let start = tokio::time::Instant::now();
    let rode = tokio::spawn(async move { c.ride_many(&[&["lease"]], within, T).await });
    tokio::time::sleep(within - Duration::from_millis(1)).await;
    assert!(writes.0.lock().unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(2)).await;
    answer(&writes, &mut server, b"%begin 1 1 1\nheld\n%end 1 1 1\n").await;
    assert_eq!(*writes.0.lock().unwrap(), [b"'lease'\n".to_vec()]);
    assert!(start.elapsed() >= within, "{:?}", start.elapsed());
    assert_eq!(rode.await.unwrap().unwrap(), [Ok(b"held\n".to_vec())]);
}
