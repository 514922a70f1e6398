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
    fast=(--skip spark:: --skip explore::the_page_works_in_a_real_browser --skip explore::the_games_page_works_in_a_real_browser --skip docs::every_command)
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
bench/apt-install.sh test.sh "${need_apt[@]+"${need_apt[@]}"}"
# The Python packages: python-chess (the reference for books, moves and games), selenium (the
# browser test of `explore`), DuckDB (reads the Parquet tallies in tests/it/tally.rs, one wheel) and
# pyspark with pyarrow (runs spark/build_book.py in tests/it/spark.rs on local[2] and on a
# standalone cluster, on the Java runtime above; its map hands Arrow batches to Spark, which needs
# pandas too).
for package in chess selenium duckdb pyspark pyarrow pandas; do
  python3 -c "import $package" 2>/dev/null && continue
  echo "test.sh: installing $package" >&2
  pip install -q "$package" 2>/dev/null || pip install -q --break-system-packages "$package" || {
    echo "test.sh: $package missing: run 'pip install $package'" >&2; exit 1; }
done

if [ ${#fast[@]} -gt 0 ]; then
  case " $* " in
    *" -- "*) cargo test --release --no-fail-fast "$@" "${fast[@]}" ;;
    *) cargo test --release --no-fail-fast "$@" -- "${fast[@]}" ;;
  esac
else
  cargo test --release --no-fail-fast "$@"
fi
