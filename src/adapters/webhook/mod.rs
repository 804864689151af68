//! Webhooks: every announcement POSTed as JSON to `[notify] webhook`, a burst as one POST.
//! `payload` says what a POST says; `sender` gathers the events and sends them through curl.

/// The title and JSON body of a POST, for one event or a burst.
pub mod payload;
/// The long-lived task that gathers events into POSTs and sends them, retried.
pub mod sender;

pub use sender::Webhook;
