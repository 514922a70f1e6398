// The page of `polybook explore`: a board (chessground, the lichess board) on which the line is
// played with chessops' rules, and beside it, for each book, the book moves of the board's
// position as the server's `/api/probe` gives them (the same object `polybook probe --json` prints),
// and, with a tally, the games of each move and their results (`/api/tally`, the object
// `polybook probe TALLY.parquet --json` prints).
//
// The state is the line: a start position and the moves played from it, and how many of them are
// on the board (`ply`). Every change goes through `show()`, which redraws the board and the line,
// writes the line into the address (`#fen=…&moves=…&ply=…`, so that a link or a reload shows the
// same position) and asks the server for the new position's moves.

import { Chessground } from 'chessground';
import { Chess } from 'chessops/chess';
import { INITIAL_FEN, makeFen, parseFen } from 'chessops/fen';
import { chessgroundDests } from 'chessops/compat';
import { makeSanAndPlay, parseSan } from 'chessops/san';
import { makeSquare, parseSquare, parseUci, squareFile, squareRank } from 'chessops/util';

const $ = (id) => document.getElementById(id);

const state = {
  books: [],
  tally: null, // the tally's name, or null without one
  serverStart: INITIAL_FEN, // the start position the server was given (--fen, --moves)
  startFen: INITIAL_FEN,
  // positions[i] is the position after i moves of the line; moves[i] the move played from it.
  positions: [Chess.default()],
  moves: [], // { uci, san, from, to }
  ply: 0,
  orientation: 'white',
  request: 0, // the number of the latest probe asked for: older answers are dropped
  promotion: null, // { from, to } of a pawn move waiting for its piece
  addressWritten: false, // the page has written its first address (later ones are pushed)
  addressShown: null, // the address of what is shown (a history step to it needs nothing)
};

const board = Chessground($('board'), {
  movable: { free: false, showDests: true, events: { after: onBoardMove } },
  premovable: { enabled: false },
  draggable: { showGhost: true },
  highlight: { lastMove: true, check: true },
  animation: { duration: 150 },
});

// ---- The line ----

const here = () => state.positions[state.ply];

/// A chess position from a FEN, or an error message.
function positionOf(fen) {
  const setup = parseFen(fen);
  if (setup.isErr) return { error: `invalid FEN: ${setup.error.message}` };
  const pos = Chess.fromSetup(setup.value);
  if (pos.isErr) return { error: `the board cannot play from this position: ${pos.error.message}` };
  return { pos: pos.value };
}

/// The move in UCI as Polyglot books and the server write it: castling as the king's two-square
/// step (e1g1), where chessops writes the king taking its rook (e1h1).
function standardUci(pos, move) {
  let to = move.to;
  const piece = pos.board.get(move.from);
  if (piece && piece.role === 'king' && Math.abs(squareFile(move.to) - squareFile(move.from)) > 1) {
    to = (squareFile(move.to) > squareFile(move.from) ? 6 : 2) + 8 * squareRank(move.from);
  } else if (piece && piece.role === 'king' && pos.board.get(move.to)?.color === piece.color) {
    to = (move.to > move.from ? 6 : 2) + 8 * squareRank(move.from);
  }
  return makeSquare(move.from) + makeSquare(to) + (move.promotion ? move.promotion[0] === 'k' ? 'n' : move.promotion[0] : '');
}

/// Plays `move` (a chessops move) after the current ply: the same move as the line's next one
/// just goes forward; another one replaces the rest of the line. False if it is not legal.
function play(move) {
  const pos = here();
  if (!move || !pos.isLegal(move)) return false;
  const uci = standardUci(pos, move);
  if (state.moves[state.ply]?.uci === uci) {
    state.ply++;
    return true;
  }
  const after = pos.clone();
  const san = makeSanAndPlay(after, move);
  state.moves.length = state.ply;
  state.positions.length = state.ply + 1;
  state.moves.push({ uci, san, from: makeSquare(move.from), to: uci.slice(2, 4) });
  state.positions.push(after);
  state.ply++;
  return true;
}

/// The move a UCI string names in the current position (castling either way), or undefined.
function moveOfUci(uci) {
  const move = parseUci(uci);
  if (!move || !('from' in move)) return undefined;
  const pos = here();
  const piece = pos.board.get(move.from);
  // e1g1 → e1h1: chessops plays castling as the king taking its rook.
  if (piece?.role === 'king' && Math.abs(squareFile(move.to) - squareFile(move.from)) === 2) {
    const rook = (squareFile(move.to) === 6 ? 7 : 0) + 8 * squareRank(move.from);
    return { from: move.from, to: rook };
  }
  return move;
}

/// A move made on the board. A pawn reaching the last rank waits for its piece, picked from the
/// promotion box (or the keys q, r, b, n; Esc takes the move back).
function onBoardMove(orig, dest) {
  const pos = here();
  const to = parseSquare(dest);
  const pawn = pos.board.get(parseSquare(orig))?.role === 'pawn';
  clearError();
  if (pawn && (squareRank(to) === 0 || squareRank(to) === 7)) {
    state.promotion = { from: parseSquare(orig), to };
    $('promotion').hidden = false;
    $('promotion').querySelector('button').focus();
    return;
  }
  const move = moveOfUci(orig + dest);
  if (!play(move)) showError(`${orig}${dest} is not a legal move here`);
  show();
}

/// The promotion box's answer: `role` ('queen', 'rook', 'bishop', 'knight'), or none to take the
/// move back.
function promote(role) {
  const waiting = state.promotion;
  if (!waiting) return;
  state.promotion = null;
  $('promotion').hidden = true;
  if (role) {
    const move = { ...waiting, promotion: role };
    if (!play(move)) showError(`${makeSquare(waiting.from)}${makeSquare(waiting.to)}=${role} is not a legal move here`);
  }
  show();
}

/// Starts a new line from `fen` (already checked by the server).
function startFrom(fen, moves = []) {
  const { pos, error } = positionOf(fen);
  if (error) return error;
  const saved = { ...state, positions: state.positions, moves: state.moves };
  state.startFen = fen;
  state.positions = [pos];
  state.moves = [];
  state.ply = 0;
  for (const [i, token] of moves.entries()) {
    const current = here();
    const move = parseSan(current, token) ?? moveOfUci(token);
    if (!move || !play(move)) {
      Object.assign(state, saved);
      return `move ${i + 1} '${token}' is not legal in ${makeFen(current.toSetup())}`;
    }
  }
  return null;
}

// ---- Drawing ----

/// The board, the line and the FEN for the current ply; then the book moves, from the server.
function show() {
  const pos = here();
  const last = state.moves[state.ply - 1];
  const fen = makeFen(pos.toSetup());
  board.set({
    fen,
    orientation: state.orientation,
    turnColor: pos.turn,
    check: pos.isCheck() ? pos.turn : false,
    lastMove: last ? [last.from, last.to] : undefined,
    movable: { color: pos.isEnd() ? undefined : pos.turn, dests: chessgroundDests(pos) },
  });
  board.setAutoShapes([]);
  $('turn').textContent = pos.isCheckmate() ? 'checkmate' : pos.isStalemate() ? 'stalemate' : `${pos.turn} to move`;
  $('fen').value = fen;
  drawLine();
  writeAddress();
  state.addressShown = location.hash;
  probe(fen, state.startFen, state.moves.slice(0, state.ply).map((m) => m.uci));
}

/// The line in the page's address: `#fen=FEN` (when it does not start where the server does),
/// `&moves=UCI UCI…`, `&ply=N` (when the board is not at the line's end). Each new position is a
/// new entry of the browser's history, so that its back and forward buttons step through what was
/// shown; the first is written over the address the page was opened at.
function writeAddress() {
  const params = new URLSearchParams();
  if (state.startFen !== state.serverStart) params.set('fen', state.startFen);
  if (state.moves.length) params.set('moves', state.moves.map((m) => m.uci).join(' '));
  if (state.ply !== state.moves.length) params.set('ply', String(state.ply));
  const hash = params.toString();
  const target = hash ? `#${hash}` : location.pathname + location.search;
  if (target === (location.hash || location.pathname + location.search)) return;
  if (state.addressWritten) history.pushState(null, '', target);
  else history.replaceState(null, '', target);
  state.addressWritten = true;
}

/// The line an address names (see `writeAddress`), started on the page; an error message if it
/// names a position or a move that cannot be, and then the page starts where the server does.
function readAddress() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const fen = params.get('fen') ?? state.serverStart;
  const moves = (params.get('moves') ?? '').split(/\s+/).filter(Boolean);
  const error = startFrom(fen, moves);
  if (error) {
    startFrom(state.serverStart);
    return `the address names a line that cannot be played: ${error}`;
  }
  const ply = Number.parseInt(params.get('ply') ?? '', 10);
  if (Number.isInteger(ply)) state.ply = Math.max(0, Math.min(ply, state.moves.length));
  return null;
}

/// The line in SAN with move numbers; each move jumps to its position when clicked.
function drawLine() {
  const line = $('line');
  line.replaceChildren();
  const start = state.positions[0];
  state.moves.forEach((m, i) => {
    const pos = state.positions[i];
    if (pos.turn === 'white' || i === 0) {
      const number = document.createElement('span');
      number.className = 'number';
      number.textContent = `${pos.fullmoves}${pos.turn === 'white' ? '.' : '...'}`;
      line.append(number, ' ');
    }
    const move = document.createElement('span');
    move.className = 'move' + (i + 1 === state.ply ? ' current' : '');
    move.textContent = m.san;
    move.dataset.ply = i + 1;
    move.addEventListener('click', () => go(i + 1));
    line.append(move, ' ');
  });
  // With --fen or --moves (or a pasted FEN) the line starts from that position, not the usual one.
  if (!state.moves.length)
    line.textContent =
      state.startFen === INITIAL_FEN ? 'the start position' : `the position given (${start.turn} to move), no move played from it yet`;
}

/// The line as PGN: the start position's tags when it is not the usual one, then the moves.
function pgn() {
  const tags = state.startFen === INITIAL_FEN ? '' : `[SetUp "1"]\n[FEN "${state.startFen}"]\n\n`;
  const words = [];
  state.moves.forEach((m, i) => {
    const pos = state.positions[i];
    if (pos.turn === 'white') words.push(`${pos.fullmoves}.`);
    else if (i === 0) words.push(`${pos.fullmoves}...`);
    words.push(m.san);
  });
  words.push('*');
  return tags + words.join(' ') + '\n';
}

/// Asks the server for `fen`'s book moves (and its games in the tally) and draws them (unless a
/// newer position was asked for meanwhile). The server is given the line, `start` and the `moves`
/// from it that lead to `fen`, so that it names the line's opening.
async function probe(fen, start = fen, moves = []) {
  const number = ++state.request;
  document.body.dataset.state = 'loading';
  const query = `fen=${encodeURIComponent(start)}${moves.length ? `&moves=${encodeURIComponent(moves.join(' '))}` : ''}`;
  const ask = async (api) => {
    const reply = await fetch(`/api/${api}?${query}`);
    const answer = await reply.json();
    if (!reply.ok) throw new Error(answer.error);
    return answer;
  };
  try {
    const [books, tally] = await Promise.all([ask('probe'), state.tally ? ask('tally') : null]);
    if (number !== state.request) return;
    drawOpening(books[0] ?? tally);
    drawBooks(books);
    if (tally) drawTally(tally);
  } catch (e) {
    if (number !== state.request) return;
    showError(`cannot read the book moves: ${e.message}`);
  }
  document.body.dataset.state = 'ready';
  document.body.dataset.shown = fen; // the position whose moves are drawn (for tests and scripts)
  if (!performance.getEntriesByName('explore-usable').length) performance.mark('explore-usable');
}

/// An opening's ECO code and name (`probe --json`'s `eco` and `opening`), or '' without one.
const openingText = (o) => (o && o.eco ? `${o.eco} ${o.opening}` : '');

/// The name of the line's opening (lichess's table, named by the server), under the header.
function drawOpening(answer) {
  const text = openingText(answer);
  $('opening').textContent = text;
  $('opening').hidden = !text;
}

/// A move row's tooltip: the move, the opening it leads to, what a click does.
function moveTitle(move, what) {
  const opening = openingText(move);
  return `${what}${opening ? ` → ${opening}` : ''}: click to play`;
}

function cell(tag, text, className) {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (className) el.className = className;
  return el;
}

/// A learn field as `probe` shows it: `12g 58%` (PolyGlot's BookLearn: games, and their score from
/// the mover's view), or `-` before the first game.
function learnText(e) {
  return e.learn_score == null ? '-' : `${e.learn_games}g ${(e.learn_score * 100).toFixed(0)}%`;
}

/// A score from `polybook analyse` as `probe` shows it: `+0.35/12` (centipawns as pawns, from the
/// mover's view, then the depth), `#+3/20` for a mate in 3 plies, `-` for a move without one.
function scoreText(e) {
  if (e.score == null) return '-';
  const s = e.score;
  const text = s > 31000 ? `#+${32000 - s}` : s < -31000 ? `#-${32000 + s}` : `${s >= 0 ? '+' : '-'}${(Math.abs(s) / 100).toFixed(2)}`;
  return `${text}/${e.depth}`;
}

/// One panel per book: its moves (SAN, weight, share as a bar, learn or, in a scored book, score
/// and depth), then the entries under the position's key that are not legal moves here, apart.
function drawBooks(answer) {
  const panels = answer.map((book) => {
    const panel = cell('div', undefined, 'book');
    panel.dataset.book = book.book;
    panel.append(cell('h2', book.book));
    $('key').textContent = `key ${book.key}`;
    if (!book.entries.length) panel.append(cell('p', 'no book moves', 'empty'));
    else {
      const table = cell('table');
      const head = cell('tr');
      // A scored book's learn fields hold scores (its JSON has no learn statistics).
      const scored = book.entries.some((e) => e.learn_games === undefined);
      for (const h of ['move', 'weight', 'share', scored ? 'score' : 'learn']) head.append(cell('th', h));
      table.append(head);
      for (const e of book.entries) {
        const row = cell('tr', undefined, 'entry');
        row.dataset.uci = e.uci;
        row.title = moveTitle(e, `${e.uci} (raw ${e.raw})`);
        if (e.eco) row.dataset.opening = openingText(e);
        row.append(cell('td', e.san, 'san'), cell('td', e.weight, 'weight'));
        const share = cell('td', undefined, 'share');
        const inner = cell('div');
        const track = cell('div', undefined, 'track');
        const bar = cell('div', undefined, 'bar');
        bar.style.width = `${(e.share * 100).toFixed(1)}%`;
        track.append(bar);
        inner.append(track, cell('span', `${(e.share * 100).toFixed(1)}%`));
        share.append(inner);
        row.append(share, scored ? cell('td', scoreText(e), 'score') : cell('td', learnText(e), 'learn'));
        row.addEventListener('mouseenter', () => hint(e.uci));
        row.addEventListener('mouseleave', () => board.setAutoShapes([]));
        row.addEventListener('click', () => {
          clearError();
          if (!play(moveOfUci(e.uci))) showError(`${e.san} cannot be played here`);
          show();
        });
        table.append(row);
      }
      panel.append(table);
      const total = book.entries.reduce((sum, e) => sum + e.weight, 0);
      panel.append(cell('p', `${book.entries.length} move${book.entries.length === 1 ? '' : 's'}, total weight ${total}`, 'total'));
    }
    if (book.illegal.length) {
      const n = book.illegal.length;
      const box = cell('div', undefined, 'illegal');
      box.append(cell('p', `${n} entr${n === 1 ? 'y' : 'ies'} under this key ${n === 1 ? 'is' : 'are'} not legal here (a key collision or a broken book):`));
      const list = cell('ul');
      for (const e of book.illegal) list.append(cell('li', `raw ${e.raw}, weight ${e.weight}, learn ${learnText(e)}`));
      box.append(list);
      panel.append(box);
    }
    return panel;
  });
  $('books').replaceChildren(...panels);
}

const count = (n) => n.toLocaleString('en-US');
const percent = (part, whole) => (whole ? (100 * part) / whole : 0);

/// A result bar as the lichess opening explorer draws it: white wins, draws, black wins, each as
/// wide as its share, with its percentage written in when there is room.
function resultsBar(white, draws, black) {
  const games = white + draws + black;
  const bar = cell('div', undefined, 'wdl');
  bar.title = `white wins ${count(white)}, draws ${count(draws)}, black wins ${count(black)}`;
  for (const [n, side] of [[white, 'white'], [draws, 'draw'], [black, 'black']]) {
    const p = percent(n, games);
    if (!p) continue;
    const part = cell('div', p >= 12 ? `${p.toFixed(0)}%` : '', side);
    part.style.width = `${p.toFixed(2)}%`;
    bar.append(part);
  }
  return bar;
}

/// The tally's panel: each move's games (most first), share and results in white / draw / black
/// (the tally counts them from the mover's view: turned here to the colours), then the total.
function drawTally(t) {
  const box = $('tally');
  box.hidden = false;
  box.replaceChildren(cell('h2', `games: ${state.tally}`));
  const whiteMoves = t.fen.split(' ')[1] === 'w';
  const colours = (m) => (whiteMoves ? [m.wins, m.draws, m.losses] : [m.losses, m.draws, m.wins]);
  if (!t.moves.length) box.append(cell('p', 'no game of the tally reaches this position', 'empty'));
  else {
    const table = cell('table');
    const head = cell('tr');
    for (const h of ['move', 'games', '', 'white / draw / black']) head.append(cell('th', h));
    table.append(head);
    const sum = [0, 0, 0];
    for (const m of t.moves) {
      const row = cell('tr', undefined, 'move');
      row.dataset.uci = m.uci;
      row.title = moveTitle(m, m.uci);
      if (m.eco) row.dataset.opening = openingText(m);
      const [w, d, b] = colours(m);
      sum[0] += w;
      sum[1] += d;
      sum[2] += b;
      const results = cell('td', undefined, 'results');
      results.append(resultsBar(w, d, b));
      row.append(cell('td', m.san, 'san'), cell('td', count(m.games), 'games'),
        cell('td', `${(m.share * 100).toFixed(1)}%`, 'share'), results);
      row.addEventListener('mouseenter', () => hint(m.uci));
      row.addEventListener('mouseleave', () => board.setAutoShapes([]));
      row.addEventListener('click', () => {
        clearError();
        if (!play(moveOfUci(m.uci))) showError(`${m.san} cannot be played here`);
        show();
      });
      table.append(row);
    }
    const total = cell('tr', undefined, 'sum');
    const results = cell('td', undefined, 'results');
    results.append(resultsBar(...sum));
    total.append(cell('td', 'Σ'), cell('td', count(t.games), 'games'), cell('td', '100%', 'share'), results);
    table.append(total);
    box.append(table);
  }
  if (t.illegal.length) {
    const games = t.illegal.reduce((n, i) => n + i.games, 0);
    box.append(cell('p', `and ${t.illegal.length} move(s) under this key that are not legal here (${count(games)} games): a key collision`, 'options'));
  }
}

/// Shows a book move on the board as an arrow.
function hint(uci) {
  board.setAutoShapes([{ orig: uci.slice(0, 2), dest: uci.slice(2, 4), brush: 'blue' }]);
}

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

// ---- Controls ----

function go(ply) {
  if (state.promotion) promote('');
  state.ply = Math.max(0, Math.min(ply, state.moves.length));
  clearError();
  show();
}

function flip() {
  state.orientation = state.orientation === 'white' ? 'black' : 'white';
  board.set({ orientation: state.orientation });
}

/// A pasted FEN (checked by the server, whose rules decide) or move list (PGN move text: move
/// numbers, comments, variations and the result are skipped; played from the start position, or
/// from the FEN of a `[FEN "…"]` tag).
async function paste(text) {
  text = text.trim();
  if (!text) return;
  clearError();
  let error;
  const looksLikeFen = /^[^\s\[]*\/[^\s]*\/[^\s]*/.test(text);
  if (looksLikeFen) {
    try {
      const reply = await fetch(`/api/probe?fen=${encodeURIComponent(text)}`);
      const answer = await reply.json();
      if (!reply.ok) error = answer.error;
      else error = startFrom(answer.length ? answer[0].fen : text);
    } catch (e) {
      error = `cannot reach the server: ${e.message}`;
    }
  } else {
    const tag = text.match(/\[FEN\s+"([^"]*)"\]/);
    const moves = text
      .replace(/\[[^\]]*\]/g, ' ')
      .replace(/\{[^}]*\}/g, ' ')
      .replace(/;[^\n]*/g, ' ')
      .replace(/\([^()]*\)/g, ' ')
      .split(/\s+/)
      .map((t) => t.replace(/^\d+\.+/, '').replace(/[!?]+$/, ''))
      .filter((t) => t && !/^(\$\d+|1-0|0-1|1\/2-1\/2|\*)$/.test(t));
    error = startFrom(tag ? tag[1] : INITIAL_FEN, moves);
  }
  if (error) showError(error);
  else $('paste-text').value = '';
  show();
}

$('first').addEventListener('click', () => go(0));
$('back').addEventListener('click', () => go(state.ply - 1));
$('forward').addEventListener('click', () => go(state.ply + 1));
$('last').addEventListener('click', () => go(state.moves.length));
$('flip').addEventListener('click', flip);
$('paste').addEventListener('submit', (e) => {
  e.preventDefault();
  paste($('paste-text').value);
});
$('copy').addEventListener('click', async () => {
  const text = pgn();
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard (an insecure context, a refused permission): select the text to copy.
    const area = cell('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  $('copied').hidden = false;
  setTimeout(() => ($('copied').hidden = true), 1500);
});
for (const button of $('promotion').querySelectorAll('button')) {
  button.addEventListener('click', () => promote(button.dataset.role));
}
document.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (state.promotion) {
    const roles = { q: 'queen', r: 'rook', b: 'bishop', n: 'knight', Escape: '' };
    if (e.key in roles) {
      e.preventDefault();
      promote(roles[e.key]);
    }
    return;
  }
  const actions = {
    ArrowLeft: () => go(state.ply - 1),
    ArrowRight: () => go(state.ply + 1),
    ArrowUp: () => go(0),
    Home: () => go(0),
    ArrowDown: () => go(state.moves.length),
    End: () => go(state.moves.length),
    f: flip,
  };
  const action = actions[e.key];
  if (action) {
    e.preventDefault();
    action();
  }
});
// The browser's back and forward buttons, and an address typed or pasted into the bar: the line
// the address names is shown (once, though a step through the history may fire both events).
function showAddress() {
  if (location.hash === state.addressShown) return;
  clearError();
  const error = readAddress();
  if (error) showError(error);
  show();
}
window.addEventListener('popstate', showAddress);
window.addEventListener('hashchange', showAddress);
window.addEventListener('resize', () => document.body.dispatchEvent(new Event('chessground.resize')));

// The page's start: the books and the start position from the server.
(async () => {
  try {
    const reply = await fetch('/api/books');
    const config = await reply.json();
    state.books = config.books;
    state.tally = config.tally;
    state.serverStart = config.start;
    const error = readAddress();
    if (error) showError(error);
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
  }
  show();
})();

// For scripts and tests: the line as PGN.
window.explore = { pgn, state };
