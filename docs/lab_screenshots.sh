#!/usr/bin/env bash
# docs/lab_screenshots.sh OUT_DIR [LAB ...]: each lab's page as a learner without a GPU first sees
# it, at 1280x720 on an Xvfb screen with a window manager (openbox), the window maximized: the top
# of the page, then the page scrolled by the mouse wheel over it, 8 and 16 notches (its results
# table and charts, with the reference runs recorded on a GPU). The runs folder is empty, so what
# the tables show is what ships. LABs are the built-in labs' names (default: all seven). Needs
# xvfb, openbox, xdotool and imagemagick (import).
#
# Environment: GPULAB_BUILD_DIR (default build/), SIZE (default 1280x720), NOTCHES (default
# "8 16").
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPULAB_BUILD_DIR:-$REPO/build}"
out="${1:?usage: docs/lab_screenshots.sh OUT_DIR [LAB ...]}"
shift
labs=("$@")
((${#labs[@]})) || labs=(cnn-on-gpu feeding-the-gpu gpu-vs-cpu-matmul many-jobs-or-one
  mixed-precision single-vs-multi-gpu watching-the-hardware)
size="${SIZE:-1280x720}"
read -r -a notches <<<"${NOTCHES:-8 16}"
gui="$BUILD/app/gpulab"
for tool in Xvfb openbox xdotool import; do
  command -v "$tool" >/dev/null || { printf 'lab screenshots: %s is not installed\n' "$tool" >&2; exit 2; }
done
[[ -x $gui ]] || { printf 'lab screenshots: %s is not built\n' "$gui" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
display=120
cleanup() {
  [[ -n ${app:-} ]] && kill "$app" 2>/dev/null
  [[ -n ${wm:-} ]] && kill "$wm" 2>/dev/null
  [[ -n ${xvfb:-} ]] && kill "$xvfb" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_CONFIG_HOME="$work/config"
x() { DISPLAY=":$display" "$@"; }

for lab in "${labs[@]}"; do
  file="$REPO/resources/labs/$lab.md"
  [[ -f $file ]] || { printf 'lab screenshots: no built-in lab %s\n' "$lab" >&2; exit 2; }
  display=$((display + 1))
  while [[ -e /tmp/.X$display-lock ]]; do display=$((display + 1)); done  # a screen in use
  Xvfb ":$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  sleep 1
  DISPLAY=":$display" openbox >/dev/null 2>&1 &
  wm=$!
  sleep 1
  mkdir -p "$work/runs-$lab"
  DISPLAY=":$display" "$gui" --runs-dir "$work/runs-$lab" --lab "$file" >"$work/window.log" 2>&1 &
  app=$!
  for _ in $(seq 50); do
    x xdotool search --name '^gpulab' >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 2
  id="$(x xdotool search --onlyvisible --name '^gpulab' | head -1)"
  x xdotool windowactivate --sync "$id" key --clearmodifiers super+Up >/dev/null 2>&1 || true
  x xdotool windowsize "$id" 100% 100% windowmove "$id" 0 0
  sleep 2
  x import -window root "$out/lab-$lab-$size.png"
  printf 'lab screenshots: %s\n' "$out/lab-$lab-$size.png"
  # The page is the right-hand pane below the list of labs: the wheel over it scrolls it.
  w=${size%x*} h=${size#*x}
  done_notches=0
  for n in "${notches[@]}"; do
    x xdotool mousemove $((w * 2 / 3)) $((h * 3 / 5)) click --repeat $((n - done_notches)) \
      --delay 60 5
    done_notches=$n
    sleep 1
    x import -window root "$out/lab-$lab-$size-scrolled-$n.png"
    printf 'lab screenshots: %s\n' "$out/lab-$lab-$size-scrolled-$n.png"
  done
  kill "$app" "$wm" "$xvfb" 2>/dev/null || true
  wait "$app" "$wm" "$xvfb" 2>/dev/null || true
  app="" wm="" xvfb=""
done
