# Sourced by scripts/demo and scripts/test: steps that say how long they have run, and a long
# build that shows it is working instead of looking hung.
#
#   step "what starts"                  prints "== what starts [12 s]" (seconds since the start)
#   with_progress LABEL LOG CMD ARG...  runs CMD with its output in LOG; meanwhile, every 2 s,
#                                       one line rewritten in place on a terminal (a line every
#                                       30 s in a log): seconds so far, crates compiled, the
#                                       current one. On failure, LOG is printed in full.

# pip's banner about its own version and its warning about running as root say nothing about
# incastlab.
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

step() { echo "== $* [${SECONDS} s]"; }

_progress_ticker() {
  local label=$1 log=$2 t0 last=-30 now n what msg
  t0=$(date +%s)
  while sleep 2; do
    now=$(($(date +%s) - t0))
    n=$(grep -c '^ *Compiling ' "$log" 2>/dev/null) || n=0
    # The latest thing pip or cargo said it does.
    what=$(grep -E '^ *(Collecting|Downloading crates|Compiling|Building wheel|Finished|Installing collected)' \
      "$log" 2>/dev/null | tail -n 1 | sed -E 's/^ +//; s/ \(.*//' | cut -c1-50)
    msg="$label: ${now} s, ${n} crates so far${what:+; $what}"
    if [ -t 1 ]; then
      printf '\r\033[K   %s' "$msg"
    elif ((now - last >= 30)); then
      echo "   $msg"
      last=$now
    fi
  done
}

with_progress() {
  local label=$1 log=$2 rc=0 t0 ticker
  shift 2
  mkdir -p "$(dirname "$log")"
  : >"$log"
  t0=$SECONDS
  _progress_ticker "$label" "$log" &
  ticker=$!
  "$@" >"$log" 2>&1 || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ -t 1 ]; then printf '\r\033[K'; fi
  if [ "$rc" != 0 ]; then
    echo "$label failed (exit $rc): $* said:" >&2
    cat "$log" >&2
    return "$rc"
  fi
  echo "   $label: done in $((SECONDS - t0)) s ($(grep -c '^ *Compiling ' "$log") crates compiled)"
}
