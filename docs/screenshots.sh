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
# shellcheck source=docs/screen_lib.sh
source "$REPO/docs/screen_lib.sh"
need_screen_tools screenshots
mkdir -p "$out"
work="$(mktemp -d)"
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

window_args=(--runs-dir "$runs" "${data_args[@]+"${data_args[@]}"}")
for size in 1024x768 1280x720 1920x1080; do
  start_window "$size" --show-recent 6
  shoot "$out/window-$size-live.png"
  stop_window
  start_window "$size" --show-recent 6 --tab compare
  shoot "$out/window-$size-compare.png"
  stop_window
  start_window "$size" --show-recent 6 --tab compare --presenter
  shoot "$out/window-$size-presenter-compare.png"
  stop_window
  start_window "$size" --show-recent 6 --presenter
  shoot "$out/window-$size-presenter-live.png"
  stop_window
  start_window "$size" --show-recent 6 --lab "$REPO/resources/labs/cnn-on-gpu.md"
  shoot "$out/lab-$size.png"
  stop_window
  start_window "$size" --show-recent 6 --class-folder "$work/graded"
  shoot "$out/classboard-roster-$size.png"
  if [[ $size == 1280x720 ]]; then
    # Ada's row (the first) double-clicked: her runs in Compare, the board still above it.
    board="$(DISPLAY=":$display" xdotool search --onlyvisible --name '^Class:' | head -1)"
    eval "$(DISPLAY=":$display" xdotool getwindowgeometry --shell "$board")"
    DISPLAY=":$display" xdotool mousemove $((X + 120)) $((Y + 57)) click --repeat 2 --delay 80 1
    shoot "$out/classboard-compare-$size.png"
  fi
  stop_window
done
