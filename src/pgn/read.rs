//! Reading PGN text game by game: every game of a chunk through one [`ChunkVisitor`], read so
//! that a game reads the same whatever chunk holds it and whatever its neighbours are.

use pgn_reader::Visitor;

use super::input;

/// A pgn-reader visitor that [`read_games`] can take back to a mark and tell about broken games:
/// the build's game visitor, the games explorer's index, the training data's enumerator.
pub trait ChunkVisitor: Visitor<Output = ()> {
    /// Where the visitor's output stands.
    type Mark: Copy;
    /// Where the output stands now (`&mut`: a visitor may start a journal of what to take back).
    fn mark(&mut self) -> Self::Mark;
    /// Forgets every game read since `mark`, the last mark taken, to read their text again.
    fn rewind(&mut self, mark: Self::Mark);
    /// The reader gave up on a game (`why`: its error); `true` if its tag section broke (the game
    /// is skipped), `false` if its movetext was cut short.
    fn broken(&mut self, why: &str) -> bool;
    /// Called after the last game.
    fn finish(&mut self);
}

/// Reads every game of `data` as if each game's text were read alone, cut where
/// [`input::next_game_start`] says games start (as the chunks are), so that nothing (an unclosed
/// comment, say) runs from one game into the next and a game reads the same whatever chunk holds
/// it. A reader goes through the games in runs in which it cannot read across a game start
/// ([`input::run_end`]): a run ends only where a comment was left open. pgn-reader recovers from
/// bad movetext by itself; a broken tag section is an error for that game only.
pub fn read_games<V: ChunkVisitor>(data: &[u8], visitor: &mut V) {
    let mut start = 0;
    while start < data.len() {
        let stop = input::run_end(data, start);
        let mark = visitor.mark();
        if !read_game_text(&mut pgn_reader::Reader::new(&data[start..stop]), visitor) {
            // A tag section broke: read these games again one by one.
            visitor.rewind(mark);
            read_one_by_one(&data[..stop], start, visitor);
        }
        start = stop;
    }
    visitor.finish();
}

/// Reads the games of `data` from `start` each with a reader of its own. pgn-reader looks for a
/// tag's end only in what its buffer holds (16 KB at most): a game whose tag section breaks is
/// read again with a buffer that holds it whole, so that a long tag is read whole.
pub fn read_one_by_one<V: ChunkVisitor>(data: &[u8], start: usize, visitor: &mut V) {
    let mut game = start;
    while game < data.len() {
        let next = input::next_game_start(data, game).unwrap_or(data.len());
        let text = &data[game..next];
        let mark = visitor.mark();
        if !read_game_text(&mut pgn_reader::Reader::new(text), visitor) {
            visitor.rewind(mark);
            let mut whole = pgn_reader::Reader::build(text)
                .set_supported_tag_line_length(text.len())
                .finish();
            read_game_text(&mut whole, visitor);
        }
        game = next;
    }
}

/// Reads the games of the reader's text to its end; `false` if a tag section broke on the way
/// (the visitor has counted it).
fn read_game_text<R: std::io::Read, V: ChunkVisitor>(
    reader: &mut pgn_reader::Reader<R>,
    visitor: &mut V,
) -> bool {
    let mut tags_whole = true;
    loop {
        match reader.read_game(visitor) {
            Ok(Some(())) => {}
            Ok(None) => return tags_whole,
            // Reading from memory fails only on bad syntax, and the reader has moved past it.
            Err(e) => tags_whole &= !visitor.broken(&e.to_string()),
        }
    }
}
