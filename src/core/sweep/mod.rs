//! The tools/list sweep: cursor pagination with every bound and guard, each a typed refusal.
//!
//! The wire is abstracted as one page fetch, so the guards are tested here without a server.
//!
//! The pages of a list come one after the other (each names the next), so what the client
//! does between a page's arrival and the next request is on the import's path. A page whose
//! head already passes every guard has the next page asked for at once; its tools are parsed
//! and checked while the server works on the next one.

mod page;
#[cfg(test)]
mod tests;

use super::config::Wait;
use super::error::{ConfigError, Failure};
pub use page::clip;
use page::{read_page, Head};
use serde_json::Value;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, Default)]
pub struct SweepBounds {
    pub max_tools: Option<u64>,
    pub max_pages: Option<u64>,
    pub list: Option<Wait>,
    pub discovery: Option<Wait>,
}

/// Why one page request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum PageError {
    TimedOut,
    /// Anything else: a JSON-RPC error, a dead connection. Passed through unchanged.
    Failed(Failure),
}

/// One page's result as the fetch got it: parsed, or as its JSON text, which the sweep reads
/// itself (the head first: see the module's comment).
#[derive(Debug)]
pub enum PageReply {
    Parsed(Value),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum SweepError {
    /// A bound or guard: a typed refusal.
    Refused(ConfigError),
    /// The wire failed: a plain error (or an OAuth one).
    Failed(Failure),
}

fn refused(message: String) -> SweepError {
    SweepError::Refused(ConfigError::new(message))
}

/// Pages through tools/list: `fetch(cursor, timeout)` makes one call, and `on_page` receives
/// each page's wire tools in order as soon as the page passed its checks, so the caller can
/// work on them while the next page is on its way. An error means no page counts.
pub async fn sweep<F, Fut>(
    id: &str,
    bounds: SweepBounds,
    mut fetch: F,
    mut on_page: impl FnMut(Vec<Value>),
) -> Result<(), SweepError>
where
    F: FnMut(Option<String>, Option<Duration>) -> Fut,
    Fut: Future<Output = Result<PageReply, PageError>>,
{
    let budget = Budget::new(id, &bounds);
    let mut guards = Guards::new(id, &bounds);
    let mut asked = ask(&mut fetch, budget.page_timeout(0)?, None).await;
    let mut page: u64 = 0;
    loop {
        page += 1;
        let Asked {
            reply,
            cursor: queried_with,
            cut_by_budget,
        } = asked;
        let result = reply
            .get()
            .await
            .map_err(|e| budget.page_failed(e, cut_by_budget, page))?;
        let head = match &result {
            PageReply::Text(text) => Head::read(text),
            PageReply::Parsed(_) => None,
        };
        // The next page is asked for at once when this one's head passes every guard and the
        // budget has time left; else the page is read whole and judged as it always was.
        let early = head.as_ref().and_then(|head| {
            let next = head.next.clone()?;
            guards.tally(head.count()).ok()?;
            guards.cursor(page, queried_with.as_deref(), &next).ok()?;
            Some((next, budget.page_timeout(page).ok()?))
        });
        if let (Some(head), Some((next, timing))) = (&head, early) {
            asked = ask(&mut fetch, timing, Some(next.clone())).await;
            let tools = head.tools(id, page)?;
            guards.passed(tools.len(), queried_with, &next);
            on_page(tools);
            continue;
        }
        drop(head);
        let (page_tools, next) = read_page(id, page, result)?;
        let listed = page_tools.len();
        // The page as listed goes on before the sweep's own guards judge it: the original's
        // list call has refused a page whose output schemas cannot compile by then.
        on_page(page_tools);
        guards.tally(listed)?;
        let Some(next) = next else {
            return Ok(());
        };
        guards.cursor(page, queried_with.as_deref(), &next)?;
        guards.passed(listed, queried_with, &next);
        asked = ask(&mut fetch, budget.page_timeout(page)?, Some(next)).await;
    }
}

/// A page asked for: its reply, the cursor it was asked at, and whether the discovery budget
/// cut its timeout.
struct Asked<Fut: Future> {
    reply: Reply<Fut>,
    cursor: Option<String>,
    cut_by_budget: bool,
}

/// A reply on its way, or already in (a fetch can be answered before it waits: a connection
/// already gone).
enum Reply<Fut: Future> {
    Waiting(Pin<Box<Fut>>),
    In(Fut::Output),
}

impl<Fut: Future> Reply<Fut> {
    async fn get(self) -> Fut::Output {
        match self {
            Reply::Waiting(reply) => reply.await,
            Reply::In(output) => output,
        }
    }
}

/// Asks for the page at `cursor` with `timing` (its timeout, and whether the budget cut it).
/// The request goes out now, as far as the fetch goes before it first waits, not when its
/// reply is awaited.
async fn ask<F, Fut>(
    fetch: &mut F,
    (timeout, cut_by_budget): (Option<Duration>, bool),
    cursor: Option<String>,
) -> Asked<Fut>
where
    F: FnMut(Option<String>, Option<Duration>) -> Fut,
    Fut: Future,
{
    let mut reply = Box::pin(fetch(cursor.clone(), timeout));
    let reply = match futures::poll!(reply.as_mut()) {
        Poll::Ready(output) => Reply::In(output),
        Poll::Pending => Reply::Waiting(reply),
    };
    Asked {
        reply,
        cursor,
        cut_by_budget,
    }
}

/// The sweep's guards on what the pages say: the wire tools counted so far (maxTools), the
/// cursors queried (the echo and revisit guards, maxPages).
struct Guards<'a> {
    id: &'a str,
    bounds: &'a SweepBounds,
    count: usize,
    visited: HashSet<String>,
}

impl<'a> Guards<'a> {
    fn new(id: &'a str, bounds: &'a SweepBounds) -> Self {
        Self {
            id,
            bounds,
            count: 0,
            visited: HashSet::new(),
        }
    }

    /// A page of `listed` wire tools more: refused past maxTools.
    fn tally(&self, listed: usize) -> Result<(), SweepError> {
        let (id, count) = (self.id, self.count + listed);
        match self.bounds.max_tools {
            Some(cap) if count as u64 > cap => Err(refused(format!(
                "mcp: tools/list of '{id}' returned at least {count} wire tools, over the declared maxTools {cap}; raise the cap or trim the server"
            ))),
            _ => Ok(()),
        }
    }

    /// Page `page`, queried with `queried_with`, naming `next`: refused when that makes no
    /// progress, cycles, or goes past maxPages.
    fn cursor(&self, page: u64, queried_with: Option<&str>, next: &str) -> Result<(), SweepError> {
        check_cursor(
            self.id,
            self.bounds,
            page,
            queried_with,
            next,
            &self.visited,
        )
    }

    /// A page that passed: its tools counted, its cursors visited.
    fn passed(&mut self, listed: usize, queried_with: Option<String>, next: &str) {
        self.count += listed;
        if let Some(q) = queried_with {
            self.visited.insert(q);
        }
        self.visited.insert(next.to_owned());
    }
}

/// The sweep's deadlines: the discovery budget for all pages, listMs for each.
struct Budget<'a> {
    id: &'a str,
    bounds: &'a SweepBounds,
    deadline: Option<Instant>,
    list_timeout: Option<Duration>,
}

impl<'a> Budget<'a> {
    fn new(id: &'a str, bounds: &'a SweepBounds) -> Self {
        Self {
            id,
            bounds,
            deadline: bounds.discovery.map(|w| Instant::now() + w.duration),
            list_timeout: bounds.list.map(|w| w.duration),
        }
    }

    fn discovery_refusal(&self, pages: u64) -> String {
        format!(
            "mcp: tools/list of '{}' exceeded the discovery deadline (timeouts.discoveryMs {}) after {pages} page(s)",
            self.id,
            super::jcs::format_f64(self.bounds.discovery.map_or(0.0, |w| w.ms))
        )
    }

    /// The next page's timeout, the smaller of listMs and what is left of the discovery
    /// budget, and whether the budget is what cut it; `Err` once the budget is spent (after
    /// `pages` pages).
    fn page_timeout(&self, pages: u64) -> Result<(Option<Duration>, bool), SweepError> {
        let Some(deadline) = self.deadline else {
            return Ok((self.list_timeout, false));
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(refused(self.discovery_refusal(pages)));
        }
        Ok(match self.list_timeout {
            Some(list) if list <= remaining => (Some(list), false),
            _ => (Some(remaining), true),
        })
    }

    /// Why page `page`'s call failed, as the sweep refuses it.
    fn page_failed(&self, error: PageError, cut_by_budget: bool, page: u64) -> SweepError {
        match error {
            PageError::TimedOut if cut_by_budget => refused(format!(
                "{}: the current page call was cut at the remaining budget",
                self.discovery_refusal(page - 1)
            )),
            PageError::TimedOut => refused(format!(
                "mcp: tools/list of '{}' page {page} timed out after {}ms (timeouts.listMs)",
                self.id,
                super::jcs::format_f64(self.bounds.list.map_or(0.0, |w| w.ms))
            )),
            PageError::Failed(message) => SweepError::Failed(message),
        }
    }
}

/// A next cursor that makes no progress, cycles, or goes past maxPages refuses the sweep.
fn check_cursor(
    id: &str,
    bounds: &SweepBounds,
    page: u64,
    queried_with: Option<&str>,
    next: &str,
    visited: &HashSet<String>,
) -> Result<(), SweepError> {
    if queried_with == Some(next) {
        return Err(refused(format!(
            "mcp: tools/list of '{id}' returned the cursor it was queried with ('{next}') on page {page}: the pagination makes no progress"
        )));
    }
    if visited.contains(next) {
        return Err(refused(format!(
            "mcp: tools/list of '{id}' returned a cursor this sweep already visited ('{next}') on page {page}: the pagination cycles"
        )));
    }
    if let Some(cap) = bounds.max_pages {
        if page >= cap {
            return Err(refused(format!(
                "mcp: tools/list of '{id}' still reports another page after {page} page(s), over the declared maxPages {cap}; raise the cap or trim the server"
            )));
        }
    }
    Ok(())
}
