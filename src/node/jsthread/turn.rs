//! What this thread is doing for its JS environment right now: one struct per thread, as
//! tokio keeps its per-thread context, changed only through the scoped accessors below. Each
//! sets one part for the length of a closure and puts back what was there (on unwinding too),
//! so nothing set here outlives the napi call that set it, and nothing is held across an
//! await.
//!
//! Parts are keyed by the address of what they serve (a port, an in-process hand-over, a
//! batch of completions): only compared, never dereferenced. A part set for one of them says
//! nothing about another.

use std::cell::{Cell, RefCell};

/// A fire-and-forget hook call: `(key, which, text)`.
pub(super) type Fire = (u32, u32, String);

/// Whose a part is: the address of a port, a hand-over or a batch.
pub(super) type Whose = *const ();

/// The address `Whose` names `of` by.
pub(super) fn whose<T>(of: &T) -> Whose {
    std::ptr::from_ref(of).cast()
}

struct Turn {
    /// The port whose entry (a napi call on its JS thread) is running: the tasks it wakes are
    /// polled when the entry ends, not through the port.
    entered: Cell<Whose>,
    /// While a task of a port is polled: the hooks it fires, called right after the poll, on
    /// this thread (through the port they would reach JS only at the loop's next turn, after
    /// the promise the task settles: a request's trace span would end after the import).
    fires: Collected<Fire>,
    /// While the JS thread starts a call or polls a task of an in-process source: what it
    /// sends to that source's server, which the caller hands over itself, without waiting for
    /// a turn of the event loop.
    sends: Collected<String>,
    /// The batch of completions the running entry returns to JS itself (the deliverer, the feeder):
    /// a call it finishes there needs no wake-up.
    replying: Cell<Whose>,
}

/// What one scope collects for one owner.
type Collected<T> = RefCell<Option<(Whose, Vec<T>)>>;

thread_local! {
    static TURN: Turn = const {
        Turn {
            entered: Cell::new(std::ptr::null()),
            fires: RefCell::new(None),
            sends: RefCell::new(None),
            replying: Cell::new(std::ptr::null()),
        }
    };
}

/// Runs `f` inside an entry of port `port`; returns what it returned and whether no entry of
/// a port was running further up this thread's stack (then the caller drains what `f` woke).
pub(super) fn entering<R>(port: Whose, f: impl FnOnce() -> R) -> (R, bool) {
    let (out, before) = scoped(|t| &t.entered, port, f);
    (out, before.is_null())
}

/// An entry of port `port` is running on this thread.
pub(super) fn entered(port: Whose) -> bool {
    TURN.with(|t| t.entered.get() == port)
}

/// Runs `f` (a poll of a task of port `port`) with the hooks it fires collected.
pub(super) fn firing_later<R>(port: Whose, f: impl FnOnce() -> R) -> (R, Vec<Fire>) {
    collecting(|t| &t.fires, port, f)
}

/// Keeps a hook call of port `port` for the end of the poll running on this thread, if one is;
/// otherwise hands it back.
pub(super) fn fire_later(port: Whose, fire: Fire) -> Option<Fire> {
    offer(|t| &t.fires, port, fire)
}

/// Runs `f` with what it sends to hand-over `to` collected rather than sent.
pub(super) fn sending_later<R>(to: Whose, f: impl FnOnce() -> R) -> (R, Vec<String>) {
    collecting(|t| &t.sends, to, f)
}

/// Keeps a message for hand-over `to` when this thread collects its sends; otherwise hands it
/// back.
pub(super) fn send_later(to: Whose, text: String) -> Option<String> {
    offer(|t| &t.sends, to, text)
}

/// Runs `f`, whose caller returns batch `batch` to JS itself right after.
pub(super) fn replying<R>(batch: Whose, f: impl FnOnce() -> R) -> R {
    scoped(|t| &t.replying, batch, f).0
}

/// The running entry returns batch `batch` to JS itself.
pub(super) fn replied(batch: Whose) -> bool {
    TURN.with(|t| t.replying.get() == batch)
}

/// Runs `f` with one `Cell` part set to `to`; returns what it returned and what was there
/// before.
fn scoped<R>(part: fn(&Turn) -> &Cell<Whose>, to: Whose, f: impl FnOnce() -> R) -> (R, Whose) {
    struct Restore(fn(&Turn) -> &Cell<Whose>, Whose);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = TURN.try_with(|t| (self.0)(t).set(self.1));
        }
    }
    let before = TURN.with(|t| part(t).replace(to));
    let _restore = Restore(part, before);
    (f(), before)
}

/// Runs `f` with one collecting part set for `whose`; returns what it collected.
fn collecting<T: 'static, R>(
    part: fn(&Turn) -> &Collected<T>,
    whose: Whose,
    f: impl FnOnce() -> R,
) -> (R, Vec<T>) {
    struct Restore<T: 'static>(fn(&Turn) -> &Collected<T>, Option<Option<(Whose, Vec<T>)>>);
    impl<T: 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            if let Some(before) = self.1.take() {
                let _ = TURN.try_with(|t| (self.0)(t).replace(before));
            }
        }
    }
    let before = TURN.with(|t| part(t).replace(Some((whose, Vec::new()))));
    let mut restore = Restore(part, Some(before));
    let out = f();
    let before = restore.1.take().unwrap_or_default();
    let collected = TURN.with(|t| part(t).replace(before));
    (out, collected.map(|(_, v)| v).unwrap_or_default())
}

/// Adds `item` to what the part collects for `whose`, if it is collecting for it.
fn offer<T: 'static>(part: fn(&Turn) -> &Collected<T>, whose: Whose, item: T) -> Option<T> {
    TURN.with(|t| match &mut *part(t).borrow_mut() {
        Some((collecting, items)) if *collecting == whose => {
            items.push(item);
            None
        }
        _ => Some(item),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_set_for_its_scope_and_its_owner_only() {
        let (a, b) = (1u8, 2u8);
        let (a, b) = (whose(&a), whose(&b));
        assert!(!replied(a));
        replying(a, || {
            assert!(replied(a));
            assert!(!replied(b));
            replying(b, || assert!(replied(b) && !replied(a)));
            assert!(replied(a));
        });
        assert!(!replied(a));
        let ((), outermost) = entering(a, || {
            assert!(entered(a));
            let ((), outermost) = entering(a, || {});
            assert!(!outermost);
        });
        assert!(outermost && !entered(a));
    }

    #[test]
    fn what_a_scope_collects_is_its_owners_and_comes_back_at_its_end() {
        let (a, b) = (1u8, 2u8);
        let (a, b) = (whose(&a), whose(&b));
        assert_eq!(send_later(a, "x".into()), Some("x".into()));
        let (out, sent) = sending_later(a, || {
            assert_eq!(send_later(a, "1".into()), None);
            assert_eq!(send_later(b, "2".into()), Some("2".into()));
            let ((), inner) = sending_later(b, || assert_eq!(send_later(b, "3".into()), None));
            assert_eq!(inner, ["3"]);
            assert_eq!(send_later(a, "4".into()), None);
            7
        });
        assert_eq!((out, sent), (7, vec!["1".to_owned(), "4".to_owned()]));
        assert_eq!(send_later(a, "y".into()), Some("y".into()));
    }

    #[test]
    fn a_scope_that_unwinds_puts_back_what_was_there() {
        let a = whose(&1u8);
        let unwound = std::panic::catch_unwind(|| {
            firing_later(a, || replying(a, || -> () { panic!("inside") }))
        });
        assert!(unwound.is_err());
        assert!(!replied(a));
        assert_eq!(
            fire_later(a, (1, 2, String::new())),
            Some((1, 2, String::new()))
        );
    }
}
