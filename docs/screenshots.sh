#!/usr/bin/env bash
# docs/screenshots.sh OUT_DIR: the window as a class sees it, for docs/window.md and docs/labs.md.
# Six short runs made with gpulab-cli (MNIST needed; two flagged ⚠: one trained beside a busy
# loop on every core, one cancelled by a signal midway), and a class of seven hand-ins graded with
# a roster of eight (real `lab run`s of cnn-on-gpu with --quick, one a copy of another's). Then at
# 1024x768, 1280x720 and 1920x1080, each on an Xvfb screen of its own with a window manager
# (openbox): the window maximized with the six runs ticked (Live and Compare), the same in
# presenter mode (--presenter), a lab open on the Labs tab, and the class board over the window
# (--class-folder); at 1280x720 also a learner's runs opened in Compare from the board with a
# double-click. Needs xvfb, openbox, xdotool and imagemagick (import).
#
#   docs/screenshots.sh OUT_DIR [--data-dir DIR]
#
# Environment: GPULAB_BUILD_DIR (default build/).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPULAB_BUILD_DIR:-$REPO/build}"
out="${1:?usage: docs/screenshots.sh OUT_DIR [--data-dir DIR]}"
shift
data_args=()
[[ ${1:-} == --data-dir ]] && data_args=(--data-dir "$2")
cli="$BUILD/app/gpulab-cli" gui="$BUILD/app/gpulab"
for tool in Xvfb openbox xdotool import; do
  command -v "$tool" >/dev/null || { printf 'screenshots: %s is not installed\n' "$tool" >&2; exit 2; }
done
mkdir -p "$out"
work="$(mktemp -d)"
cleanup() {
  [[ -n ${app:-} ]] && kill "$app" 2>/dev/null
  [[ -n ${wm:-} ]] && kill "$wm" 2>/dev/null
  [[ -n ${xvfb:-} ]] && kill "$xvfb" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
runs="$work/runs"
export XDG_CONFIG_HOME="$work/config"

printf 'screenshots: six runs into %s\n' "$runs"
train() { "$cli" train --quiet "${data_args[@]+"${data_args[@]}"}" "$@" >/dev/null; }
train --model lenet5 --batch 64 --steps 120 --threads 1 --out "$runs/a"
train --model lenet5 --batch 64 --steps 120 --threads 2 --out "$runs/b"
# Flagged: trained beside a busy loop on every core (measured under outside load).
busy=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  busy+=($!)
done
train --model lenet5 --batch 128 --steps 80 --threads 2 --out "$runs/c"
kill "${busy[@]}"
wait "${busy[@]}" 2>/dev/null || true
train --model lenet5 --batch 64 --steps 120 --threads 2 --replicas 2 --out "$runs/d"
train --model mlp --batch 64 --steps 200 --threads 2 --out "$runs/e"
# Flagged: cancelled by a signal midway.
"$cli" train --quiet "${data_args[@]+"${data_args[@]}"}" --model lenet5 --batch 32 --steps 100000 \
  --threads 1 --out "$runs/f" >/dev/null &
trainer=$!
sleep 4
kill -INT "$trainer"
wait "$trainer" || true

printf 'screenshots: a class of seven hand-ins and a roster of eight in %s\n' "$work/class"
class="$work/class"
hand_in() {  # hand_in LAB LEARNER [--quick]: a real lab run, handed in as the course platform keeps it
  local lab=$1 learner=$2
  shift 2
  "$cli" lab run "$lab" --quiet "${data_args[@]+"${data_args[@]}"}" --learner "$learner" "$@" \
    --out "$class/$learner" >/dev/null
}
for learner in "Ada Lovelace" "Alan Turing" "Grace Hopper" "Katherine Johnson" "Zoë Ñandú" \
  "李 小龍"; do
  hand_in cnn-on-gpu "$learner" --quick
done
cp -r "$class/Alan Turing" "$class/Mallory Moe"  # a copy, runs and all, under another folder
printf 'id,name,email\n' >"$work/roster.csv"
id=1000
for learner in "Ada Lovelace" "Alan Turing" "Grace Hopper" "Katherine Johnson" "Zoë Ñandú" \
  "李 小龍" "Mallory Moe" "Edsger Dijkstra"; do
  printf '%s,%s,%s\n' "$id" "$learner" "learner$id@example.org" >>"$work/roster.csv"
  id=$((id + 1))
done
"$cli" lab grade "$class" --roster "$work/roster.csv" --out "$work/graded" >/dev/null || true

display=99
shoot() {  # shoot NAME: the whole screen
  sleep 2
  DISPLAY=":$display" import -window root "$out/$1.png"
  printf 'screenshots: %s\n' "$out/$1.png"
}
start_window() {  # start_window SIZE ARGS...: a fresh X screen, window manager and window
  local size=$1
  shift
  display=$((display + 1))
  Xvfb ":$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  sleep 1
  DISPLAY=":$display" openbox >/dev/null 2>&1 &
  wm=$!
  sleep 1
  DISPLAY=":$display" "$gui" --runs-dir "$runs" "${data_args[@]+"${data_args[@]}"}" "$@" \
    >"$work/window.log" 2>&1 &
  app=$!
  for _ in $(seq 50); do
    DISPLAY=":$display" xdotool search --name '^gpulab' >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 2
  # Maximized, as a class would see it.
  DISPLAY=":$display" xdotool search --onlyvisible --name '^gpulab' windowactivate --sync \
    key --clearmodifiers super+Up >/dev/null 2>&1 || true
  local id
  id="$(DISPLAY=":$display" xdotool search --onlyvisible --name '^gpulab' | head -1)"
  DISPLAY=":$display" xdotool windowsize "$id" 100% 100% windowmove "$id" 0 0
}
stop_window() {
  kill "$app" "$wm" "$xvfb" 2>/dev/null || true
  wait "$app" "$wm" "$xvfb" 2>/dev/null || true
  app="" wm="" xvfb=""
}

for size in 1024x768 1280x720 1920x1080; do
  start_window "$size" --show-recent 6
  shoot "window-$size-live"
  stop_window
  start_window "$size" --show-recent 6 --tab compare
  shoot "window-$size-compare"
  stop_window
  start_window "$size" --show-recent 6 --tab compare --presenter
  shoot "window-$size-presenter-compare"
  stop_window
  start_window "$size" --show-recent 6 --presenter
  shoot "window-$size-presenter-live"
  stop_window
  start_window "$size" --show-recent 6 --lab "$REPO/resources/labs/cnn-on-gpu.md"
  shoot "lab-$size"
  stop_window
  start_window "$size" --show-recent 6 --class-folder "$work/graded"
  shoot "classboard-roster-$size"
  if [[ $size == 1280x720 ]]; then
    # Ada's row (the first) double-clicked: her runs in Compare, the board still above it.
    board="$(DISPLAY=":$display" xdotool search --onlyvisible --name '^Class:' | head -1)"
    eval "$(DISPLAY=":$display" xdotool getwindowgeometry --shell "$board")"
    DISPLAY=":$display" xdotool mousemove $((X + 120)) $((Y + 57)) click --repeat 2 --delay 80 1
    shoot "classboard-compare-$size"
  fi
  stop_window
done
