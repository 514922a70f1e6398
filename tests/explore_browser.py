# The page of `polybook explore` in a real browser (tests/browser.py: headless Debian Chromium, its
# helpers). Run by tests/it/explore.rs, after tests/browser.py's text:
#
#   python3 -c "$(cat tests/browser.py tests/explore_browser.py)" URL SHOTS POLYBOOK TALLY BOOK...
#
# URL is a running `polybook explore BOOK... --tally TALLY`; SHOTS the folder for the screenshots;
# POLYBOOK the binary, whose `probe --json` the page's moves (and `probe TALLY --json` its games) are
# compared with, as are python-chess's `chess.polyglot` entries and the PGN the page copies. Prints `usable_ms N` (the page's
# Performance API mark "explore-usable": board and book moves shown) and `ok` at the end.
import json
import math
import os
import subprocess
import sys
import time

import chess
import chess.pgn
import chess.polyglot
import io

LABEL = "explore page"
url, polybook, tally, books = sys.argv[1], sys.argv[3], sys.argv[4], sys.argv[5:]
start(sys.argv[2], "1200,900")


def settled():
    """Waits until the page has drawn the book moves of the position on its board."""
    wait(lambda: js("return document.body.dataset.state") == "ready"
         and js("return document.body.dataset.shown === document.getElementById('fen').value")
         and js("return document.querySelectorAll('#books .book').length") == len(books),
         "the book moves")


def page_fen():
    return driver.find_element(By.ID, "fen").get_attribute("value")


def page_moves():
    """For each book panel: its rows as (uci, san, weight, learn, share shown)."""
    return js("""
        return [...document.querySelectorAll('#books .book')].map(panel => ({
          book: panel.dataset.book,
          rows: [...panel.querySelectorAll('tr.entry')].map(r => [
            r.dataset.uci, r.querySelector('.san').textContent,
            Number(r.querySelector('.weight').textContent),
            r.querySelector('.learn').textContent,
            r.querySelector('.share span').textContent]),
          illegal: panel.querySelectorAll('.illegal li').length,
        }));""")


def probe(fen):
    """`polybook probe --json` for each book, and python-chess's entries for the same position."""
    out = subprocess.run([polybook, "probe", *books, "--fen", fen, "--json"], check=True,
                         capture_output=True, text=True).stdout
    expected = [json.loads(line) for line in out.splitlines()]
    if len(books) == 1:
        expected[0]["book"] = books[0]
    board = chess.Board(fen)
    for book, answer in zip(books, expected):
        with chess.polyglot.open_reader(book) as reader:
            entries = [(e.move.uci(), e.weight, e.learn) for e in reader.find_all(board)]
        mine = [(e["uci"], e["weight"], e["learn"]) for e in answer["entries"]]
        # python-chess writes castling as the king's two-square step too (e1g1).
        assert mine == entries, f"{book} at {fen}: polybook {mine} python-chess {entries}"
    return expected


def learn_text(learn):
    """A raw learn field as the page shows it, decoded here from PolyGlot's BookLearn layout (games in
    the high 16 bits, the sum of results 0/1/2 in the low 16): `12g 58%`, or `-` without games."""
    games, total = learn >> 16, learn & 0xFFFF
    return "-" if games == 0 else f"{games}g {math.floor(100 * total / (2 * games) + 0.5)}%"


def page_tally():
    """The tally's rows: (uci, san, games, share, the result bar's title)."""
    return js("""
        return [...document.querySelectorAll('#tally tr.move')].map(r => [
          r.dataset.uci, r.querySelector('.san').textContent, r.querySelector('.games').textContent,
          r.querySelector('.share').textContent, r.querySelector('.wdl').title]);""")


def check_tally(fen, what):
    """The tally's panel shows `probe TALLY --json`'s moves, results turned to white / draw / black."""
    out = subprocess.run([polybook, "probe", tally, "--fen", fen, "--json"], check=True,
                         capture_output=True, text=True).stdout
    stats = json.loads(out)
    white = chess.Board(fen).turn == chess.WHITE
    want = []
    for m in stats["moves"]:
        w, b = (m["wins"], m["losses"]) if white else (m["losses"], m["wins"])
        want.append([m["uci"], m["san"], f"{m['games']:,}", f"{m['share'] * 100:.1f}%",
                     f"white wins {w:,}, draws {m['draws']:,}, black wins {b:,}"])
    shown = page_tally()
    if shown != want:
        fail(f"{what}: the tally panel shows {shown}, probe --json says {want}")
    return shown


def check_moves(fen, what):
    check_tally(fen, what)
    shown = page_moves()
    expected = probe(fen)
    want = [{"book": e["book"],
             "rows": [[m["uci"], m["san"], m["weight"], learn_text(m["learn"]), f"{m['share'] * 100:.1f}%"]
                      for m in e["entries"]],
             "illegal": len(e["illegal"])} for e in expected]
    if shown != want:
        fail(f"{what}: the page shows {shown}, probe --json says {want}")
    return shown


# Opening names, read from lichess's table in assets/openings/ by python-chess: a position's EPD →
# "ECO Name"; a line is named by its last named position (its moves played back until one is).
OPENINGS = {}
# (cargo runs the tests in the repository's root.)
TABLE = os.path.join(os.environ.get("CARGO_MANIFEST_DIR", os.getcwd()), "assets", "openings")
for volume in "abcde":
    with open(os.path.join(TABLE, f"{volume}.tsv")) as f:
        for row in list(f)[1:]:
            eco, name, moves = row.rstrip("\n").split("\t")
            b = chess.Board()
            for token in moves.split():
                if not token[0].isdigit():
                    b.push_san(token)
            OPENINGS[b.epd()] = f"{eco} {name}"


def line_name(board):
    board = board.copy()
    while board.epd() not in OPENINGS:
        if not board.move_stack:
            return ""
        board.pop()
    return OPENINGS[board.epd()]


def check_opening(board, what):
    """The header names the line's opening, and each move of the first book the line with it."""
    shown = js("const o = document.getElementById('opening'); return o.hidden ? '' : o.textContent")
    if shown != line_name(board):
        fail(f"{what}: the header names {shown!r}, python-chess {line_name(board)!r}")
    rows = driver.find_elements(By.CSS_SELECTOR, "#books .book:first-child tr.entry")
    for row in rows:
        after = board.copy()
        after.push_uci(row.get_attribute("data-uci"))
        if (row.get_attribute("data-opening") or "") != line_name(after):
            fail(f"{what}: {row.get_attribute('data-uci')} names {row.get_attribute('data-opening')!r}, "
                 f"python-chess {line_name(after)!r}")
    return shown


def line_text():
    return driver.find_element(By.ID, "line").text


def error_text():
    box = driver.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def key(k):
    ActionChains(driver).send_keys(k).perform()
    settled()


def paste(text):
    box = driver.find_element(By.ID, "paste-text")
    box.clear()
    box.send_keys(text + Keys.ENTER)
    # The page has taken the paste when it empties the box (or shows an error): a FEN is checked
    # by the server first, which may take longer than a moment on a loaded machine.
    wait(lambda: box.get_attribute("value") == "" or error_text(), "the paste to be taken")
    settled()


def click_square(square, orientation="white"):
    """Clicks the middle of a square of the board (a1 bottom left when white is at the bottom)."""
    board = driver.find_element(By.CSS_SELECTOR, "cg-board")
    size = board.size["width"] / 8
    file, rank = ord(square[0]) - ord("a"), int(square[1]) - 1
    if orientation == "black":
        file, rank = 7 - file, 7 - rank
    x = (file + 0.5) * size - board.size["width"] / 2
    y = (7 - rank + 0.5) * size - board.size["height"] / 2
    ActionChains(driver).move_to_element_with_offset(board, int(x), int(y)).click().perform()
    # chessground tells the page of a move a moment later (a timeout): let it.
    time.sleep(0.05)


# 1. The start position: the page shows what probe --json says, and when it became usable.
driver.get(url)
settled()
usable = js("const m = performance.getEntriesByName('explore-usable'); return m.length ? m[0].startTime : null")
if usable is None:
    fail("the page never marked itself usable")
start = chess.STARTING_FEN
if page_fen() != start:
    fail(f"the start FEN is {page_fen()}")
first = check_moves(start, "start position")
if not first[0]["rows"]:
    fail("no book moves at the start")
# Tall enough to show every book's panel, the illegal entries of the last one included.
driver.set_window_size(1200, 1400)
time.sleep(0.2)
shot("1-start")
driver.set_window_size(1200, 900)
time.sleep(0.2)

# 2. Hovering a book move draws it on the board; clicking it plays it.
row = driver.find_element(By.CSS_SELECTOR, '#books .book tr.entry[data-uci="e2e4"]')
ActionChains(driver).move_to_element(row).perform()
wait(lambda: js("return document.querySelectorAll('cg-container svg.cg-shapes g').length") > 0,
     "the hover arrow")
row.click()
settled()
board = chess.Board()
board.push_uci("e2e4")
if page_fen() != board.fen() or line_text() != "1. e4":
    fail(f"after clicking e4: FEN {page_fen()}, line {line_text()!r}")
check_moves(board.fen(), "after 1. e4")
check_opening(board, "after 1. e4")
shot("2-after-e4")

# 3. A move played on the board by clicking its squares: 1... c5.
click_square("c7")
click_square("c5")
settled()
board.push_uci("c7c5")
if page_fen() != board.fen() or line_text() != "1. e4 c5":
    fail(f"after c7-c5 on the board: FEN {page_fen()}, line {line_text()!r}")
check_moves(board.fen(), "after 1. e4 c5")
if check_opening(board, "after 1. e4 c5") != "B20 Sicilian Defense":
    fail("1. e4 c5 is not named the Sicilian Defense")
# The browser's back and forward buttons step through the positions shown.
driver.back()
wait(lambda: page_fen() == chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").fen(),
     "the position before c5 after the back button")
settled()
check_moves(page_fen(), "back in the browser's history")
driver.forward()
wait(lambda: page_fen() == board.fen(), "the position after c5 after the forward button")
settled()
if line_text() != "1. e4 c5":
    fail(f"forward in the browser's history: line {line_text()!r}")
# A move of the second book hovered.
second = driver.find_elements(By.CSS_SELECTOR, "#books .book")[min(1, len(books) - 1)]
ActionChains(driver).move_to_element(second.find_element(By.CSS_SELECTOR, "tr.entry")).perform()
wait(lambda: js("return document.querySelectorAll('cg-container svg.cg-shapes g').length") > 0,
     "the hover arrow")
shot("3-hover")

# 4. Back and forward with the keyboard, flip with f.
key(Keys.ARROW_LEFT)
if page_fen() != chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").fen():
    fail(f"back: FEN {page_fen()}")
key(Keys.ARROW_LEFT)
if page_fen() != start:
    fail(f"back to the start: FEN {page_fen()}")
check_moves(start, "back at the start")
key(Keys.ARROW_RIGHT)
key(Keys.ARROW_RIGHT)
if page_fen() != board.fen() or line_text() != "1. e4 c5":
    fail(f"forward: FEN {page_fen()}, line {line_text()!r}")
key("f")
if not js("return document.querySelector('.cg-wrap').classList.contains('orientation-black')"):
    fail("f did not flip the board")
shot("4-flipped")
# On the flipped board, Nf3 by its squares.
click_square("g1", "black")
click_square("f3", "black")
settled()
board.push_uci("g1f3")
if page_fen() != board.fen():
    fail(f"after g1-f3 on the flipped board: FEN {page_fen()}")
check_opening(board, "after 2. Nf3")
key("f")
if js("return document.querySelector('.cg-wrap').classList.contains('orientation-black')"):
    fail("f did not flip the board back")

# 5. A pasted FEN (the Ruy Lopez), then a pasted move list.
ruy = "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
paste(ruy)
if page_fen() != ruy or error_text():
    fail(f"pasted FEN: FEN {page_fen()}, error {error_text()!r}")
check_moves(ruy, "the pasted FEN")
if check_opening(chess.Board(ruy), "the pasted FEN") != "C60 Ruy Lopez":
    fail("the Ruy Lopez's position is not named by itself")
shot("5-pasted-fen")
paste("1. d4 Nf6 2. c4 e6 {a comment} 3. Nc3 *")
game = chess.pgn.read_game(io.StringIO("1. d4 Nf6 2. c4 e6 3. Nc3 *"))
if page_fen() != game.end().board().fen() or line_text() != "1. d4 Nf6 2. c4 e6 3. Nc3":
    fail(f"pasted moves: FEN {page_fen()}, line {line_text()!r}")
check_moves(page_fen(), "the pasted moves")
check_opening(game.end().board(), "the pasted moves")
# The line as PGN, read back by python-chess.
copied = chess.pgn.read_game(io.StringIO(js("return window.explore.pgn()")))
if [m.uci() for m in copied.mainline_moves()] != [m.uci() for m in game.mainline_moves()]:
    fail(f"the PGN of the line is {js('return window.explore.pgn()')!r}")
shot("6-pasted-moves")

# 6. A bad FEN and an illegal move list: an error in the page, and the page goes on working.
paste("rnbqkbnr/pppppppp/8/8/8/8 w KQkq - 0 1")
if "invalid FEN" not in error_text():
    fail(f"a bad FEN showed {error_text()!r}")
if line_text() != "1. d4 Nf6 2. c4 e6 3. Nc3":
    fail(f"a bad FEN changed the line to {line_text()!r}")
shot("7-bad-fen")
paste("1. e4 e5 2. Ke3")
if "move 3 'Ke3' is not legal" not in error_text():
    fail(f"an illegal move showed {error_text()!r}")
js("document.activeElement.blur()")  # the keys go to the page, not to the text box
key(Keys.HOME)
if error_text():
    fail(f"the error stayed: {error_text()!r}")
driver.find_element(By.CSS_SELECTOR, '#books .book tr.entry[data-uci="d2d4"]').click()
settled()
if not line_text().startswith("1. d4") or error_text():
    fail(f"after the errors, clicking d4 gave line {line_text()!r}")

# 7. The tally: a move clicked in its panel is played.
key(Keys.HOME)
shown = check_tally(chess.STARTING_FEN, "the tally at the start")
if len(shown) < 5:
    fail(f"the tally shows only {shown} at the start")
driver.find_element(By.CSS_SELECTOR, '#tally tr.move[data-uci="e2e4"]').click()
settled()
if not line_text().startswith("1. e4") or page_fen() != chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").fen():
    fail(f"clicking e4 in the tally gave line {line_text()!r}")
check_moves(page_fen(), "after e4 from the tally")
# The picture of the README (docs/explore.png): the games and the books after 1. e4, a move of the
# tally hovered.
driver.set_window_size(1200, 1000)
js("document.getElementById('paste-text').value = ''")
js("window.scrollTo(0, 0)")
ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, '#tally tr.move[data-uci="c7c5"]')).perform()
js("window.scrollTo(0, 0)")
wait(lambda: js("return document.querySelectorAll('cg-container svg.cg-shapes g').length") > 0,
     "the hover arrow")
shot("8-tally")
driver.set_window_size(1200, 900)

def open_at(hash):
    """Loads the page afresh at the address URL + hash."""
    driver.get("about:blank")
    driver.get(url + hash)
    settled()


# 8. The address keeps the line: a link with #moves=…&ply=… opens on that position, a reload too.
open_at("#moves=e2e4+c7c5+g1f3&ply=2")
board = chess.Board()
for m in ["e2e4", "c7c5"]:
    board.push_uci(m)
if page_fen() != board.fen() or line_text() != "1. e4 c5 2. Nf3":
    fail(f"the address #moves=e2e4+c7c5+g1f3&ply=2: FEN {page_fen()}, line {line_text()!r}")
check_moves(board.fen(), "from the address")
key(Keys.ARROW_RIGHT)
if "ply=" in js("return location.hash") or "g1f3" not in js("return location.hash"):
    fail(f"the address after going forward is {js('return location.hash')!r}")
driver.refresh()
settled()
board.push_uci("g1f3")
if page_fen() != board.fen() or line_text() != "1. e4 c5 2. Nf3":
    fail(f"after a reload: FEN {page_fen()}, line {line_text()!r}")
# A line that cannot be played: an error, and the page starts where the server does.
open_at("#moves=e2e4+e2e4")
if "cannot be played" not in error_text() or page_fen() != chess.STARTING_FEN:
    fail(f"a bad address: error {error_text()!r}, FEN {page_fen()}")

# 9. Promotion: the pawn waits for its piece (a knight by the key n; a rook by a click); Esc and
# the cancel button take the move back.
promo = "8/P6k/8/8/8/8/8/K7 w - - 0 1"
open_at("#fen=" + promo.replace(" ", "+").replace("/", "%2F"))
if page_fen() != promo:
    fail(f"the address with a FEN shows {page_fen()}")


def picker_shown():
    return driver.find_element(By.ID, "promotion").is_displayed()


click_square("a7")
click_square("a8")
wait(picker_shown, "the promotion box")
shot("9-promotion")
key("n")
if page_fen() != "N7/7k/8/8/8/8/8/K7 b - - 0 1" or line_text() != "1. a8=N" or picker_shown():
    fail(f"promoting to a knight: FEN {page_fen()}, line {line_text()!r}")
key(Keys.HOME)
click_square("a7")
click_square("a8")
wait(picker_shown, "the promotion box")
key(Keys.ESCAPE)
if page_fen() != promo or picker_shown():
    fail(f"Esc on the promotion box: FEN {page_fen()}")
click_square("a7")
click_square("a8")
wait(picker_shown, "the promotion box")
driver.find_element(By.CSS_SELECTOR, '#promotion button[data-role="rook"]').click()
settled()
if page_fen() != "R7/7k/8/8/8/8/8/K7 b - - 0 1" or line_text() != "1. a8=R":
    fail(f"promoting to a rook: FEN {page_fen()}, line {line_text()!r}")
open_at("")
key(Keys.HOME)

# 10. Phone width: one column, nothing wider than the screen.
driver.set_window_size(390, 844)
time.sleep(0.3)
overflow = js("return document.documentElement.scrollWidth - window.innerWidth")
board_box = driver.find_element(By.ID, "board").rect
books_box = driver.find_element(By.ID, "right").rect
if overflow > 0 or books_box["y"] < board_box["y"] + board_box["height"] or board_box["width"] < 300:
    fail(f"phone width: overflow {overflow}, board {board_box}, books {books_box}")
shot("10-phone")

# 11. Nothing came from anywhere but the server, and no script error.
check_clean(url)

driver.quit()
print(f"usable_ms {usable:.1f}")
print("ok")
