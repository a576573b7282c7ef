#!/usr/bin/env bash
# tools/heartbeat.sh WHAT CMD [ARG ...]: run CMD; while it runs, print "setup: WHAT (N s)" every 5 s.
# Why (issue 54, item 3): `make setup`'s quiet steps (pip install -q: 204 s on a first set-up; apt-get -qq)
# printed nothing for minutes, and a user cannot tell a slow step from a hung one. CMD's own output and its
# exit status pass through unchanged; a step that ends within 5 s prints nothing extra.
set -u
what="$1"
shift
start=$(date +%s)
"$@" &
pid=$!
(
    while sleep 5; do
        echo "setup: $what ($(($(date +%s) - start)) s)"
    done
) &
beat=$!
trap 'kill "$pid" "$beat" 2>/dev/null' INT TERM
wait "$pid"
status=$?
kill "$beat" 2>/dev/null
wait "$beat" 2>/dev/null
exit "$status"
