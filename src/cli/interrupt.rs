//! The one signal handler of every command: Ctrl-C, SIGTERM and SIGHUP (ctrlc's `termination`
//! feature) set a flag that the command's work polls, and run the command's hook if it set one.
//!
//! The handler is installed once, by the first command that asks for the flag or sets a hook.
//! If it cannot be installed, the signals still end the process (without the clean stop).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Once, PoisonError};

/// Set by a signal; never cleared (a command ends when it sees it).
static FLAG: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Run on the handler's thread after the flag is set.
type Hook = Box<dyn Fn() + Send>;
static HOOK: Mutex<Option<Hook>> = Mutex::new(None);

static INSTALL: Once = Once::new();

fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            FLAG.store(true, Ordering::Relaxed);
            if let Some(hook) = HOOK.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                hook();
            }
        });
    });
}

/// The flag that Ctrl-C, SIGTERM and SIGHUP set, the handler installed: a command that polls it
/// stops cleanly (a build leaves no output and no temporary file; a match keeps its finished
/// games).
pub fn flag() -> Arc<AtomicBool> {
    install();
    Arc::clone(&FLAG)
}

/// Runs `hook` on the handler's thread when a signal comes (after the flag is set): for a
/// command that waits on something other than the flag (`explore`), or ends the process itself
/// (`play` saves the game so far).
pub fn on_signal(hook: impl Fn() + Send + 'static) {
    *HOOK.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(hook));
    install();
}
