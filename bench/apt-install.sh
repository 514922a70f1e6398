#!/usr/bin/env bash
# Installs the Debian packages named after WHO (the script asking, for its messages): with apt-get
# as root, through sudo otherwise, or says what to run and fails. Nothing to do without packages.
# Usage: bench/apt-install.sh WHO PACKAGE...     (test.sh and the bench scripts call it)
set -euo pipefail
who=$1; shift
[ $# -gt 0 ] || exit 0
echo "$who: installing $*" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
  echo "$who: missing $*: run 'apt-get install -y $*' as root" >&2; exit 1
fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
