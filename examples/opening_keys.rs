//! Writes `assets/openings/keys.bin`: the Polyglot key of each line of the bundled opening table,
//! in the table's order, 8 bytes big-endian each (what `polybook::openings` reads instead of
//! playing the table's SAN at every start; a unit test checks that it is the table played).
//!
//!     cargo run --release --example opening_keys

fn main() -> std::io::Result<()> {
    let keys: Vec<u8> = polybook::openings::play_table()
        .iter()
        .flat_map(|k| k.0.to_be_bytes())
        .collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/openings/keys.bin");
    std::fs::write(path, &keys)?;
    println!("{path}: {} keys", keys.len() / 8);
    Ok(())
}
