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
# shellcheck source=docs/screen_lib.sh
source "$REPO/docs/screen_lib.sh"
need_screen_tools "lab screenshots"
[[ -x $gui ]] || { printf 'lab screenshots: %s is not built\n' "$gui" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
export XDG_CONFIG_HOME="$work/config"
w=${size%x*} h=${size#*x}

for lab in "${labs[@]}"; do
  file="$REPO/resources/labs/$lab.md"
  [[ -f $file ]] || { printf 'lab screenshots: no built-in lab %s\n' "$lab" >&2; exit 2; }
  mkdir -p "$work/runs-$lab"
  start_window "$size" --runs-dir "$work/runs-$lab" --lab "$file"
  shoot "$out/lab-$lab-$size.png"
  # The page is the right-hand pane below the list of labs: the wheel over it scrolls it.
  done_notches=0
  for n in "${notches[@]}"; do
    DISPLAY=":$display" xdotool mousemove $((w * 2 / 3)) $((h * 3 / 5)) \
      click --repeat $((n - done_notches)) --delay 60 5
    done_notches=$n
    shoot "$out/lab-$lab-$size-scrolled-$n.png"
  done
  stop_window
done
