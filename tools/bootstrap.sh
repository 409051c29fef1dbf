#!/usr/bin/env bash
# Creates the virtual environment with the project's Python and installs the pinned
# requirements. Finds the interpreter on PATH, then under pyenv; says what to do otherwise.
set -euo pipefail
version="$1"; venv="$2"
python=""
for candidate in "python$version" "$HOME/.pyenv/versions/$version"*/bin/python; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys' >/dev/null 2>&1; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ] && command -v pyenv >/dev/null 2>&1; then
  python=$(pyenv root)/versions/$(pyenv versions --bare | grep -E "^$version" | tail -1)/bin/python || true
fi
if [ -z "$python" ] || ! "$python" -c 'import sys' >/dev/null 2>&1; then
  echo "Python $version was not found. Install it (e.g. 'pyenv install $version') and retry." >&2
  exit 1
fi
echo "== creating $venv with $("$python" --version)"
"$python" -m venv "$venv"
# Some machines configure extra package locations that may not exist; pip warns per package.
quiet_pip() { "$venv/bin/python" -m pip "$@" 2> >(grep -v "is ignored: it is neither" >&2); }
quiet_pip install --quiet --upgrade pip
echo "== installing pinned requirements (first run takes about a minute)"
quiet_pip install --quiet --progress-bar off -r requirements-dev.txt
# The project itself, editable: its console scripts (psap-admin, psap-local, ...) land in
# $venv/bin and import the code in place, so no one sets PYTHONPATH.
echo "== installing the project's commands (psap-admin, psap-local, ...)"
# setuptools always prints an "Editable installation" note to stderr: shown only on failure.
notes=$(mktemp)
if ! "$venv/bin/python" -m pip install --quiet --no-deps --editable . 2>"$notes"; then
  cat "$notes" >&2; rm -f "$notes"; exit 1
fi
rm -f "$notes"
