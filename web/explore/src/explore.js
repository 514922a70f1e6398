// The page of `polybook explore`: a board (chessground, the lichess board) on which the line is
// played with chessops' rules, and beside it, for each book, the book moves of the board's
// position as the server's `/api/probe` gives them (the same object `polybook probe --json` prints),
// and, with a tally, the games of each move and their results (`/api/tally`, the object
// `polybook probe TALLY.parquet --json` prints), and, with games (`polybook explore GAMES.pgn
// --player NAME`), the moves played in them as filtered in the page (`/api/games`), their results,
// top and recent games, one of which can be replayed on the board (`/api/game`).
//
// With `--practice white|black`, the page drills the book instead (see "Practice" below): it plays
// the other side's book moves (`/api/practice/state`), the user plays theirs on the board, and
// each answer is graded by the server (`POST /api/practice/answer`).
//
// The state is the line: a start position and the moves played from it, and how many of them are
// on the board (`ply`). Every change goes through `show()`, which redraws the board and the line,
// writes the line into the address (`#fen=…&moves=…&ply=…`, and the games' filters, so that a
// link or a reload shows the same position) and asks the server for the new position's moves.

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
  games: null, // /api/books's `games` (name, player, games, plies, maxPly), or null without games
  filters: null, // the games' filters (see defaultFilters), null without games
  filtersAsked: null, // the filters' query of the latest games asked for (a change asks again)
  gamesRequest: 0, // the number of the latest games asked for: older answers are dropped
  playerSpelling: null, // lower-cased player → the name as the games write it (see drawGamesTitle)
  replay: null, // while a game is replayed: { game (/api/game's answer), saved (the line before) }
  practice: null, // with --practice: see setUpPractice
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
  // A move the replayed game did not play: exploring goes on from here, the game is left.
  state.replay = null;
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
  if (state.practice) return practiceAnswer(move);
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
  if (role && state.practice) return practiceAnswer({ ...waiting, promotion: role });
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
  // A new line is explored, not replayed (replay() marks its game's line after this).
  state.replay = null;
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
    // While practising, the board takes a move only when the user is asked for one.
    movable: { color: pos.isEnd() || state.practice ? undefined : pos.turn, dests: chessgroundDests(pos) },
  });
  board.setAutoShapes([]);
  $('turn').textContent = pos.isCheckmate() ? 'checkmate' : pos.isStalemate() ? 'stalemate' : `${pos.turn} to move`;
  $('fen').value = fen;
  drawLine();
  if (state.practice) {
    practiceStep();
    return;
  }
  drawReplay();
  writeAddress();
  state.addressShown = location.hash;
  probe(fen, state.startFen, state.moves.slice(0, state.ply).map((m) => m.uci));
}

/// The line in the page's address: `#fen=FEN` (when it does not start where the server does),
/// `&moves=UCI UCI…`, `&ply=N` (when the board is not at the line's end). Each new position is a
/// new entry of the browser's history, so that its back and forward buttons step through what was
/// shown; the first is written over the address the page was opened at.
function writeAddress() {
  // A replayed game is not written: a reload or a link returns to the exploring it was opened
  // from (the replay is a look aside, not a place).
  if (state.replay) return;
  const params = new URLSearchParams();
  if (state.startFen !== state.serverStart) params.set('fen', state.startFen);
  if (state.moves.length) params.set('moves', state.moves.map((m) => m.uci).join(' '));
  if (state.ply !== state.moves.length) params.set('ply', String(state.ply));
  // The games' filters that are not at their defaults, under /api/games's names.
  for (const [name, value] of filterParams()) params.set(name, value);
  const hash = params.toString();
  const target = hash ? `#${hash}` : location.pathname + location.search;
  // (An address the page was opened at that already names what is shown counts as written: the
  // next change is a new step, and back returns to it.)
  if (target !== (location.hash || location.pathname + location.search)) {
    if (state.addressWritten) history.pushState(null, '', target);
    else history.replaceState(null, '', target);
  }
  state.addressWritten = true;
}

/// The line an address names (see `writeAddress`), started on the page, and its games' filters;
/// an error message if it names a position or a move that cannot be, and then the page starts
/// where the server does.
function readAddress() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (state.games) {
    state.filters = filtersOf(params);
    writeFilterForm();
  }
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
    // Where the replayed game reaches the position it was picked at.
    if (state.replay && i + 1 === state.replay.game.ply) move.classList.add('reached');
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
  const query = lineQuery(start, moves);
  const ask = (api) => askApi(`${api}?${query}`);
  try {
    // Without books (games alone, or a tally alone) there is nothing to probe.
    const [books, tally, games] = await Promise.all([
      state.books.length ? ask('probe') : [],
      state.tally ? ask('tally') : null,
      state.games ? loadGames(query) : null,
    ]);
    if (number !== state.request) return;
    const named = books[0] ?? tally ?? games;
    drawOpening(named);
    if (!books.length && named?.key) $('key').textContent = `key ${named.key}`;
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

/// The query naming a position as /api/probe takes it: the line's start and the moves from it.
function lineQuery(start, moves) {
  return `fen=${encodeURIComponent(start)}${moves.length ? `&moves=${encodeURIComponent(moves.join(' '))}` : ''}`;
}

/// The query of the position on the board (see lineQuery).
const hereQuery = () => lineQuery(state.startFen, state.moves.slice(0, state.ply).map((m) => m.uci));

/// GET /api/PATH's JSON answer; an error with the server's message for anything but 200.
async function askApi(path) {
  const reply = await fetch(`/api/${path}`);
  const answer = await reply.json().catch(() => ({ error: `${reply.status} ${reply.statusText}` }));
  if (!reply.ok) throw new Error(answer.error ?? `${reply.status} ${reply.statusText}`);
  return answer;
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

/// What a move row of any panel does: hovered, its arrow on the board; clicked, the move played.
function playsOnClick(row, move) {
  row.addEventListener('mouseenter', () => hint(move.uci));
  row.addEventListener('mouseleave', () => board.setAutoShapes([]));
  row.addEventListener('click', () => {
    clearError();
    if (!play(moveOfUci(move.uci))) showError(`${move.san} cannot be played here`);
    show();
  });
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
        playsOnClick(row, e);
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
      playsOnClick(row, m);
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

// ---- The games: moves played in them, filtered; their top and recent games ----

const SPEEDS = ['ultrabullet', 'bullet', 'blitz', 'rapid', 'classical', 'correspondence', 'unknown'];
const RESULTS = ['win', 'draw', 'loss'];
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
/// How many of the position's top (and recent) games are listed under its moves.
const LISTED = 8;

/// The filters at their defaults: all the games.
const defaultFilters = () => ({
  color: 'both',
  speed: [...SPEEDS],
  mode: 'all',
  ratingMin: '',
  ratingMax: '',
  since: '',
  until: '',
  result: [...RESULTS],
  opponent: '',
});

/// The filters that are not at their defaults as /api/games's parameters, [name, value] pairs in
/// a fixed order: the API's query and the page's address both hold them.
function filterParams() {
  const f = state.filters;
  if (!f) return [];
  const params = [];
  // The colour is the player's: without --player the server refuses it.
  if (f.color !== 'both' && state.games.player) params.push(['color', f.color]);
  if (f.speed.length < SPEEDS.length) params.push(['speed', f.speed.join(',')]);
  if (f.mode !== 'all') params.push(['mode', f.mode]);
  if (f.ratingMin || f.ratingMax) params.push(['rating', `${f.ratingMin}-${f.ratingMax}`]);
  if (f.since) params.push(['since', f.since]);
  if (f.until) params.push(['until', f.until]);
  if (f.result.length < RESULTS.length) params.push(['result', f.result.join(',')]);
  if (f.opponent.trim()) params.push(['opponent', f.opponent.trim()]);
  return params;
}

const filterQuery = () => filterParams().map(([k, v]) => `&${k}=${encodeURIComponent(v)}`).join('');

/// The filters an address names (see filterParams). A value the page does not know is left at
/// its default rather than sent: an old or hand-edited link still opens.
function filtersOf(params) {
  const f = defaultFilters();
  const color = params.get('color');
  if (['white', 'black'].includes(color) && state.games.player) f.color = color;
  const list = (name, known) => {
    const picked = (params.get(name) ?? '').split(',').filter((v) => known.includes(v));
    // Kept in the widgets' order, so that the same choice always gives the same address.
    return picked.length ? known.filter((v) => picked.includes(v)) : [...known];
  };
  f.speed = list('speed', SPEEDS);
  f.result = list('result', RESULTS);
  if (['rated', 'casual'].includes(params.get('mode'))) f.mode = params.get('mode');
  const rating = (params.get('rating') ?? '').match(/^(\d*)-(\d*)$/);
  if (rating) [f.ratingMin, f.ratingMax] = [rating[1], rating[2]];
  for (const month of ['since', 'until']) if (MONTH.test(params.get(month) ?? '')) f[month] = params.get(month);
  f.opponent = params.get('opponent') ?? '';
  return f;
}

const form = () => $('filters');
const checked = (name) => [...form().querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);

/// The filters as the widgets hold them.
function readFilterForm() {
  return {
    color: checked('color')[0] ?? 'both',
    speed: checked('speed'),
    mode: checked('mode')[0] ?? 'all',
    ratingMin: $('rating-min').value,
    ratingMax: $('rating-max').value,
    since: $('since').value,
    until: $('until').value,
    result: checked('result'),
    opponent: $('opponent').value,
  };
}

/// The widgets set to `state.filters` (from an address, a reset).
function writeFilterForm() {
  const f = state.filters;
  for (const input of form().querySelectorAll('input[type=radio], input[type=checkbox]')) {
    const value = f[input.name];
    input.checked = Array.isArray(value) ? value.includes(input.value) : value === input.value;
  }
  $('rating-min').value = f.ratingMin;
  $('rating-max').value = f.ratingMax;
  $('since').value = f.since;
  $('until').value = f.until;
  $('opponent').value = f.opponent;
  $('filters-count').textContent = filterParams().length ? `(${filterParams().length} set)` : '';
}

/// A widget changed: the games asked again (unless the filters come to the same query), and the
/// address written, a new step of the history.
function applyFilters() {
  state.filters = readFilterForm();
  $('filters-count').textContent = filterParams().length ? `(${filterParams().length} set)` : '';
  if (filterQuery() === state.filtersAsked) return;
  clearError();
  writeAddress();
  state.addressShown = location.hash;
  loadGames(hereQuery());
}

/// The filter bar's events: boxes and buttons at once, typing after a pause (250 ms).
function listenToFilters() {
  let typing;
  form().addEventListener('change', (e) => {
    // An empty choice of speeds or results would be no games at all (and the API reads an empty
    // list as all of them): the last box ticked stays ticked.
    if (e.target.type === 'checkbox' && !checked(e.target.name).length) e.target.checked = true;
    clearTimeout(typing);
    applyFilters();
  });
  form().addEventListener('input', (e) => {
    if (e.target.type !== 'number' && e.target.type !== 'search') return;
    clearTimeout(typing);
    typing = setTimeout(applyFilters, 250);
  });
  form().addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typing);
    applyFilters();
  });
  $('filters-reset').addEventListener('click', () => {
    clearTimeout(typing);
    state.filters = defaultFilters();
    writeFilterForm();
    applyFilters();
  });
}

/// The games panel set up from /api/books's `games`: its title, and the widgets that depend on
/// whether the games are one player's.
function setUpGames(info) {
  state.games = info;
  state.filters = defaultFilters();
  $('games').hidden = false;
  const player = info.player?.join(', ');
  drawGamesTitle();
  $('games-title').title = `${info.name}: ${count(info.games)} games, positions up to ply ${info.maxPly}`;
  $('f-color').hidden = !player;
  // Without a player the rating is both players' average, the opponent either of them.
  $('f-rating-legend').textContent = player ? 'opponent rating' : 'average rating';
  $('f-opponent-legend').textContent = player ? 'opponent' : 'player';
  $('f-result-legend').textContent = player ? 'result' : "result (White's)";
  listenToFilters();
}

/// The panel's title: whose games. The server may give the players' names in lower case (they are
/// matched regardless of case): they are written as the games write them once a game shows it.
function drawGamesTitle() {
  const players = state.games.player;
  const spelt = (p) => state.playerSpelling?.get(p.toLowerCase()) ?? p;
  $('games-title').textContent = players ? `games of ${players.map(spelt).join(', ')}` : "all games, from White's side";
}

/// Learns how the games spell the players (see drawGamesTitle) from the games listed.
function learnPlayerSpelling(moves) {
  if (!state.games.player || state.playerSpelling) return;
  const wanted = new Set(state.games.player.map((p) => p.toLowerCase()));
  for (const g of moves.flatMap((m) => [...(m.top ?? []), ...(m.recent ?? [])])) {
    for (const name of [g.white, g.black]) {
      if (name && wanted.has(name.toLowerCase())) (state.playerSpelling ??= new Map()).set(name.toLowerCase(), name);
    }
  }
  if (state.playerSpelling) drawGamesTitle();
}

/// The games' file names without their folders (the whole path is the title's tooltip).
const gamesFiles = (name) => name.split(' + ').map((f) => f.split(/[\\/]/).pop()).join(' + ');

/// Asks the server for the games of the position `query` names, with the filters, and draws them
/// (unless newer ones were asked for meanwhile). Their answer, or null after an error (shown).
async function loadGames(query) {
  const number = ++state.gamesRequest;
  state.filtersAsked = filterQuery();
  const full = query + state.filtersAsked;
  $('games').dataset.state = 'loading';
  let answer = null;
  let error = null;
  try {
    answer = await askApi(`games?${full}`);
  } catch (e) {
    error = e.message;
  }
  if (number !== state.gamesRequest) return answer;
  if (error) {
    showError(`cannot read the games: ${error}`);
    drawGamesFailed();
  } else drawGames(answer);
  // What is drawn, for tests and scripts: the query it answers.
  $('games').dataset.query = full;
  $('games').dataset.state = 'ready';
  return answer;
}

/// The caption: how many of the games reach the position with the filters set.
function gamesCaption(answer) {
  const filtered = filterParams().length ? ' with these filters' : '';
  const info = state.games;
  return `${count(answer.games)} of ${count(info.games)} games (${gamesFiles(info.name)}) reach this position${filtered}`;
}

function drawGamesFailed() {
  $('games-caption').textContent = 'the games could not be read with these filters';
  $('games-moves').replaceChildren();
  $('games-lists').replaceChildren();
}

/// The games panel for /api/games's answer: a row per move, the total, then the games listed.
function drawGames(answer) {
  $('games-caption').textContent = gamesCaption(answer);
  learnPlayerSpelling(answer.moves);
  if (!answer.moves.length) {
    $('games-moves').replaceChildren(cell('p', emptyGamesText(), 'empty'));
    $('games-lists').replaceChildren();
    return;
  }
  const table = cell('table');
  const head = cell('tr');
  const headers = [
    ['move'], ['games'], ['white / draw / black'],
    ['score', state.games.player ? "the player's points per game" : "White's points per game"],
    ['perf.', 'performance: the average opponent + 400 × (wins − losses) / games'],
    ['opp.', state.games.player ? 'the average opponent rating' : 'the average rating'],
    ['last', 'the last month played'],
  ];
  for (const [text, title] of headers) {
    const th = cell('th', text, classOfHeader(text));
    if (title) th.title = title;
    head.append(th);
  }
  table.append(head, ...answer.moves.map(gamesMoveRow), gamesTotalRow(answer));
  const scroll = cell('div', undefined, 'scroll');
  scroll.append(table);
  $('games-moves').replaceChildren(scroll);
  $('games-lists').replaceChildren(...gameLists(answer.moves));
}

const classOfHeader = (text) => ({ 'perf.': 'perf', 'opp.': 'rating', 'white / draw / black': 'results' })[text] ?? text;

/// Why no move is shown: no game here with the filters, or a position deeper than the index.
function emptyGamesText() {
  const pos = here();
  const ply = 2 * (pos.fullmoves - 1) + (pos.turn === 'black' ? 1 : 0);
  if (ply >= state.games.maxPly) return `no move: the games are indexed up to ply ${state.games.maxPly}`;
  return filterParams().length ? 'no game reaches this position with these filters' : 'no game reaches this position';
}

const dash = (v) => (v == null ? '–' : String(v));

/// A move's row: games, results, the player's score, performance, average opponent, last played.
function gamesMoveRow(m) {
  const row = cell('tr', undefined, 'move');
  row.dataset.uci = m.uci;
  row.title = moveTitle(m, m.uci);
  if (m.eco) row.dataset.opening = openingText(m);
  const results = cell('td', undefined, 'results');
  results.append(resultsBar(m.white, m.draws, m.black));
  row.append(
    cell('td', m.san, 'san'),
    cell('td', count(m.games), 'games'),
    results,
    cell('td', `${(m.score * 100).toFixed(0)}%`, 'score'),
    cell('td', dash(m.performance), 'perf'),
    cell('td', dash(m.rating), 'rating'),
    cell('td', dash(m.last), 'last'),
  );
  playsOnClick(row, m);
  return row;
}

/// The position's total: every filtered game that reaches it (games that end here included).
function gamesTotalRow(answer) {
  const row = cell('tr', undefined, 'sum');
  const results = cell('td', undefined, 'results');
  results.append(resultsBar(answer.white, answer.draws, answer.black));
  row.append(cell('td', 'Σ'), cell('td', count(answer.games), 'games'), results);
  for (const c of ['score', 'perf', 'rating', 'last']) row.append(cell('td', '', c));
  return row;
}

/// A game's average rating (of the ratings it has), for ordering the top games.
const meanElo = (g) => {
  const elos = [g.whiteElo, g.blackElo].filter((e) => e != null);
  return elos.length ? elos.reduce((a, b) => a + b, 0) / elos.length : 0;
};

/// The top and the recent games of the position: each move's (three of each) put together, the
/// best rated (the latest) first, as lichess lists them under its explorer.
function gameLists(moves) {
  const top = moves.flatMap((m) => m.top ?? []).sort((a, b) => meanElo(b) - meanElo(a) || b.id - a.id);
  const recent = moves.flatMap((m) => m.recent ?? []).sort((a, b) => (b.date ?? '').localeCompare(a.date ?? '') || b.id - a.id);
  const lists = [];
  for (const [title, games, name] of [['top games', top, 'top'], ['recent games', recent, 'recent']]) {
    if (!games.length) continue;
    const box = cell('div', undefined, 'game-list');
    box.dataset.list = name;
    box.append(cell('h3', title));
    const table = cell('table');
    table.append(...games.slice(0, LISTED).map(gameRow));
    box.append(table);
    lists.push(box);
  }
  return lists;
}

/// Where a game left the repertoire book given to `explore --repertoire` (`check`'s verdict):
/// "in the book", or "left at ply N (who)"; null without a book.
function repertoireText(r) {
  if (!r) return null;
  return r.who === 'none' ? 'in the book' : `left at ply ${r.ply} (${r.who})`;
}

/// A result as a person writes it: 1-0, ½-½, 0-1.
const resultText = (r) => (r === '1/2-1/2' ? '½-½' : r);

/// A player with the rating (`Name 2850`), on a line of the players' cell.
function playerLine(name, elo, side) {
  const line = cell('div', undefined, side);
  line.append(cell('span', name ?? '?', 'name'));
  if (elo != null) line.append(' ', cell('span', String(elo), 'elo'));
  return line;
}

/// A link to the game's site (lichess…), in a new tab: only for an http(s) address.
function siteLink(site) {
  if (!site || !/^https?:\/\//i.test(site)) return null;
  const a = cell('a', '↗', 'site');
  a.href = site;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  a.title = `open ${site}`;
  // The link opens the game there; the row's click (the replay) is not for it.
  a.addEventListener('click', (e) => e.stopPropagation());
  return a;
}

/// A listed game: the move it played here, the players, result, date, speed, a link; clicked, it
/// is replayed on the board.
function gameRow(g) {
  const row = cell('tr', undefined, 'game');
  row.dataset.id = g.id;
  row.dataset.uci = g.uci;
  row.title = `${g.white} – ${g.black}, ${g.result}: click to replay the game`;
  const site = cell('td', undefined, 'site');
  const link = siteLink(g.site);
  if (link) site.append(link);
  // White over Black in one cell, as lichess lists its games: narrow enough for a phone.
  const players = cell('td', undefined, 'players');
  players.append(playerLine(g.white, g.whiteElo, 'white'), playerLine(g.black, g.blackElo, 'black'));
  const rep = repertoireText(g.repertoire);
  if (rep) players.append(cell('span', rep, 'repertoire'));
  row.append(
    cell('td', g.san, 'san'),
    players,
    cell('td', resultText(g.result), 'result'),
    cell('td', g.date ?? '', 'date'),
    cell('td', g.speed + (g.rated === false ? ' casual' : ''), 'speed'),
    site,
  );
  row.addEventListener('mouseenter', () => hint(g.uci));
  row.addEventListener('mouseleave', () => board.setAutoShapes([]));
  row.addEventListener('click', () => replay(g.id));
  return row;
}

// ---- A game replayed ----
//
// A game picked from the lists takes the board's line over: its moves from its start, the board
// at the position it was picked at (`ply`). The controls, keys and the line step through it; the
// panels follow the board as ever. A move the game did not play (on the board or from a panel)
// goes on exploring from there; "back" returns to the line the game was picked from. The replay
// is not kept in the address (see writeAddress).

/// Replays game `id`, from /api/game, at the position on the board.
async function replay(id) {
  clearError();
  let game;
  try {
    game = await askApi(`game?id=${encodeURIComponent(id)}&${hereQuery()}`);
  } catch (e) {
    showError(`cannot read game ${id}: ${e.message}`);
    return;
  }
  // Another game picked during a replay: "back" still returns to the line before the first.
  const saved = state.replay?.saved ?? { startFen: state.startFen, positions: state.positions, moves: state.moves, ply: state.ply };
  const error = startFrom(game.start, game.moves.map((m) => m.uci));
  if (error) {
    showError(`game ${id} cannot be replayed: ${error}`);
    return;
  }
  state.ply = game.ply ?? 0;
  state.replay = { game, saved };
  show();
  // On a phone the lists are under the board: the board is brought back into view.
  const top = $('board-wrap').getBoundingClientRect().top;
  if (top < 0 || top > innerHeight / 2) $('left').scrollIntoView({ block: 'start' });
}

/// Back to the line the replayed game was picked from.
function leaveReplay() {
  if (!state.replay) return;
  Object.assign(state, state.replay.saved);
  state.replay = null;
  clearError();
  show();
}

/// The game's line becomes the explored one, at the position on the board.
function exploreFromHere() {
  state.replay = null;
  show();
}

/// The replay's box over the line: the game, where the board is in it, the ways out.
function drawReplay() {
  const box = $('replay');
  document.body.classList.toggle('replaying', !!state.replay);
  box.hidden = !state.replay;
  if (!state.replay) return box.replaceChildren();
  const g = state.replay.game;
  const who = cell('div', undefined, 'who');
  const elo = (e) => (e == null ? '' : ` (${e})`);
  who.append(cell('span', `${g.white}${elo(g.whiteElo)}`, 'name'), ' – ', cell('span', `${g.black}${elo(g.blackElo)}`, 'name'),
    ' ', cell('span', resultText(g.result), 'result'));
  const details = [g.date, g.speed, g.rated == null ? null : g.rated ? 'rated' : 'casual', g.timeControl, g.event,
    repertoireText(g.repertoire)].filter(Boolean);
  const meta = cell('div', details.join(' · '), 'meta');
  const link = siteLink(g.site);
  if (link) meta.append(' ', link);
  const where = cell('div', `replaying: ply ${state.ply} of ${state.moves.length}`, 'where');
  const explore = cell('button', 'explore from here');
  explore.id = 'replay-explore';
  explore.title = 'keep this line and go on exploring';
  explore.addEventListener('click', exploreFromHere);
  const leave = cell('button', '✕ back');
  leave.id = 'replay-leave';
  leave.title = 'back to the position the game was picked at (Esc)';
  leave.addEventListener('click', leaveReplay);
  const buttons = cell('div', undefined, 'buttons');
  buttons.append(explore, leave);
  box.replaceChildren(who, meta, where, buttons);
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

// ---- Practice ----
//
// `polybook explore REP.bin --practice white|black`: a line starts at the server's start position;
// at each position the page asks /api/practice/state whose move it is. The opponent's book move
// (chosen by the server: due positions first, then the least practised, then by weight) is played
// after a short pause; at the user's move the board takes a move, which the server grades
// (POST /api/practice/answer). A move the book does not list is a mistake: the board takes it back,
// the book's moves are shown (click one to play it), and the user may retry (not graded again) or
// play the book's move. Where the book has no move for the side to move, the line is finished.
// `document.body.dataset.practice` says the phase: loading, opponent, user, answering, mistake, end.

/// The practice's state: the side, the phase, whether the next answer is a retry (ungraded), the
/// book's moves after a mistake, and the line's count of mistakes.
function setUpPractice(color) {
  state.practice = { color, phase: 'loading', retry: false, book: [], mistakes: 0, request: 0, lines: 0 };
  state.orientation = color;
  document.body.classList.add('practising');
  $('practice').hidden = false;
  $('practice-side').textContent = color;
  $('practice-retry').addEventListener('click', practiceRetry);
  $('practice-book-move').addEventListener('click', () => practiceBookMove(state.practice.book[0]));
  $('practice-next').addEventListener('click', newLine);
}

/// Starts a new line from the server's start position.
function newLine() {
  const p = state.practice;
  startFrom(state.serverStart);
  Object.assign(p, { retry: false, book: [], mistakes: 0 });
  p.lines++;
  clearError();
  show();
}

function setPhase(phase) {
  state.practice.phase = phase;
  document.body.dataset.practice = phase;
  $('practice-retry').hidden = phase !== 'mistake';
  $('practice-book-move').hidden = phase !== 'mistake';
  $('practice-book').hidden = phase !== 'mistake';
  $('practice-next').hidden = phase !== 'end';
}

const pause = (ms) => new Promise((done) => setTimeout(done, ms));

/// The board takes the user's move, or none.
function allowMove(allowed) {
  const pos = here();
  // (chessground turned its side to move when it took the move: it is set back too.)
  board.set({ turnColor: pos.turn, movable: { color: allowed ? state.practice.color : undefined, dests: chessgroundDests(pos) } });
}

/// Asks the server what comes at the board's position, and does it.
async function practiceStep() {
  const p = state.practice;
  const number = ++p.request;
  setPhase('loading');
  document.body.dataset.state = 'loading';
  let answer;
  try {
    answer = await askApi(`practice/state?${hereQuery()}`);
  } catch (e) {
    if (number === p.request) showError(`cannot read the practice: ${e.message}`);
    return;
  }
  if (number !== p.request) return;
  drawPracticeCounts(answer);
  document.body.dataset.state = 'ready';
  document.body.dataset.shown = $('fen').value;
  if (!performance.getEntriesByName('explore-usable').length) performance.mark('explore-usable');
  if (answer.turn === 'opponent') {
    setPhase('opponent');
    $('practice-status').textContent = `the book plays ${answer.move.san}`;
    await pause(250);
    if (number !== p.request) return;
    if (!play(moveOfUci(answer.move.uci))) showError(`the book's move ${answer.move.uci} is not legal here`);
    show();
  } else if (answer.turn === 'user') {
    setPhase('user');
    $('practice-status').textContent = p.retry ? 'try again: your move' : 'your move';
    drawCard(answer.card);
    allowMove(true);
  } else {
    setPhase('end');
    const moves = state.moves.length;
    $('practice-status').textContent = `line finished: ${moves} moves, ${p.mistakes ? `${p.mistakes} mistake${p.mistakes > 1 ? 's' : ''}` : 'no mistake'}`;
    $('practice-card').textContent = '';
    $('practice-next').focus();
  }
}

/// The repertoire's counts: the user's positions, due today (new ones included), never answered.
function drawPracticeCounts(answer) {
  const r = answer.repertoire;
  $('practice-counts').textContent = `${count(r.positions)} positions to know · ${count(r.due)} due today (${count(r.new)} new)`;
  $('practice-counts').dataset.due = r.due;
  $('practice-counts').dataset.new = r.new;
  $('practice-counts').dataset.positions = r.positions;
}

/// The position's SM-2 card, or "new".
function drawCard(card) {
  $('practice-card').textContent = card
    ? `answered ${card.reviews}× (${card.lapses} wrong) · due ${card.due} · every ${card.interval} day${card.interval === 1 ? '' : 's'} · ease ${card.ease}`
    : 'a new position';
}

/// The user's move `move` (a chessops move) sent to the server: a book move is played and the line
/// goes on; another is taken back and the book's moves are shown.
async function practiceAnswer(move) {
  const p = state.practice;
  const pos = here();
  if (p.phase !== 'user') return show();
  if (!move || !pos.isLegal(move)) {
    showError('not a legal move here');
    return show();
  }
  clearError();
  const uci = standardUci(pos, move);
  const san = makeSanAndPlay(pos.clone(), move);
  setPhase('answering');
  allowMove(false);
  const body = {
    fen: state.startFen,
    moves: state.moves.slice(0, state.ply).map((m) => m.uci).join(' '),
    move: uci,
    retry: p.retry,
  };
  let answer;
  try {
    const reply = await fetch('/api/practice/answer', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    answer = await reply.json().catch(() => ({ error: `${reply.status} ${reply.statusText}` }));
    if (!reply.ok) throw new Error(answer.error ?? `${reply.status} ${reply.statusText}`);
  } catch (e) {
    showError(`the answer was not taken: ${e.message}`);
    return show();
  }
  if (answer.right) {
    p.retry = false;
    play(move);
    return show();
  }
  p.mistakes += p.retry ? 0 : 1;
  p.retry = true;
  p.book = answer.book;
  // The board takes the move back.
  const last = state.moves[state.ply - 1];
  board.set({ fen: makeFen(pos.toSetup()), turnColor: pos.turn, lastMove: last ? [last.from, last.to] : undefined });
  setPhase('mistake');
  $('practice-status').textContent = `${san} is not in the book. The book plays:`;
  drawCard(answer.card);
  drawPracticeBook(answer.book);
}

/// The book's moves after a mistake: each a button that plays it, and an arrow on the board.
function drawPracticeBook(moves) {
  const list = $('practice-book');
  list.replaceChildren();
  for (const m of moves) {
    const button = document.createElement('button');
    button.className = 'book-move';
    button.dataset.uci = m.uci;
    button.textContent = m.san;
    button.title = `weight ${m.weight}: play it`;
    button.addEventListener('click', () => practiceBookMove(m));
    list.append(button);
  }
  board.setAutoShapes(moves.map((m) => ({ orig: m.uci.slice(0, 2), dest: m.uci.slice(2, 4), brush: 'green' })));
}

/// After a mistake: the user tries again (the answer is checked, not graded again).
function practiceRetry() {
  board.setAutoShapes([]);
  setPhase('user');
  $('practice-status').textContent = 'try again: your move';
  allowMove(true);
}

/// After a mistake: the book's move `m` is played, and the line goes on.
function practiceBookMove(m) {
  if (!m) return;
  state.practice.retry = false;
  if (!play(moveOfUci(m.uci))) showError(`the book's move ${m.uci} is not legal here`);
  show();
}

// ---- Controls ----

function go(ply) {
  // A line being practised is played forward only.
  if (state.practice) return;
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
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement) return;
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
    Escape: leaveReplay,
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
  if (state.practice || location.hash === state.addressShown) return;
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
    state.books = config.books ?? [];
    state.tally = config.tally;
    state.serverStart = config.start;
    if (config.games) setUpGames(config.games);
    if (config.practice) {
      setUpPractice(config.practice);
      newLine();
      return;
    }
    const error = readAddress();
    if (error) showError(error);
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
  }
  show();
})();

// For scripts and tests: the line as PGN.
window.explore = { pgn, state };
