//! Output files that appear whole: every file polybook writes (books, `lines -o`, PGN) goes
//! through an [`AtomicFile`].
//!
//! - A regular file (or no file) at the target: the data goes to a temporary file in the
//!   target's folder, which [`AtomicFile::commit`] renames onto the target, so the path holds
//!   either the old file or the complete new one, never half a file. On Linux the temporary file
//!   has no name at all while it is written (`O_TMPFILE`): a process that dies, even by
//!   `kill -9`, leaves nothing behind. Elsewhere (or on a file system without `O_TMPFILE`) it is a
//!   named `.polybook-*.tmp` file, locked while its writer lives; the next [`AtomicFile::create`]
//!   in that folder removes the ones whose writer has died.
//! - Anything else at the target (`/dev/null`, a FIFO, a terminal, a device): it is written in
//!   place, as a stream. It is never replaced by a regular file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The names of named temporary files: `.polybook-XXXXXX.tmp`.
const PREFIX: &str = ".polybook-";
const SUFFIX: &str = ".tmp";

/// A named temporary file whose lock can be taken is removed only when it is also this old: a
/// writer creates its file and then locks it, and a file caught between the two is not stale.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// A file being written for a target path; see the module's documentation.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// An unnamed file in the target's folder (Linux `O_TMPFILE`), given a name by `commit`.
    #[cfg(target_os = "linux")]
    Unnamed(File),
    /// A named, locked temporary file beside the target.
    Named(Named),
    /// The target itself, which is not a regular file: written in place.
    InPlace(File),
}

impl AtomicFile {
    /// Starts writing `target`: a temporary file beside it, or the target itself when it exists
    /// and is not a regular file (opening a FIFO waits for its reader, as any writer does). A
    /// folder is refused (`io::ErrorKind::IsADirectory`).
    pub fn create(target: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let target = target.as_ref().to_path_buf();
        match fs::metadata(&target) {
            Ok(m) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "Is a directory",
                ));
            }
            Ok(m) if !m.is_file() => {
                let file = File::options().write(true).open(&target)?;
                return Ok(AtomicFile {
                    target,
                    inner: Inner::InPlace(file),
                });
            }
            _ => {}
        }
        let inner = temporary_in(folder_of(&target))?;
        Ok(AtomicFile { target, inner })
    }

    /// Starts writing a file that [`AtomicFile::commit_new`] will give a name in `dir`.
    pub fn create_in(dir: &Path) -> io::Result<AtomicFile> {
        Ok(AtomicFile {
            target: dir.to_path_buf(),
            inner: temporary_in(folder_of(&dir.join("x")))?,
        })
    }

    /// The path being written.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the target is written in place (it is not a regular file).
    pub fn in_place(&self) -> bool {
        matches!(self.inner, Inner::InPlace(_))
    }

    /// The file being written.
    pub fn file(&self) -> &File {
        match &self.inner {
            #[cfg(target_os = "linux")]
            Inner::Unnamed(f) => f,
            Inner::Named(t) => &t.file,
            Inner::InPlace(f) => f,
        }
    }

    fn file_mut(&mut self) -> &mut File {
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Unnamed(f) => f,
            Inner::Named(t) => &mut t.file,
            Inner::InPlace(f) => f,
        }
    }

    /// Makes the written data the target's content: for a temporary file, waits for the disk
    /// when `sync` is set (else a power cut soon after could lose the file, though it is never
    /// seen half-written), then renames it onto the target, replacing what was there.
    pub fn commit(self, sync: bool) -> io::Result<()> {
        let target = self.target;
        match self.inner {
            Inner::InPlace(mut f) => f.flush(),
            Inner::Named(t) => {
                if sync {
                    t.file.sync_all()?;
                }
                fs::rename(&t.path, &target)?;
                t.keep();
                Ok(())
            }
            #[cfg(target_os = "linux")]
            Inner::Unnamed(f) => {
                if sync {
                    f.sync_all()?;
                }
                linux::link_over(&f, &target)
            }
        }
    }

    /// Gives the written data the first of `names` (in the folder given to
    /// [`AtomicFile::create_in`]) that does not exist yet; an existing file is never replaced.
    /// Returns the path written.
    pub fn commit_new(self, names: impl IntoIterator<Item = String>) -> io::Result<PathBuf> {
        self.file().sync_all()?;
        let dir = &self.target;
        let paths = names.into_iter().map(|name| dir.join(name));
        let link = |path: &Path| match &self.inner {
            Inner::InPlace(_) => unreachable!("create_in never writes in place"),
            // A hard link, unlike a rename, fails when the name exists.
            Inner::Named(t) => fs::hard_link(&t.path, path),
            #[cfg(target_os = "linux")]
            Inner::Unnamed(f) => linux::link(f, path),
        };
        let (path, ()) = at_first_free(paths, link, "every name tried exists")?;
        Ok(path)
    }
}

/// A named temporary file, removed when dropped unless kept.
#[derive(Debug)]
struct Named {
    file: File,
    path: PathBuf,
    keep: bool,
}

impl Named {
    /// Leaves the file at its path (it was renamed away: nothing to remove).
    fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Named {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file_mut().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file_mut().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file_mut().flush()
    }
}

/// The folder a file at `path` lies in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file in `dir`: unnamed where the OS allows, else named and locked.
fn temporary_in(dir: PathBuf) -> io::Result<Inner> {
    #[cfg(target_os = "linux")]
    if let Some(f) = linux::unnamed_in(&dir)? {
        return Ok(Inner::Unnamed(f));
    }
    named_in(&dir).map(Inner::Named)
}

/// A named temporary file in `dir`, locked for as long as this process holds it open, after
/// removing the ones there whose writer has died.
fn named_in(dir: &Path) -> io::Result<Named> {
    remove_stale(dir);
    let create = |path: &Path| {
        File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
    };
    let (path, file) = at_first_free(temporary_names(dir), create, NO_FREE_NAME)?;
    let named = Named {
        file,
        path,
        keep: false,
    };
    named.file.lock()?;
    set_default_permissions(&named.file);
    Ok(named)
}

/// The message of a folder where no temporary name is free.
const NO_FREE_NAME: &str = "no free temporary name";

/// 100 random temporary names in `dir` (`.polybook-<16 hex digits>.tmp`), tried in turn.
fn temporary_names(dir: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    (0..100).map(move |_| dir.join(format!("{PREFIX}{:016x}{SUFFIX}", rand::random::<u64>())))
}

/// Makes a file at the first of `paths` where `make` does not fail with `AlreadyExists` (a file
/// is there): that path and what `make` returned. Another error stops at once; all paths taken
/// is an `AlreadyExists` error that says `none`.
fn at_first_free<T>(
    paths: impl IntoIterator<Item = PathBuf>,
    mut make: impl FnMut(&Path) -> io::Result<T>,
    none: &str,
) -> io::Result<(PathBuf, T)> {
    for path in paths {
        match make(&path) {
            Ok(made) => return Ok((path, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, none))
}

/// Removes the named temporary files in `dir` whose writer has died: the lock its writer held
/// can be taken, and the file has not been touched for a while. Returns how many were removed.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(PREFIX) && name.ends_with(SUFFIX)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if !meta.is_file() || !old {
            continue;
        }
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        // The lock is released when its holder exits, however it exits.
        if file.try_lock().is_ok() && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Temporary files are created 0600; an output is an ordinary file (0644 less the umask's bits,
/// approximated as 0644 since the umask cannot be read without changing it).
fn set_default_permissions(file: &File) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(fs::Permissions::from_mode(0o644));
    }
    #[cfg(not(unix))]
    let _ = file;
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CString;
    use std::fs::File;
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    /// An unnamed file in `dir` (`O_TMPFILE`, mode 0666 less the umask, as any new file), or
    /// `None` where the file system does not support them.
    pub fn unnamed_in(dir: &Path) -> io::Result<Option<File>> {
        let opened = File::options()
            .read(true)
            .write(true)
            .mode(0o666)
            .custom_flags(libc::O_TMPFILE)
            .open(dir);
        match opened {
            Ok(f) => Ok(Some(f)),
            // Not supported here (old kernel, or a file system without it): a named file.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOSYS)
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives the unnamed file `f` the name `path`; fails if `path` exists.
    pub fn link(f: &File, path: &Path) -> io::Result<()> {
        let from = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
        let to = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: two valid NUL-terminated strings; linkat reads them and keeps no pointer.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOENT) || Path::new("/proc/self/fd").exists() {
            return Err(err);
        }
        // No /proc: name the descriptor itself (this needs CAP_DAC_READ_SEARCH).
        let empty = CString::default();
        // SAFETY: as above.
        let r = unsafe {
            libc::linkat(
                f.as_raw_fd(),
                empty.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Gives the unnamed file `f` the name `target`, replacing what is there: named directly
    /// when `target` does not exist, else under a locked temporary name renamed onto it.
    pub fn link_over(f: &File, target: &Path) -> io::Result<()> {
        match link(f, target) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            done => return done,
        }
        // Locked before it has a name, so that no other run ever takes it for a stale one.
        f.lock()?;
        let dir = super::folder_of(target);
        let names = super::temporary_names(&dir);
        let (name, ()) = super::at_first_free(names, |name| link(f, name), super::NO_FREE_NAME)?;
        std::fs::rename(&name, target).inspect_err(|_| {
            let _ = std::fs::remove_file(&name);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_committed_file_replaces_the_target_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        for content in ["first", "second"] {
            let mut f = AtomicFile::create(&path).unwrap();
            assert!(!f.in_place());
            f.write_all(content.as_bytes()).unwrap();
            f.commit(true).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), content);
            assert_eq!(names(dir.path()), ["out.txt"]);
        }
    }

    #[test]
    fn an_uncommitted_file_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, "old").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new").unwrap();
        drop(f);
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(names(dir.path()), ["out.txt"]);
    }

    #[test]
    fn commit_new_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.pgn"), "old").unwrap();
        let mut f = AtomicFile::create_in(dir.path()).unwrap();
        f.write_all(b"new").unwrap();
        let path = f
            .commit_new(["a.pgn".to_string(), "b.pgn".to_string()])
            .unwrap();
        assert_eq!(path, dir.path().join("b.pgn"));
        assert_eq!(fs::read_to_string(dir.path().join("a.pgn")).unwrap(), "old");
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names(dir.path()), ["a.pgn", "b.pgn"]);
    }

    /// The named temporary file used where `O_TMPFILE` is not: committed, dropped, and with
    /// `commit_new`, it leaves nothing but the target.
    #[test]
    fn the_named_fallback_commits_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let named = |target: &Path| AtomicFile {
            target: target.to_path_buf(),
            inner: Inner::Named(named_in(dir.path()).unwrap()),
        };
        let mut f = named(&path);
        f.write_all(b"one").unwrap();
        f.commit(false).unwrap();
        let mut f = named(&path);
        f.write_all(b"two").unwrap();
        drop(f);
        assert_eq!(fs::read_to_string(&path).unwrap(), "one");
        let mut f = named(dir.path());
        f.write_all(b"three").unwrap();
        let new = f
            .commit_new(["out.txt".to_string(), "new.txt".to_string()])
            .unwrap();
        assert_eq!(fs::read_to_string(new).unwrap(), "three");
        assert_eq!(names(dir.path()), ["new.txt", "out.txt"]);
    }

    #[test]
    fn a_named_temporary_file_is_removed_once_its_writer_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let old = SystemTime::now() - 2 * STALE_AFTER;
        // A writer still alive: its lock is held, however old the file.
        let alive = named_in(dir.path()).unwrap();
        alive.file.set_modified(old).unwrap();
        // A writer that died: the file stays, its lock went with the process.
        let dead = named_in(dir.path()).unwrap();
        let dead_path = dead.path.clone();
        dead.file.set_modified(old).unwrap();
        dead.keep();
        // A file just made, not yet locked by its writer: too young to be judged.
        let young = dir.path().join(format!("{PREFIX}young{SUFFIX}"));
        fs::write(&young, "").unwrap();
        assert_eq!(remove_stale(dir.path()), 1);
        assert!(!dead_path.exists());
        assert!(alive.path.exists() && young.exists());
    }
}
