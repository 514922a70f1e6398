#!/usr/bin/env bash
# The test command: installs what a fresh Debian machine lacks for the tests (the reference tools
# polyglot, stockfish, glaurung and python-chess, the compression tools, tmux, Chromium with its
# driver and selenium for the browser test of `explore`; DuckDB, pyspark and a Java runtime for the
# tallies), then runs the whole suite.
# Arguments are passed to `cargo test` (e.g. `./test.sh --test it -- build::`). `./test.sh --fast`
# leaves out the tests that need Apache Spark (a Java runtime) or Chromium, and the run of every
# README and guide command: the fast tier for
# development; CI runs everything.
set -euo pipefail
cd "$(dirname "$0")"

fast=()
args=()
for a in "$@"; do
  if [ "$a" = --fast ]; then
    fast=(--skip spark:: --skip explore::the_page_works_in_a_real_browser --skip docs::every_command)
  else
    args+=("$a")
  fi
done
set -- "${args[@]+"${args[@]}"}"

need_apt=()
[ -x /usr/games/polyglot ] || need_apt+=(polyglot)
[ -x /usr/games/stockfish ] || need_apt+=(stockfish)
[ -x /usr/games/glaurung ] || need_apt+=(glaurung)
command -v xz >/dev/null || need_apt+=(xz-utils)
command -v zstd >/dev/null || need_apt+=(zstd)
command -v bzip2 >/dev/null || need_apt+=(bzip2)
command -v gzip >/dev/null || need_apt+=(gzip)
command -v tmux >/dev/null || need_apt+=(tmux)
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
[ -x /usr/bin/chromium ] || need_apt+=(chromium fonts-liberation)  # the font: text in the screenshots
[ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
command -v java >/dev/null || need_apt+=(default-jre-headless)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test.sh: installing ${need_apt[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    echo "test.sh: missing ${need_apt[*]}: run 'apt-get install -y ${need_apt[*]}' as root" >&2; exit 1
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
if ! python3 -c 'import chess' 2>/dev/null; then
  echo "test.sh: installing python-chess" >&2
  pip install -q chess 2>/dev/null || pip install -q --break-system-packages chess || {
    echo "test.sh: python-chess missing: run 'pip install chess'" >&2; exit 1; }
fi
if ! python3 -c 'import selenium' 2>/dev/null; then
  echo "test.sh: installing selenium" >&2
  pip install -q selenium 2>/dev/null || pip install -q --break-system-packages selenium || {
    echo "test.sh: selenium missing: run 'pip install selenium'" >&2; exit 1; }
fi
if ! python3 -c 'import duckdb' 2>/dev/null; then
  # DuckDB reads the Parquet tallies in tests/tally.rs (one wheel, no other dependency).
  echo "test.sh: installing duckdb" >&2
  pip install -q duckdb 2>/dev/null || pip install -q --break-system-packages duckdb || {
    echo "test.sh: duckdb missing: run 'pip install duckdb'" >&2; exit 1; }
fi
if ! python3 -c 'import pyspark' 2>/dev/null; then
  # Apache Spark runs spark/build_book.py in tests/spark.rs (local[2], on the Java runtime above).
  echo "test.sh: installing pyspark" >&2
  pip install -q pyspark 2>/dev/null || pip install -q --break-system-packages pyspark || {
    echo "test.sh: pyspark missing: run 'pip install pyspark'" >&2; exit 1; }
fi

if [ ${#fast[@]} -gt 0 ]; then
  case " $* " in
    *" -- "*) cargo test --release --no-fail-fast "$@" "${fast[@]}" ;;
    *) cargo test --release --no-fail-fast "$@" -- "${fast[@]}" ;;
  esac
else
  cargo test --release --no-fail-fast "$@"
fi
