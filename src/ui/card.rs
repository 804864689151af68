//! One agent card: title, directory and session id, the banner or state line, the preview.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::theme::Theme;
use crate::core::attention::Doing;
use crate::core::card::{Auto, Card, Life};
use crate::core::supervisor::Hold;
use crate::core::text::{duration, fit, fit_left, pad, short_id, tilde, width};
use crate::core::time::Millis;

/// Everything a card needs besides itself.
pub struct CardCtx<'a> {
    pub theme: Theme,
    pub now: Millis,
    pub selected: bool,
    pub stale: bool,
    pub home: Option<&'a str>,
    /// The local time zone (for the clock time of a death).
    pub tz: &'a jiff::tz::TimeZone,
    /// The agent's resume needs a session id and none is known.
    pub lacks_id: bool,
    /// For an agent its pane's process ran (a wrapper, a launcher): what `r` runs, or why
    /// it will not.
    pub relaunch: Option<String>,
    /// The auto-resume policy's limits for this card's agent.
    pub max_attempts: u32,
    pub max_per_hour: u32,
    /// The host whose server the pane is on; `None`: this machine's.
    pub host: Option<&'a str>,
    /// Its resume is due and waits its turn in a mass death: why.
    pub waits: Option<String>,
    /// The margin after a usage limit's reset before it is resumed.
    pub limit_margin: Millis,
    /// A live agent at a usage limit: when it resets, where it said; and whether
    /// `continue` is typed then.
    pub resets: Option<Millis>,
    pub continues: bool,
    /// What it spent (`ctx 63% · 1.2M tok`), and whether its context is nearly full.
    pub spend: Option<(String, bool)>,
}

/// `in 1h 2m`, `now`: how long until `t`.
pub fn until(t: Millis, now: Millis) -> String {
    if t <= now {
        "now".into()
    } else {
        format!("in {}", duration(t - now))
    }
}

/// `in 3s`, `now`: a resume's countdown, in whole seconds rounded up.
fn countdown(due: Millis, now: Millis) -> String {
    match due.saturating_sub(now).div_ceil(1000) {
        0 => "now".to_string(),
        secs => format!("in {secs}s"),
    }
}

fn exit_short(card: &Card) -> String {
    match card.life {
        Life::Dead(e) => e.short(),
        _ => "exit ?".into(),
    }
}

pub use crate::core::time::clock;

/// When `continue` is typed into an agent whose limit resets at `t`: the reset plus the
/// margin, to the second where the margin is not whole minutes.
fn continue_at(t: Millis, ctx: &CardCtx) -> String {
    let at = t + ctx.limit_margin;
    if ctx.limit_margin % 60_000 == 0 {
        crate::core::time::clock_or_date(at, ctx.now, ctx.tz)
    } else {
        crate::core::time::clock_secs(at, ctx.tz)
    }
}

/// The state line: the loud banner for a death, a quiet line otherwise.
pub fn status_line(card: &Card, ctx: &CardCtx) -> (String, Style) {
    let ago = |t: Option<Millis>| t.map(|t| duration(ctx.now.saturating_sub(t)));
    let (text, style) = match card.life {
        Life::Running => {
            // Since when it runs is said only when known (another host's agent seen already
            // running is not).
            let up = ago(card.known_start()).map_or(String::new(), |d| format!(" for {d}"));
            match &card.attention.now {
                Some((v, since)) if v.doing == Doing::Limited => {
                    let next = match ctx.resets {
                        Some(t) if t > ctx.now => {
                            let then = if ctx.continues {
                                format!("continues at {}", continue_at(t, ctx))
                            } else {
                                "C continues it then".to_string()
                            };
                            format!(
                                "resets {} ({}) · {then}",
                                crate::core::time::clock_or_date(t, ctx.now, ctx.tz),
                                until(t, ctx.now)
                            )
                        }
                        Some(t) => format!(
                            "reset at {}, {} ago: still shown",
                            clock(t, ctx.tz),
                            duration(ctx.now.saturating_sub(t))
                        ),
                        None => format!("for {}", duration(ctx.now.saturating_sub(*since))),
                    };
                    // The banner itself is in the preview below; said here only when its
                    // reset could not be read from it.
                    let why = if ctx.resets.is_none() {
                        format!(" · {}", v.why)
                    } else {
                        String::new()
                    };
                    (format!("⏸ usage limit · {next}{why}"), ctx.theme.waiting())
                }
                Some((v, since)) if v.doing == Doing::Waiting => (
                    format!(
                        "◆ waiting for input {} · {}",
                        duration(ctx.now.saturating_sub(*since)),
                        v.why
                    ),
                    ctx.theme.waiting(),
                ),
                Some((v, since)) if v.doing == Doing::Idle => (
                    format!(
                        "● running{up} · idle {}",
                        duration(ctx.now.saturating_sub(*since))
                    ),
                    ctx.theme.idle(),
                ),
                Some((_, since)) => (
                    format!(
                        "● running{up} · working {}",
                        duration(ctx.now.saturating_sub(*since))
                    ),
                    ctx.theme.running(),
                ),
                None => (format!("● running{up}"), ctx.theme.running()),
            }
        }
        Life::Idle => (
            format!(
                "○ at the {} prompt: {} not running",
                card.launcher.as_ref().map_or("shell", |h| h.name.as_str()),
                card.agent.as_deref().unwrap_or("agent")
            ),
            ctx.theme.dim(),
        ),
        Life::Reading if card.launcher.as_ref().is_some_and(|h| h.prompt) => (
            "✖ process exited (reading the exit status from the shell…)".to_string(),
            ctx.theme.alarm(),
        ),
        Life::Reading => (
            "✖ process exited (reading exit status…)".to_string(),
            ctx.theme.alarm(),
        ),
        Life::Dead(exit) => {
            let when = match card.died_at {
                Some(t) => format!(
                    " at {} · {} ago",
                    clock(t, ctx.tz),
                    duration(ctx.now.saturating_sub(t))
                ),
                None => " · before agentwatch started".to_string(),
            };
            if exit.is_clean() {
                (
                    format!("✔ {} · finished{when}", exit.describe()),
                    ctx.theme.finished(),
                )
            } else if card.stopped_on_purpose() {
                // A calm state: it was stopped, nothing crashed.
                (
                    format!("■ stopped on purpose · {}{when}", exit.describe()),
                    ctx.theme.finished(),
                )
            } else {
                // Why, first, where it is known (the exit's exact words follow).
                let why = card
                    .stop
                    .as_ref()
                    .filter(|s| s.cause != crate::core::cause::Cause::Unknown)
                    .map_or(String::new(), |s| {
                        format!("{} · ", s.label(ctx.now, ctx.tz))
                    });
                (
                    format!("✖ {why}{}{when}", exit.describe()),
                    ctx.theme.alarm(),
                )
            }
        }
    };
    if ctx.stale {
        (format!("{text} (stale)"), ctx.theme.stale())
    } else {
        (text, style)
    }
}

pub fn render(card: &Card, ctx: &CardCtx, area: Rect, buf: &mut Buffer) {
    let t = &ctx.theme;
    // Its state's colour (a crash, a prompt waiting for its user), thick when selected.
    let asks = card.life == Life::Running
        && (card.attention.is(Doing::Waiting) || card.attention.is(Doing::Limited));
    let border = match (card.is_alarm() && !ctx.stale, asks && !ctx.stale) {
        (true, _) => t.alarm_border(),
        (_, true) => t.waiting_border(),
        _ if ctx.selected => t.selected_border(),
        _ => t.border(),
    };
    let border = if ctx.selected {
        border.add_modifier(ratatui::style::Modifier::BOLD)
    } else {
        border
    };
    let p = &card.pane;
    let kind = card.agent.as_deref().unwrap_or("pane");
    let inner_w = usize::from(area.width.saturating_sub(2));
    // The window's name is what gives way: the pane id at the end tells panes apart.
    let room = inner_w.saturating_sub(2);
    let head = match ctx.host {
        Some(h) => format!(" {kind} · {h} {} ", p.target()),
        None => format!(" {kind} · {} ", p.target()),
    };
    let tail = format!(" · {} ", p.id);
    let window_w = room.saturating_sub(width(&head) + width(&tail));
    let title = if window_w >= 3 || width(&p.window_name) <= window_w {
        fit(
            &format!("{head}{}{tail}", fit(&p.window_name, window_w)),
            room,
        )
    } else {
        fit(&format!("{head}{tail}"), room)
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(if ctx.selected {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(border)
        .title(Span::styled(title, t.title()));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let w = usize::from(inner.width);

    let mut lines: Vec<Line> = Vec::with_capacity(usize::from(inner.height));
    // The banner comes first: it is what must be seen even on the smallest card.
    let (status, style) = status_line(card, ctx);
    let banner = if card.is_alarm() {
        pad(&format!(" {status}"), w)
    } else {
        fit(&format!(" {status}"), w)
    };
    lines.push(Line::from(Span::styled(banner, style)));

    let id = if p.opts.session_id.is_empty() {
        String::new()
    } else {
        format!("id {}", short_id(&p.opts.session_id))
    };
    // What it spent, before the id: `ctx 63% · 1.2M tok · `, marked when its context is
    // nearly full.
    let (spent, full) = match &ctx.spend {
        Some((s, full)) if !id.is_empty() => (format!("{s} · "), *full),
        Some((s, full)) => (s.clone(), *full),
        None => (String::new(), false),
    };
    let right_w = width(&spent) + width(&id);
    // At least a space between the directory and the id, whatever the width.
    let cwd_w = w.saturating_sub(right_w + if right_w == 0 { 2 } else { 3 });
    let cwd = format!(" {}", fit_left(&tilde(p.cwd(), ctx.home), cwd_w));
    let id = fit(&id, w.saturating_sub(width(&cwd) + 1));
    let spent = fit(&spent, w.saturating_sub(width(&cwd) + width(&id) + 1));
    let gap = w.saturating_sub(width(&cwd) + width(&spent) + width(&id) + 1);
    lines.push(Line::from(vec![
        Span::raw(cwd),
        Span::raw(" ".repeat(gap)),
        Span::styled(spent, if full { t.waiting() } else { t.dim() }),
        Span::styled(id, t.dim()),
    ]));

    if let Some((text, alarm)) = notice(card, ctx) {
        // Whole, on a second line where it must be: its key hint ends it.
        let style = if alarm { t.alarm() } else { t.notice() };
        let cols = w.saturating_sub(2);
        let mut wrapped = crate::core::text::wrap(&text, cols);
        if wrapped.len() > 2 {
            let rest = wrapped.split_off(1).join(" ");
            wrapped.push(crate::core::text::fit_keep_end(&rest, cols));
        }
        for l in wrapped {
            lines.push(Line::from(Span::styled(format!(" {l}"), style)));
        }
    } else if let Some(asked) = card.attention.asks() {
        // What the prompt asks (the command to approve), which its last lines may not show.
        lines.push(Line::from(Span::styled(
            format!(" asks: {}", fit(asked, w.saturating_sub(8))),
            t.waiting(),
        )));
    }

    let room = usize::from(inner.height).saturating_sub(lines.len());
    let start = card.preview.len().saturating_sub(room);
    for l in &card.preview[start..] {
        lines.push(Line::from(Span::styled(
            format!(" {}", fit(l, w.saturating_sub(2))),
            t.dim(),
        )));
    }
    // Lines straight into the buffer: no wrapping to work out (every line is already fit).
    for (row, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}

/// The line of news for a card: its live notice, else what a dead card lacks.
pub fn notice(card: &Card, ctx: &CardCtx) -> Option<(String, bool)> {
    if let Some(n) = card.notice.as_ref().filter(|n| n.answer && n.live(ctx.now)) {
        return Some((n.text.clone(), n.alarm));
    }
    if card.life.is_dead() {
        // What its last run left running blocks any relaunch: said first, in alarm.
        if let Some(words) = crate::core::resume::orphans_words(card) {
            return Some((format!("{words}: x ends it"), true));
        }
    }
    let max = ctx.max_attempts;
    let story = card.notice.as_ref().filter(|n| n.story && n.live(ctx.now));
    if let (Some(s), Auto::Held(Hold::GaveUp { .. }), true) =
        (story, &card.auto, card.life.is_dead())
    {
        // What happened while this dashboard was closed ends with the give-up.
        return Some((format!("{}: press r to relaunch", s.text), true));
    }
    if card.life.is_dead() {
        match &card.auto {
            Auto::Scheduled { attempt, .. } if ctx.waits.is_some() => {
                let why = ctx.waits.clone().unwrap_or_default();
                return Some((
                    format!(
                        "{} · auto-resume {attempt}/{max} {why} · c cancels",
                        exit_short(card)
                    ),
                    false,
                ));
            }
            Auto::Scheduled { due, .. } if card.at_limit_reset(ctx.now, ctx.limit_margin) => {
                return Some((
                    format!(
                        "usage limit: resumes at {} ({}) · c cancels",
                        clock(*due, ctx.tz),
                        until(*due, ctx.now)
                    ),
                    false,
                ));
            }
            Auto::Scheduled { attempt, due } => {
                return Some((
                    format!(
                        "{} · auto-resume {attempt}/{max} {} · c cancels",
                        exit_short(card),
                        countdown(*due, ctx.now)
                    ),
                    false,
                ));
            }
            Auto::Resuming { attempt } => {
                return Some((format!("auto-resuming (attempt {attempt}/{max})…"), false))
            }
            Auto::Held(Hold::GaveUp {
                attempts,
                hourly: false,
            }) => {
                return Some((
                    format!(
                        "auto-resume gave up after {}: press r to relaunch",
                        crate::core::text::counted(*attempts as usize, "attempt", "attempts")
                    ),
                    true,
                ))
            }
            // Not a cause that goes away by waiting: said in alarm until the next death,
            // over what an earlier attempt said ("resumed (attempt 1/3)").
            Auto::Held(h @ (Hold::NoSession(_) | Hold::Refused(_) | Hold::Cause(_))) => {
                let agent = card.agent.as_deref().unwrap_or("the agent");
                return h.reason(agent).map(|r| (r, true));
            }
            Auto::Held(Hold::GaveUp { hourly: true, .. }) => {
                return Some((
                    format!(
                        "auto-resume gave up: {} resumes in the last hour: press r to relaunch",
                        ctx.max_per_hour
                    ),
                    true,
                ))
            }
            _ => {}
        }
    }
    let previous = previous(card, ctx);
    if let Some(n) = card.notice.as_ref().filter(|n| n.live(ctx.now)) {
        return Some(match previous {
            Some(p) if !n.alarm => (format!("{} · {p}", n.text), false),
            _ => (n.text.clone(), n.alarm),
        });
    }
    if card.life.is_dead() {
        let agent = card.agent.as_deref().unwrap_or("the agent");
        match &card.auto {
            Auto::Cancelled => {
                return Some(("auto-resume cancelled: press r to relaunch".into(), false))
            }
            Auto::Held(h @ Hold::Unwatched) if !ctx.lacks_id => {
                return h.reason(agent).map(|r| (r, false))
            }
            Auto::Held(h @ Hold::Deliberate(_)) if card.life.is_alarm() => {
                return h.reason(agent).map(|r| (r, false))
            }
            Auto::Held(Hold::Off) if card.budget.paused => {
                return Some((
                    "auto-resume off for this pane (a turns it on)".into(),
                    false,
                ))
            }
            _ => {}
        }
    }
    if card.life.is_dead() && ctx.lacks_id {
        let agent = card.agent.as_deref().unwrap_or_default();
        return Some((crate::core::resume::no_id_words(agent), false));
    }
    if let (true, Some(r)) = (card.life.is_dead(), &ctx.relaunch) {
        return Some((r.clone(), false));
    }
    previous.map(|p| (format!("{p} (p then [ to read it)"), false))
}

/// What happens next to a card, in a few words for its line in the list (the card's own
/// notice says it in full): `resuming 1/3 in 2s`, `gave up · r`, `no id`, `C at 15:45`.
/// `None` where nothing will happen and nothing is asked of the user.
pub fn next_step(card: &Card, ctx: &CardCtx) -> Option<(String, Style)> {
    let t = &ctx.theme;
    let (alarm, notice, dim) = (t.alarm(), t.notice(), t.dim());
    let max = ctx.max_attempts;
    if card.relaunch.is_some() {
        return Some(("relaunching…".into(), notice));
    }
    if card.life == Life::Running {
        if !card.attention.is(Doing::Limited) {
            return None;
        }
        return Some(match ctx.resets {
            Some(r) if r > ctx.now && ctx.continues => {
                (format!("continues {}", continue_at(r, ctx)), notice)
            }
            Some(r) if r > ctx.now => (
                format!(
                    "C: continue {}",
                    crate::core::time::clock_or_date(r, ctx.now, ctx.tz)
                ),
                dim,
            ),
            _ => ("reset passed: look".into(), t.waiting()),
        });
    }
    if !card.life.is_dead() || card.life.is_finished() {
        return None;
    }
    if !card.orphans.is_empty() {
        return Some(("leftovers: x ends".into(), alarm));
    }
    Some(match &card.auto {
        Auto::Scheduled { attempt, .. } if ctx.waits.is_some() => {
            (format!("resume {attempt}/{max} waits"), notice)
        }
        Auto::Scheduled { due, .. } if card.at_limit_reset(ctx.now, ctx.limit_margin) => {
            (format!("resumes {}", clock(*due, ctx.tz)), notice)
        }
        Auto::Scheduled { attempt, due } => (
            format!("resuming {attempt}/{max} {}", countdown(*due, ctx.now)),
            notice,
        ),
        Auto::Resuming { attempt } => (format!("resuming {attempt}/{max}…"), notice),
        Auto::Held(Hold::GaveUp { .. }) => ("gave up · r".into(), alarm),
        Auto::Held(Hold::NoSession(_)) => ("no such session".into(), alarm),
        Auto::Held(Hold::Refused(_)) => ("refused · see below".into(), alarm),
        Auto::Held(Hold::Cause(_)) => ("held · r when fixed".into(), alarm),
        Auto::Held(Hold::NoSessionId) => ("no id".into(), alarm),
        _ if ctx.lacks_id => ("no id".into(), alarm),
        Auto::Held(Hold::Deliberate(_)) => ("r resumes".into(), dim),
        Auto::Held(Hold::Off) => ("auto off · r".into(), dim),
        Auto::Held(Hold::Unwatched) => ("r resumes".into(), dim),
        Auto::Cancelled => ("cancelled · r".into(), dim),
        Auto::Idle => return None,
    })
}

/// `previous: exit 1, 3m ago` for a live pane that was relaunched after a death.
fn previous(card: &Card, ctx: &CardCtx) -> Option<String> {
    if card.pane.dead || card.pane.opts.previous.is_empty() {
        return None;
    }
    let p = &card.pane.opts.previous;
    let (what, when) = p.split_once('|').unwrap_or((p, ""));
    let ago = when
        .parse::<Millis>()
        .map(|t| format!(", {} ago", duration(ctx.now.saturating_sub(t))))
        .unwrap_or_default();
    Some(format!("previous: {what}{ago}"))
}
