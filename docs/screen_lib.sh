# shellcheck shell=bash disable=SC2154  # gui and work: set by the sourcing script
# Sourced by docs/screenshots.sh and docs/lab_screenshots.sh: one gpulab window at a time on an
# Xvfb screen of its own with a window manager (openbox), maximized as a class would see it.
# The sourcing script sets gui (the window's program) and work (a scratch folder, removed at the
# end), and may set window_args (put before each window's own arguments).

# need_screen_tools NAME: stop, saying which, when a tool the screens need is missing; NAME
# starts each line the screens print.
need_screen_tools() {
  local tool
  screen_name=$1
  for tool in Xvfb openbox xdotool import; do
    command -v "$tool" >/dev/null || { printf '%s: %s is not installed\n' "$1" "$tool" >&2; exit 2; }
  done
}

display=99
window_args=()
screen_cleanup() {
  [[ -n ${app:-} ]] && kill "$app" 2>/dev/null
  [[ -n ${wm:-} ]] && kill "$wm" 2>/dev/null
  [[ -n ${xvfb:-} ]] && kill "$xvfb" 2>/dev/null
  [[ -z ${work:-} ]] || rm -rf "$work"
}
trap screen_cleanup EXIT

shoot() {  # shoot FILE: the whole screen, once the window has settled
  sleep 2
  DISPLAY=":$display" import -window root "$1"
  printf '%s: %s\n' "$screen_name" "$1"
}

start_window() {  # start_window SIZE ARGS...: a fresh X screen, window manager and window
  local size=$1 id
  shift
  display=$((display + 1))
  while [[ -e /tmp/.X$display-lock ]]; do display=$((display + 1)); done  # a screen in use
  Xvfb ":$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  sleep 1
  DISPLAY=":$display" openbox >/dev/null 2>&1 &
  wm=$!
  sleep 1
  DISPLAY=":$display" "$gui" "${window_args[@]+"${window_args[@]}"}" "$@" >"$work/window.log" 2>&1 &
  app=$!
  for _ in $(seq 50); do
    DISPLAY=":$display" xdotool search --name '^gpulab' >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 2
  DISPLAY=":$display" xdotool search --onlyvisible --name '^gpulab' windowactivate --sync \
    key --clearmodifiers super+Up >/dev/null 2>&1 || true
  id="$(DISPLAY=":$display" xdotool search --onlyvisible --name '^gpulab' | head -1)"
  DISPLAY=":$display" xdotool windowsize "$id" 100% 100% windowmove "$id" 0 0
}

stop_window() {
  kill "$app" "$wm" "$xvfb" 2>/dev/null || true
  wait "$app" "$wm" "$xvfb" 2>/dev/null || true
  app="" wm="" xvfb=""
}
