//! A damaged tally is an error, never a panic or an endless read: the file's footer and page
//! headers are walked before the `parquet` crate parses them, its metadata is checked against
//! the file before any page is read, and what the crate decodes runs under [`guarded`], which
//! turns a panic of its decoders (they assert on some bad input, such as an overlong varint)
//! into an error.
//!
//! What is checked up front is what the crate would otherwise trust:
//!
//! - the footer and each page header are sound Thrift, with no container claiming more elements
//!   than it has bytes ([`super::thrift`]), and each page lies inside its column chunk;
//! - every column chunk lies inside the file;
//! - the row counts agree (the file's with its row groups', each group's with the values of each
//!   of its columns), and a row group claims no more rows than its bytes can hold (at least one
//!   bit a row over all its columns: any real tally takes far more).
//!
//! The work of reading a row group is then bounded by the file's size.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::Length;

use super::io::SharedFile;
use super::thrift::{Stop, walk_struct};
use crate::text::reason;

/// The most bytes a page header may take (polybook's take a few dozen; with statistics, other
/// writers' a few hundred).
const MAX_PAGE_HEADER: usize = 1 << 20;

thread_local! {
    /// How many [`guarded`] calls are running on this thread (their panics are not printed).
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, which decodes with the `parquet` crate: a panic in it (on this thread) is an error,
/// with the panic's message, cut short, as its reason, and nothing printed.
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        // The hook before this one prints every other panic as before.
        let next = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) == 0 {
                next(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("");
        let mut reason: String = message
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        if reason.is_empty() {
            reason = "a panic".into();
        }
        Err(format!(
            "damaged data (the Parquet decoder stopped: {reason})"
        ))
    })
}

/// Checks what the footer `meta` says of its file's row groups and column chunks, before any
/// page is read (`data_end`: where the footer begins).
pub(super) fn check_metadata(meta: &ParquetMetaData, data_end: u64) -> Result<(), String> {
    let schema = meta.file_metadata().schema_descr();
    let mut rows: i64 = 0;
    for (g, group) in meta.row_groups().iter().enumerate() {
        let bad = |why: String| Err(format!("row group {g}: {why}"));
        let n = group.num_rows();
        if n < 0 {
            return bad(format!("{n} rows"));
        }
        rows = rows.saturating_add(n);
        if group.num_columns() != schema.num_columns() {
            return bad(format!(
                "{} column chunks for {} columns",
                group.num_columns(),
                schema.num_columns()
            ));
        }
        let mut bytes: u64 = 0;
        for (i, chunk) in group.columns().iter().enumerate() {
            let column = schema.column(i);
            let name = column.name();
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let len = chunk.compressed_size();
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(start, len)| start.checked_add(len));
            if start < 4 || end.is_none_or(|end| end > data_end) {
                return bad(format!(
                    "column {name:?} lies outside the file's data ({len} bytes at {start}, where \
                     the data is {data_end} bytes)"
                ));
            }
            bytes = bytes.saturating_add(len as u64);
            if chunk.column_type() != column.physical_type() {
                return bad(format!(
                    "column {name:?} holds {}, not {}",
                    chunk.column_type(),
                    column.physical_type()
                ));
            }
            // One value a row in a flat column (nulls counted).
            if column.max_rep_level() == 0 && chunk.num_values() != n {
                return bad(format!(
                    "column {name:?} has {} values for {n} rows",
                    chunk.num_values()
                ));
            }
        }
        if n as u64 > bytes.saturating_mul(8) {
            return bad(format!("{n} rows in {bytes} bytes"));
        }
    }
    let total = meta.file_metadata().num_rows();
    if total != rows {
        return Err(format!(
            "the file says it has {total} rows, its row groups {rows}"
        ));
    }
    Ok(())
}

/// Walks the footer of `file` (its metadata, Thrift) before the crate parses it; returns where
/// it begins (where the column chunks end). A file too short for a footer, or without Parquet's
/// magic, is left to the crate, which says so.
pub(super) fn check_footer(file: &SharedFile) -> Result<u64, String> {
    let len = file.len();
    if len < 12 {
        return Ok(len);
    }
    let tail = file.read(len - 8, 8).map_err(|e| reason(&e))?;
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if tail[4..] != *b"PAR1" || footer + 8 > len {
        return Ok(len);
    }
    let start = len - 8 - footer;
    let bytes = file.read(start, footer as usize).map_err(|e| reason(&e))?;
    match walk_struct(&bytes, |_, _| {}) {
        Ok(_) => Ok(start),
        Err(Stop::Short) => Err("its footer ends early, or claims more than it holds".into()),
        Err(Stop::Bad(why)) => Err(format!("its footer is damaged ({why})")),
    }
}

/// Walks the page headers of the column chunk `chunk` (inside the file: see
/// [`check_metadata`]) before the crate reads them: each sound Thrift, its page inside the
/// chunk.
pub(super) fn check_pages(file: &SharedFile, chunk: &ColumnChunkMetaData) -> Result<(), String> {
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or(chunk.data_page_offset()) as u64;
    let end = start + chunk.compressed_size() as u64;
    let (mut at, mut page) = (start, 0);
    while at < end {
        let left = usize::try_from(end - at).unwrap_or(usize::MAX);
        let most = left.min(MAX_PAGE_HEADER);
        let bad = |why: String| Err(format!("page {page} (at byte {at}): {why}"));
        let mut want = most.min(256);
        let (header, size) = loop {
            let bytes = file.read(at, want).map_err(|e| reason(&e))?;
            // PageHeader's field 3: compressed_page_size.
            let mut size = None;
            match walk_struct(&bytes, |id, v| {
                if id == 3 {
                    size = Some(v);
                }
            }) {
                Ok(header) => break (header as u64, size),
                Err(Stop::Short) if want < most => want = most.min(want * 16),
                Err(Stop::Short) => {
                    return bad(
                        "its header goes past the column chunk, or claims more than it \
                                holds"
                            .into(),
                    );
                }
                Err(Stop::Bad(why)) => return bad(format!("its header is damaged ({why})")),
            }
        };
        let Some(size) = size else {
            return bad("its header has no size".into());
        };
        let room = end - at - header;
        if u64::try_from(size).is_ok_and(|size| size <= room) {
            at += header + size as u64;
        } else {
            return bad(format!(
                "{size} bytes, where the column chunk has {room} left"
            ));
        }
        page += 1;
    }
    Ok(())
}
