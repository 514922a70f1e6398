# The games explorer's page (`polybook explore GAMES.pgn --player NAME`) in a real browser
# (tests/browser.py: headless Debian Chromium, its helpers). Run by tests/it/explore.rs, after
# tests/browser.py's text:
#
#   python3 -c "$(cat tests/browser.py tests/explore_games_browser.py)" URL SHOTS
#
# URL is a running `polybook explore GAMES --player NAME --repertoire BOOK`; SHOTS the folder for the screenshots. The
# games panel's moves are compared with `/api/games`'s answer, fetched here for the same position
# and filters; each filter widget is set and the page must then ask (and show) exactly that filter;
# a top game is replayed (its position checked with python-chess); the top games and the replay
# say where the game left the repertoire book as the API says; the filters survive a reload
# and back/forward; filters the server refuses show its message in the page's error box; phone
# width does not overflow. Prints `ok` at the end.
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import chess
import chess.polyglot

LABEL = "games page"
WAIT_SECONDS = 15.0
url = sys.argv[1]
start(sys.argv[2], "1200,1000")


def api(path, params):
    """GET /api/PATH?PARAMS (spaces as %20), its JSON answer."""
    query = urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
    with urllib.request.urlopen(f"{url.rstrip('/')}/api/{path}?{query}", timeout=30) as reply:
        return json.load(reply)


def page_fen():
    return driver.find_element(By.ID, "fen").get_attribute("value")


def line_board(moves):
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    return board


# ---- Reading the page ----

def games_query():
    """The games panel's drawn query, split: (fen, moves, the filters as a dict)."""
    query = js("return document.getElementById('games').dataset.query") or ""
    params = {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
    return params.pop("fen", ""), params.pop("moves", ""), params


def settled(moves, filters):
    """Waits until the page shows the line `moves` and its games with exactly `filters` (the page's
    own query to /api/games, as it drew it): this is how the test knows a widget was read."""
    board = line_board(moves)

    def ready():
        if js("return document.body.dataset.state") != "ready" or page_fen() != board.fen():
            return False
        if js("return document.getElementById('games').dataset.state") != "ready":
            return False
        fen, line, asked = games_query()
        return asked == filters and line_board(line.split()).fen() == board.fen() and fen == chess.STARTING_FEN

    wait(ready, f"the games after {moves} with the filters {filters} (shown: {games_query()})")


def page_rows():
    """The games panel's move rows: uci, san, games, results bar's title, score, perf., opp., last."""
    return js("""
        return [...document.querySelectorAll('#games tr.move')].map(r => [
          r.dataset.uci, r.querySelector('.san').textContent, r.querySelector('.games').textContent,
          r.querySelector('.wdl').title, r.querySelector('.score').textContent,
          r.querySelector('.perf').textContent, r.querySelector('.rating').textContent,
          r.querySelector('.last').textContent, r.dataset.opening || '']);""")


def wanted_rows(answer):
    dash = lambda v: "–" if v is None else str(v)
    return [[m["uci"], m["san"], f"{m['games']:,}",
             f"white wins {m['white']:,}, draws {m['draws']:,}, black wins {m['black']:,}",
             # (JavaScript's toFixed and Python's round may part on a half: compared apart.)
             "score", dash(m["performance"]), dash(m["rating"]), dash(m["last"]),
             f"{m['eco']} {m['opening']}" if m.get("eco") else ""] for m in answer["moves"]]


def check_games(moves, filters, what):
    """The panel shows /api/games's answer for the line and the filters; that answer."""
    settled(moves, filters)
    answer = api("games", {"fen": chess.STARTING_FEN, "moves": " ".join(moves), **filters})
    shown = page_rows()
    want = wanted_rows(answer)
    for row, m in zip(shown, answer["moves"]):
        score = float(row[4].rstrip("%"))
        if abs(score - 100 * m["score"]) > 0.5 + 1e-9:
            fail(f"{what}: {m['san']}'s score shows {row[4]}, the API says {m['score']}")
        row[4] = "score"
    if shown != want:
        fail(f"{what}: the page shows {shown}, /api/games says {want}")
    total = js("return document.querySelector('#games tr.sum .games')?.textContent ?? ''")
    if answer["moves"] and total != f"{answer['games']:,}":
        fail(f"{what}: the total shows {total!r}, the API {answer['games']}")
    caption = driver.find_element(By.ID, "games-caption").text
    if not caption.startswith(f"{answer['games']:,} of "):
        fail(f"{what}: the caption says {caption!r}, the API {answer['games']} games")
    return answer


def error_text():
    box = driver.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def widgets():
    """The filter widgets' values, as a person sees them."""
    return js("""
        const f = document.getElementById('filters');
        const on = (n) => [...f.querySelectorAll(`input[name="${n}"]:checked`)].map(i => i.value);
        return {color: on('color'), speed: on('speed'), mode: on('mode'), result: on('result'),
                min: f.querySelector('#rating-min').value, max: f.querySelector('#rating-max').value,
                since: f.querySelector('#since').value, until: f.querySelector('#until').value,
                opponent: f.querySelector('#opponent').value};""")


def click_choice(name, value):
    """Clicks a filter's radio button or check box, by its label (the radios are drawn as buttons)."""
    box = driver.find_element(By.CSS_SELECTOR, f'#filters input[name="{name}"][value="{value}"]')
    box.find_element(By.XPATH, "..").click()


def type_into(element_id, text):
    box = driver.find_element(By.ID, element_id)
    box.clear()
    box.send_keys(text)


def set_month(element_id, value):
    """A month box set as a date picker would (the keys a month box takes depend on the locale)."""
    js("""const box = document.getElementById(arguments[0]); box.value = arguments[1];
          box.dispatchEvent(new Event('input', {bubbles: true}));
          box.dispatchEvent(new Event('change', {bubbles: true}));""", element_id, value)


def reset():
    driver.find_element(By.ID, "filters-reset").click()


ALL_SPEEDS = ["ultrabullet", "bullet", "blitz", "rapid", "classical", "correspondence", "unknown"]

# 1. The start: /api/books names the games; the panel shows /api/games's moves.
driver.get(url)
config = api("books", {})
games = config.get("games")
if not games or not games.get("player"):
    fail(f"/api/books's games is {games!r}")
start = check_games([], {}, "the start")
if len(start["moves"]) < 3:
    fail(f"only {len(start['moves'])} moves at the start")
title = driver.find_element(By.ID, "games-title").text
# (Players are matched regardless of case: the title writes them as the games do.)
if not all(p.lower() in title.lower() for p in games["player"]):
    fail(f"the panel's title {title!r} does not name {games['player']}")
shot("1-start")

# 2. A move row clicked is played; its name is the header's.
driver.find_element(By.CSS_SELECTOR, '#games tr.move[data-uci="e2e4"]').click()
after_e4 = check_games(["e2e4"], {}, "after 1. e4")
header = js("const o = document.getElementById('opening'); return o.hidden ? '' : o.textContent")
if after_e4.get("eco") and header != f"{after_e4['eco']} {after_e4['opening']}":
    fail(f"after 1. e4 the header names {header!r}, /api/games {after_e4['eco']} {after_e4['opening']}")

# 3. Each filter alone, set by its widget: the page asks for it and shows what the API answers.
line = ["e2e4"]
# An opponent the data has: part of the name of a top game's opponent.
top = after_e4["moves"][0]["top"][0]
player = {p.lower() for p in games["player"]}
opponent = (top["black"] if top["white"].lower() in player else top["white"])[:5].lower()
steps = [
    ("colour white", lambda: click_choice("color", "white"), {"color": "white"}),
    ("colour black", lambda: click_choice("color", "black"), {"color": "black"}),
    ("no bullet", lambda: click_choice("speed", "bullet"),
     {"speed": ",".join(s for s in ALL_SPEEDS if s != "bullet")}),
    ("rated", lambda: click_choice("mode", "rated"), {"mode": "rated"}),
    ("casual", lambda: click_choice("mode", "casual"), {"mode": "casual"}),
    ("rating from 2900", lambda: type_into("rating-min", "2900"), {"rating": "2900-"}),
    ("rating up to 3000", lambda: type_into("rating-max", "3000"), {"rating": "-3000"}),
    ("since 2021-06", lambda: set_month("since", "2021-06"), {"since": "2021-06"}),
    ("until 2020-12", lambda: set_month("until", "2020-12"), {"until": "2020-12"}),
    ("no draws", lambda: click_choice("result", "draw"), {"result": "win,loss"}),
    (f"opponent {opponent!r}", lambda: type_into("opponent", opponent), {"opponent": opponent}),
]
changed = 0
for what, act, filters in steps:
    act()
    answer = check_games(line, filters, what)
    changed += answer["games"] != after_e4["games"]
    reset()
    check_games(line, {}, f"reset after {what}")
if changed < len(steps) - 2:
    fail(f"only {changed} of {len(steps)} filters changed the number of games")
# A rating range, typed at once (the page waits for the typing to end), and the last box of a
# choice cannot be unticked (no speed at all would be no games, which the API cannot be asked).
type_into("rating-min", "2800")
type_into("rating-max", "3100")
check_games(line, {"rating": "2800-3100"}, "rating 2800-3100")
reset()
for s in ALL_SPEEDS[1:]:
    click_choice("speed", s)
check_games(line, {"speed": "ultrabullet"}, "ultrabullet alone")
click_choice("speed", "ultrabullet")
time.sleep(0.3)
if widgets()["speed"] != ["ultrabullet"]:
    fail(f"the last speed could be unticked: {widgets()['speed']}")
reset()
check_games(line, {}, "reset")
# Filters the server refuses (a rating range upside down; months in an address, the wrong way
# round): its 400's message in the page's error box, no moves, and the page goes on.
for what, act, filters in [
    ("rating 3000-2000", lambda: (type_into("rating-min", "3000"), type_into("rating-max", "2000")),
     {"rating": "3000-2000"}),
    ("since after until", lambda: (driver.get("about:blank"), driver.get(url + "#moves=e2e4&since=2022-01&until=2021-01")),
     {"since": "2022-01", "until": "2021-01"}),
]:
    act()
    settled(line, filters)
    try:
        api("games", {"fen": chess.STARTING_FEN, "moves": "e2e4", **filters})
        fail(f"{what}: /api/games took it")
    except urllib.error.HTTPError as e:
        refused = json.load(e)["error"]
    if refused not in error_text() or page_rows():
        fail(f"{what}: the error box says {error_text()!r}, the API {refused!r}; rows {page_rows()}")
    reset()
    check_games(line, {}, f"reset after {what}")
    if error_text():
        fail(f"{what}: the error stayed after a reset: {error_text()!r}")

# 4. Several filters, kept in the address: a reload shows the same counts and widgets, and the
# browser's back button steps back through the filters.
click_choice("color", "black")
check_games(line, {"color": "black"}, "black")
click_choice("speed", "ultrabullet")
set_month("since", "2019-01")
click_choice("result", "loss")
combined = {"color": "black", "speed": ",".join(ALL_SPEEDS[1:]), "since": "2019-01", "result": "win,draw"}
answer = check_games(line, combined, "black, no ultrabullet, since 2019, no losses")
rows, boxes, address = page_rows(), widgets(), js("return location.hash")
for name, value in combined.items():
    if urllib.parse.parse_qs(address[1:]).get(name) != [value]:
        fail(f"the address {address!r} does not hold {name}={value}")
driver.refresh()
check_games(line, combined, "after a reload")
if page_rows() != rows or widgets() != boxes:
    fail(f"after a reload: rows {page_rows()} widgets {widgets()}, before {rows} {boxes}")
driver.back()
check_games(line, {k: combined[k] for k in ["color", "speed", "since"]}, "back once")
driver.forward()
check_games(line, combined, "forward again")
if widgets() != boxes:
    fail(f"forward: widgets {widgets()}, not {boxes}")
# An address with a filter the page does not know: left at its default, the page goes on.
driver.get("about:blank")
driver.get(url + "#moves=e2e4&color=purple&mode=rated")
check_games(line, {"mode": "rated"}, "an address with a bad colour")

# 5. The top and recent games: a top game clicked is replayed at the position, forward and back
# step through it, and "back" returns to exploring.
reset()
check_games(line, {}, "reset for the replay")
listed = js("""return [...document.querySelectorAll('#games .game-list[data-list="top"] tr.game')].map(r => [
    r.dataset.id, r.querySelector('.players').textContent, r.querySelector('.result').textContent,
    r.querySelector('a.site')?.href ?? null, r.querySelector('a.site')?.target ?? null,
    r.querySelector('.players .repertoire')?.textContent ?? null]);""")
if not listed:
    fail("no top game listed after 1. e4")
tops = {str(g["id"]): g for m in after_e4["moves"] for g in m["top"]}


def left_text(rep):
    """Where a game left the repertoire book (`--repertoire`), as the page writes it."""
    return "in the book" if rep["who"] == "none" else f"left at ply {rep['ply']} ({rep['who']})"


for gid, players, result, href, target, left in listed:
    g = tops.get(gid)
    if g is None:
        fail(f"top game {gid} is not one of the API's top games")
    if left != left_text(g["repertoire"]):
        fail(f"top game {gid} shows {left!r} for the repertoire, the API {g['repertoire']}")
    if g["white"] not in players or g["black"] not in players:
        fail(f"top game {gid} shows {players!r}, the API {g['white']} – {g['black']}")
    if g["site"] and g["site"].startswith("http") and (href != g["site"] or target != "_blank"):
        fail(f"top game {gid}'s link is {href!r} ({target}), the API's site {g['site']}")
shot("2-after-e4")
gid = listed[0][0]
driver.find_element(By.CSS_SELECTOR, f'#games .game-list[data-list="top"] tr.game[data-id="{gid}"]').click()
wait(lambda: driver.find_element(By.ID, "replay").is_displayed(), "the replay")
game = api("game", {"id": gid, "fen": chess.STARTING_FEN, "moves": "e2e4"})
board = chess.Board(game["start"])
target = line_board(line)
reached = None
for i, m in enumerate([None] + game["moves"]):
    if m:
        board.push_uci(m["uci"])
    if reached is None and chess.polyglot.zobrist_hash(board) == chess.polyglot.zobrist_hash(target):
        reached = i
if game["ply"] != reached:
    fail(f"game {gid} reaches 1. e4 at ply {reached} (python-chess), /api/game says {game['ply']}")
meta = driver.find_element(By.CSS_SELECTOR, "#replay .meta").text
if left_text(game["repertoire"]) not in meta:
    fail(f"the replay's header {meta!r} does not say where the game left the repertoire ({game['repertoire']})")


def game_board(ply):
    b = chess.Board(game["start"])
    for m in game["moves"][:ply]:
        b.push_uci(m["uci"])
    return b


wait(lambda: page_fen() == game_board(game["ply"]).fen(), f"the replay at ply {game['ply']}")
shown_line = driver.find_element(By.ID, "line").text.split()
sans = [t for t in shown_line if not t[0].isdigit()]
if sans != [m["san"] for m in game["moves"]]:
    fail(f"the replay's line is {shown_line}, the game's moves {[m['san'] for m in game['moves']]}")
ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
wait(lambda: page_fen() == game_board(game["ply"] + 1).fen(), "the replay a ply forward")
driver.find_element(By.ID, "forward").click()
wait(lambda: page_fen() == game_board(game["ply"] + 2).fen(), "the replay two plies forward")
ActionChains(driver).send_keys(Keys.END).perform()
wait(lambda: page_fen() == game_board(len(game["moves"])).fen(), "the replay at its end")
ActionChains(driver).send_keys(Keys.HOME).perform()
wait(lambda: page_fen() == chess.Board(game["start"]).fen(), "the replay at its start")
for _ in range(game["ply"] + 1):
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
wait(lambda: page_fen() == game_board(game["ply"] + 1).fen(), "the replay stepped to after e4")
if js("return location.hash") != "#moves=e2e4":
    fail(f"the replay wrote the address {js('return location.hash')!r}")
js("window.scrollTo(0, 0)")
shot("3-replay")
driver.find_element(By.ID, "replay-leave").click()
check_games(line, {}, "back from the replay")
if driver.find_element(By.ID, "replay").is_displayed() or js("return location.hash") != "#moves=e2e4":
    fail(f"leaving the replay: the address is {js('return location.hash')!r}")
# Explore from here: the game's line is the explored one (in the address) from the replayed ply.
driver.find_element(By.CSS_SELECTOR, f'#games .game-list[data-list="top"] tr.game[data-id="{gid}"]').click()
wait(lambda: driver.find_element(By.ID, "replay").is_displayed(), "the replay again")
ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
wait(lambda: page_fen() == game_board(game["ply"] + 1).fen(), "the replay a ply forward again")
driver.find_element(By.ID, "replay-explore").click()
explored = [m["uci"] for m in game["moves"][:game["ply"] + 1]]
check_games(explored, {}, "explore from the replay")
if driver.find_element(By.ID, "replay").is_displayed():
    fail("the replay box stayed after exploring from it")

# 6. The pictures of the documentation: desktop after 1. e4 with a filter, a move hovered; phone.
driver.get(url + "#moves=e2e4&speed=blitz%2Crapid%2Cclassical")
check_games(line, {"speed": "blitz,rapid,classical"}, "the desktop picture")
js("window.scrollTo(0, 0)")
ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, "#games tr.move")).perform()
wait(lambda: js("return document.querySelectorAll('cg-container svg.cg-shapes g').length") > 0, "the hover arrow")
js("window.scrollTo(0, 0)")
shot("4-desktop")

# 7. Phone width: the panels under the board, the filter bar wrapped, nothing wider than the screen.
driver.set_window_size(390, 844)
time.sleep(0.3)
check_games(line, {"speed": "blitz,rapid,classical"}, "phone width")
overflow = js("return document.documentElement.scrollWidth - window.innerWidth")
board_box = driver.find_element(By.ID, "board").rect
games_box = driver.find_element(By.ID, "games").rect
if overflow > 0 or games_box["y"] < board_box["y"] + board_box["height"]:
    fail(f"phone width: overflow {overflow}, board {board_box}, games {games_box}")
js("document.getElementById('games').scrollIntoView()")
time.sleep(0.2)
shot("5-phone")
driver.find_element(By.CSS_SELECTOR, '#games .game-list tr.game').click()
wait(lambda: driver.find_element(By.ID, "replay").is_displayed(), "the replay at phone width")
if js("return document.documentElement.scrollWidth - window.innerWidth") > 0:
    fail("phone width: the replay overflows")
shot("6-phone-replay")

# 8. Nothing came from anywhere but the server, and no script error.
check_clean(url)

driver.quit()
print("ok")
