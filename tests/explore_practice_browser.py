# The practice page of `polybook explore REP.bin --practice white` in a real browser (tests/browser.py:
# headless Debian Chromium, its helpers). Run by tests/it/practice.rs, after tests/browser.py's text:
#
#   python3 -c "$(cat tests/browser.py tests/explore_practice_browser.py)" URL SHOTS PHASE PROGRESS
#
# URL is a running `polybook explore REP.bin --practice white` over the repertoire of
# tests/it/practice.rs (1. e4 e5 2. Nf3 Nc6 3. Bb5 and 1. e4 c5 2. Nf3 d6 3. d4: five positions where
# White must move); SHOTS the folder for the screenshots; PROGRESS the progress file. PHASE `first`:
# a mistake at the first move shows the book's move, a retry, a whole line played to its end, the
# next line goes to the reply not yet practised (the scheduling), a mistake answered with "play the
# book move", the progress file after each; a reload keeps the progress. PHASE `restarted` (after the
# server was stopped and started again): the progress read back from the file. Prints `ok` at the end.
import json

import chess

LABEL = "practice page"
url, phase, progress = sys.argv[1], sys.argv[3], sys.argv[4]
start(sys.argv[2], "1200,900")

# White's book moves, by position (python-chess's FEN).
LINES = [["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"], ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4"]]
MINE = {}
for line in LINES:
    board = chess.Board()
    for uci in line:
        if board.turn == chess.WHITE:
            MINE[board.fen()] = uci
        board.push_uci(uci)


def phase_is(*phases):
    return js("return document.body.dataset.practice") in phases


def wait_phase(*phases):
    wait(lambda: phase_is(*phases), f"the practice to reach {phases}")


def board_fen():
    return js("return document.getElementById('fen').value")


def move(uci):
    click_square(uci[:2])
    click_square(uci[2:4])


def status():
    return js("return document.getElementById('practice-status').textContent")


def counts():
    return js("const d = document.getElementById('practice-counts').dataset;"
              "return [Number(d.positions), Number(d.due), Number(d.new)]")


def cards():
    with open(progress) as f:
        saved = json.load(f)
    return {chess.Board(c["fen"]).fen(): (c["reviews"], c["lapses"], c["repetitions"], c["interval"]) for c in saved["positions"].values()}


def progress_kept(after):
    """Once the page asks for the user's move again `after` (a reload, a restart): the progress of
    the two lines played is still there, 5 positions, none due, the start answered twice with one
    wrong answer."""
    wait_phase("user")
    if counts() != [5, 0, 0]:
        fail(f"after {after} the page counts {counts()}")
    card = js("return document.getElementById('practice-card').textContent")
    if not card.startswith("answered 2× (1 wrong)"):
        fail(f"after {after} the start position's card says {card!r}")


def click_square(square):
    """Clicks the middle of a square of the board (White at the bottom)."""
    board = driver.find_element(By.CSS_SELECTOR, "cg-board")
    size = board.size["width"] / 8
    file, rank = ord(square[0]) - ord("a"), int(square[1]) - 1
    x = (file + 0.5) * size - board.size["width"] / 2
    y = (7 - rank + 0.5) * size - board.size["height"] / 2
    ActionChains(driver).move_to_element_with_offset(board, int(x), int(y)).click().perform()
    time.sleep(0.05)


def play_to_the_end(mistake_at=None):
    """Plays White's book moves until the line ends; returns the line's moves. At the position
    `mistake_at` (a FEN), a wrong move first, answered with "play the book move"."""
    while True:
        wait_phase("user", "end")
        if phase_is("end"):
            return js("return window.explore.state.moves.map(m => m.uci)")
        fen = chess.Board(board_fen()).fen()
        if fen not in MINE:
            fail(f"asked to move at {fen}, not a position of the repertoire")
        if fen == mistake_at:
            board = chess.Board(fen)
            wrong = next(m.uci() for m in board.legal_moves if m.uci() != MINE[fen] and not board.is_capture(m))
            move(wrong)
            wait_phase("mistake")
            shown = js("return [...document.querySelectorAll('#practice-book .book-move')].map(b => b.dataset.uci)")
            if shown != [MINE[fen]]:
                fail(f"after {wrong} the page shows the book moves {shown}, not {[MINE[fen]]}")
            if chess.Board(board_fen()).fen() != fen:
                fail("the wrong move was not taken back")
            shot("3-mistake-book-move")
            driver.find_element(By.ID, "practice-book-move").click()
            mistake_at = None
            wait(lambda: chess.Board(board_fen()).fen() != fen, "the book move played")
            continue
        move(MINE[fen])
        wait(lambda: chess.Board(board_fen()).fen() != fen or phase_is("mistake"), "the move taken")
        if phase_is("mistake"):
            fail(f"the book move {MINE[fen]} at {fen} was called a mistake: {status()}")


START = chess.Board().fen()

if phase == "first":
    driver.get(url)
    wait_phase("user")
    if js("return document.getElementById('books').offsetParent") is not None:
        fail("the book's moves are shown while practising")
    if counts() != [5, 5, 5]:
        fail(f"at the start the page counts {counts()}, not 5 positions, 5 due, 5 new")
    shot("1-start")

    # A mistake: d4 is not in the book; the book's e4 is shown; retry, then e4.
    move("d2d4")
    wait_phase("mistake")
    shown = js("return [...document.querySelectorAll('#practice-book .book-move')].map(b => [b.dataset.uci, b.textContent])")
    if shown != [["e2e4", "e4"]]:
        fail(f"after d4 the page shows {shown}, not the book's e4")
    if "d4 is not in the book" not in status():
        fail(f"the mistake is told as {status()!r}")
    if chess.Board(board_fen()).fen() != START:
        fail(f"the wrong move stays on the board: {board_fen()}")
    shot("2-mistake")
    if cards() != {START: (1, 1, 0, 1)}:
        fail(f"after the mistake the progress file holds {cards()}")
    driver.find_element(By.ID, "practice-retry").click()
    wait_phase("user")

    # The whole line, to its end.
    first = play_to_the_end()
    if first not in LINES:
        fail(f"the first line is {first}, not one of the book's")
    if "line finished" not in status() or "1 mistake" not in status():
        fail(f"the end of the line is told as {status()!r}")
    shot("4-line-finished")
    saved = cards()
    # The start: graded once (wrong; the retry is not graded); the line's two other positions: right.
    board, want = chess.Board(), {START: (1, 1, 0, 1)}
    for uci in first:
        board.push_uci(uci)
        if board.turn == chess.WHITE and board.fen() in MINE:
            want[board.fen()] = (1, 0, 1, 1)
    if saved != want:
        fail(f"after the first line the progress file holds {saved}, not {want}")
    if counts() != [5, 2, 2]:
        fail(f"after the first line the page counts {counts()}, not 5 positions, 2 due, 2 new")

    # The next line goes to the reply not practised yet (its positions are new: due), and a
    # mistake there is answered with the book's move.
    driver.find_element(By.ID, "practice-next").click()
    other = LINES[1] if first == LINES[0] else LINES[0]
    board = chess.Board()
    for uci in other[:2]:
        board.push_uci(uci)
    second = play_to_the_end(mistake_at=board.fen())
    if second != other:
        fail(f"the second line is {second}, not the one left to practise, {other}")
    if "1 mistake" not in status():
        fail(f"the second line's end is told as {status()!r}")
    # The start answered right this time (1 day again: the first right answer after a lapse).
    if len(cards()) != 5 or cards()[board.fen()] != (1, 1, 0, 1) or cards()[START] != (2, 1, 1, 1):
        fail(f"after the second line the progress file holds {cards()}")
    if counts() != [5, 0, 0]:
        fail(f"after the second line the page counts {counts()}, not 5 positions, none due")

    # A reload: a new line, the progress kept.
    driver.refresh()
    progress_kept("a reload")
    shot("5-reloaded")
    check_clean(url)
elif phase == "restarted":
    driver.get(url)
    progress_kept("a restart")
    # A move played after the restart: graded again (the second right answer in a row: 6 days).
    move("e2e4")
    wait(lambda: chess.Board(board_fen()).fen() != START, "e4 taken")
    wait(lambda: cards()[START][0] == 3, "the third answer at the start written")
    if cards()[START] != (3, 1, 2, 6):
        fail(f"after a restart and a right answer the start's card is {cards()[START]}")
    shot("6-restarted")
    check_clean(url)
else:
    fail(f"no phase {phase}")

print("ok")
