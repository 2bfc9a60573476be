#!/bin/sh
# Prints the public API, one function name a line: every rlx_* name that the
# preprocessed header (comments gone) declares as a function, i.e. followed by
# "(". Function-pointer typedefs read "(*rlx_x)(" and are not matched. The
# Makefile exports exactly these from librlx.a / librlx.so; the suite checks it.
set -eu
${CC:-cc} -E -P "$1" | grep -oE '\brlx_[A-Za-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//' | sort -u
