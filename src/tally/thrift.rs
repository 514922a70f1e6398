//! A walk over Thrift's compact protocol, the encoding of a Parquet file's footer and page
//! headers, that builds nothing and trusts no length: it checks the shape of an encoded struct
//! before the `parquet` crate reads it, and hands out its top-level integer fields.
//!
//! The crate's own reader loops as many times as a list, set or map says it has elements, even
//! when they take no bytes (it skips an unknown field's list of two billion booleans for
//! seconds, and a struct may hold many such fields). Here every element must fit in the bytes
//! left (each takes at least one byte, booleans too, in a container), varints are at most ten
//! bytes, and structs nest at most 64 deep.

/// Why a walk stopped.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The bytes end before the struct does (or a length says more than is left): more bytes may
    /// complete it.
    Short,
    /// Not a Thrift struct.
    Bad(&'static str),
}

/// Compact protocol's types (a field's, or a container's elements').
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// The deepest nesting of containers and structs walked (the crate skips as deep).
const MAX_DEPTH: u32 = 64;

/// Walks the struct at the start of `bytes`; calls `field` with the id and value of each of its
/// own (not nested) integer fields. Returns the struct's length in bytes.
pub(super) fn walk_struct(bytes: &[u8], field: impl FnMut(i16, i64)) -> Result<usize, Stop> {
    let mut walk = Walk { bytes, at: 0 };
    walk.fields(0, field)?;
    Ok(walk.at)
}

struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Walk<'_> {
    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn byte(&mut self) -> Result<u8, Stop> {
        let b = *self.bytes.get(self.at).ok_or(Stop::Short)?;
        self.at += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Result<(), Stop> {
        if n > self.left() {
            return Err(Stop::Short);
        }
        self.at += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, Stop> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Stop::Bad("a varint of more than ten bytes"))
    }

    fn zigzag(&mut self) -> Result<i64, Stop> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A struct's fields, up to its stop byte; `field` sees its integer fields.
    fn fields(&mut self, depth: u32, mut field: impl FnMut(i16, i64)) -> Result<(), Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::Bad("structs nested too deep"));
        }
        let mut last: i16 = 0;
        loop {
            let header = self.byte()?;
            let ty = header & 0x0f;
            if ty == 0 {
                return Ok(());
            }
            let id = match header >> 4 {
                0 => self.zigzag()? as i16,
                delta => last
                    .checked_add(i16::from(delta))
                    .ok_or(Stop::Bad("a field id out of range"))?,
            };
            last = id;
            match ty {
                // A boolean field's value is its type.
                BOOL_TRUE | BOOL_FALSE => {}
                I16 | I32 | I64 => field(id, self.zigzag()?),
                _ => self.value(ty, depth)?,
            }
        }
    }

    /// A value of type `ty` (an element of a container when it is a boolean: one byte).
    fn value(&mut self, ty: u8, depth: u32) -> Result<(), Stop> {
        match ty {
            BOOL_TRUE | BOOL_FALSE | BYTE => self.skip(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.skip(8),
            BINARY => {
                let n = self.varint()?;
                self.skip(n)
            }
            LIST | SET => {
                let header = self.byte()?;
                let size = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                self.elements(size, 1, depth, [header & 0x0f, 0])
            }
            MAP => {
                let size = self.varint()?;
                if size == 0 {
                    return Ok(());
                }
                let types = self.byte()?;
                self.elements(size, 2, depth, [types >> 4, types & 0x0f])
            }
            STRUCT => self.fields(depth + 1, |_, _| {}),
            UUID => self.skip(16),
            _ => Err(Stop::Bad("a value of an unknown type")),
        }
    }

    /// `size` elements of a container, each `per` values of `types`.
    fn elements(&mut self, size: u64, per: u64, depth: u32, types: [u8; 2]) -> Result<(), Stop> {
        if depth >= MAX_DEPTH {
            return Err(Stop::Bad("containers nested too deep"));
        }
        // Every value takes at least a byte.
        if size.saturating_mul(per) > self.left() {
            return Err(Stop::Short);
        }
        for _ in 0..size {
            for &ty in &types[..per as usize] {
                self.value(ty, depth + 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_struct_is_walked_and_absurd_lengths_refused() {
        // Field 1: i32 -3; field 2: a list of two binaries; field 4 (delta 2): a struct with a
        // true boolean; field 300 (full id): i64 5; stop.
        let bytes = [
            0x15, 0x05, 0x19, 0x28, 0x01, b'a', 0x00, 0x2c, 0x11, 0x00, 0x06, 0xd8, 0x04, 0x0a,
            0x00, 0xff,
        ];
        let mut fields = Vec::new();
        assert_eq!(walk_struct(&bytes, |id, v| fields.push((id, v))), Ok(15));
        assert_eq!(fields, [(1, -3), (300, 5)]);
        for end in 0..15 {
            assert_eq!(walk_struct(&bytes[..end], |_, _| {}), Err(Stop::Short));
        }
        // A list of 2^31 - 1 booleans in four bytes.
        let bools = [0x19, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        assert_eq!(walk_struct(&bools, |_, _| {}), Err(Stop::Short));
        let map = [0x1b, 0xff, 0xff, 0xff, 0xff, 0x07, 0x11, 0x00];
        assert_eq!(walk_struct(&map, |_, _| {}), Err(Stop::Short));
        let long = [
            0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(matches!(walk_struct(&long, |_, _| {}), Err(Stop::Bad(_))));
        let deep = [0x1c; 100];
        assert!(matches!(walk_struct(&deep, |_, _| {}), Err(Stop::Bad(_))));
    }
}
