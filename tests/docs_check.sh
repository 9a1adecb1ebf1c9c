#!/usr/bin/env bash
# ctest's docs_check: README.md and docs/*.md against the tree and the built gpulab-cli.
#   docs_check.sh SOURCE_DIR GPULAB_CLI
# Fails naming file:line where a relative link reaches no file or no heading's anchor, where a
# code span or block shows a `gpulab-cli` command, subcommand or flag the program does not list
# in its --help, or where a scripts/ or bench/ path is not in the tree. Bash and awk only (CI's
# python3 is optional); one --help per command the pages show, run side by side.
set -uo pipefail
source_dir=$1
cli=$2
cd "$source_dir" || exit 1
[[ -x $cli ]] || { echo "docs_check: $cli is not an executable gpulab-cli (build it first)"; exit 1; }
export GPULAB_BLAS_AUTO=0 # --help needs no BLAS: skip the restart that picks its kernels
pages=(README.md docs/*.md)
fail=0
bad() { printf '%s\n' "$*"; fail=1; }

# Every page cut into records, tab-separated:
#   LINK file line target      a Markdown link or image outside code
#   CODE file line text        a code block's line, or an inline code span (joined if it wraps)
#   TEXT file line text        a line of prose with its code spans removed
split_pages() {
  awk -v OFS='\t' '
    FNR == 1 { fence = ""; open_ticks = 0; span = "" }
    {
      if (fence == "" && match($0, /^ *(```+|~~~+)/)) {
        fence = substr($0, RSTART, RLENGTH); sub(/^ */, "", fence); next
      }
      if (fence != "") {
        t = $0; sub(/^ */, "", t)
        if (index(t, fence) == 1 && t ~ /^(`|~)+ *$/) { fence = ""; next }
        print "CODE", FILENAME, FNR, $0; next
      }
      if ($0 ~ /^[ \t]*$/) { open_ticks = 0; span = ""; next }  # a paragraph ends any span
      line = $0; prose = ""; i = 1; n = length(line)
      if (open_ticks) span = span " "
      while (i <= n) {
        c = substr(line, i, 1)
        if (c == "`") {
          j = i; while (j <= n && substr(line, j, 1) == "`") j++
          ticks = j - i
          if (!open_ticks) { open_ticks = ticks; span = ""; span_line = FNR }
          else if (ticks == open_ticks) { print "CODE", FILENAME, span_line, span; open_ticks = 0 }
          else span = span substr(line, i, ticks)
          i = j; continue
        }
        if (open_ticks) span = span c; else prose = prose c
        i++
      }
      print "TEXT", FILENAME, FNR, prose
      rest = prose
      while (match(rest, /\]\([^) \t]+/)) {
        print "LINK", FILENAME, FNR, substr(rest, RSTART + 2, RLENGTH - 2)
        rest = substr(rest, RSTART + RLENGTH)
      }
    }' "$@"
}

# The anchors a Markdown file's headings make, one a line (GitHub's rule: lowercase, punctuation
# other than - and _ dropped, spaces to -, a repeated anchor numbered -1, -2, ...).
anchors_of() {
  awk '
    /^ *(```|~~~)/ { code = !code; next }
    code || !/^#+ / { next }
    {
      h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h); h = tolower(h)
      gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
      if (h in seen) { print h "-" seen[h]; seen[h]++ } else { print h; seen[h] = 1 }
    }' "$1"
}

records=$(split_pages "${pages[@]}")

# (a) links.
declare -A anchors
while IFS=$'\t' read -r kind file line target; do
  [[ $kind == LINK ]] || continue
  case $target in http://* | https://* | mailto:*) continue ;; esac
  path=${target%%#*}
  anchor=
  [[ $target == *#* ]] && anchor=${target#*#}
  if [[ -z $path ]]; then
    resolved=$file
  else
    resolved=$path
    [[ $file == */* ]] && resolved=${file%/*}/$path
  fi
  if [[ ! -e $resolved ]]; then
    bad "$file:$line: link to $target: $resolved does not exist; fix the path or restore the file"
    continue
  fi
  [[ -n $anchor ]] || continue
  if [[ $resolved != *.md ]]; then
    bad "$file:$line: link to $target: an anchor into a file that is not Markdown"
    continue
  fi
  [[ -v anchors[$resolved] ]] || anchors[$resolved]=$'\n'$(anchors_of "$resolved")$'\n'
  [[ ${anchors[$resolved]} == *$'\n'"$anchor"$'\n'* ]] ||
    bad "$file:$line: link to $target: no heading of $resolved makes the anchor #$anchor; link to a heading it has"
done <<<"$records"

# (b) scripts/ and bench/ paths, in code and prose alike ("./scripts/run" too).
while IFS=$'\t' read -r file line path; do
  [[ -e $path ]] || bad "$file:$line: $path is not in the tree; show the path that replaced it"
done < <(awk -F'\t' '$1 == "CODE" || $1 == "TEXT" {
    rest = " " $4
    while (match(rest, /(\.\/|[^A-Za-z0-9_.\/-])(scripts|bench)\/[A-Za-z0-9_.\/-]*/)) {
      path = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
      sub(/^(\.\/|.)/, "", path); sub(/[.,:;]+$/, "", path)
      print $2 "\t" $3 "\t" path
    }
  }' <<<"$records")

# (b) gpulab-cli commands and their flags, in code only. A command is the words after
# `gpulab-cli` that its --help lists as subcommands; flags are the --words up to a comment or a
# shell separator on the same line.
uses=$(awk -F'\t' '$1 == "CODE" && $4 ~ /gpulab-cli [a-z]/ {
    text = $4; sub(/ #.*$/, "", text); gsub(/[|;&()]/, "\n", text)
    m = split(text, parts, "\n")
    for (p = 1; p <= m; p++) {
      s = parts[p]
      if (!match(s, /(^|[^A-Za-z0-9_.-])gpulab-cli [a-z][a-z-]*( [a-z][a-z-]*)?/)) continue
      words = substr(s, RSTART, RLENGTH); sub(/^.*gpulab-cli /, "", words)
      flags = ""; rest = substr(s, RSTART + RLENGTH)
      while (match(rest, /--[a-z][a-z0-9-]*/)) {
        flags = flags " " substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
      }
      print $2 "\t" $3 "\t" words "\t" flags
    }
  }' <<<"$records")

# Commands from the program: its --help and each command group's, side by side. Flags from the
# manual pages (a .TP item's first --flag, by '.SS "gpulab-cli CMD SUB"' section), which
# test_man_pages holds flag for flag to every command's --help: reading them costs nothing,
# where a --help per command would cost half a second of start-up each (about 10 s in all).
help_dir=$(mktemp -d)
trap 'rm -rf "$help_dir"' EXIT
subcommands() { sed -n '/^Subcommands:/,$p' "$1" | awk 'NR > 1 && /^  [a-z]/ { print $1 }'; }
"$cli" --help >"$help_dir/top" 2>&1 &
top_pid=$!
groups=$(grep -lE '^\.SS "gpulab\\-cli [a-z-]+ [a-z-]+"' docs/man/gpulab-cli-*.1 |
  sed -E 's#^docs/man/gpulab-cli-(.*)\.1$#\1#')
for group in $groups; do "$cli" "$group" --help >"$help_dir/$group" 2>&1 & done
wait "$top_pid" || { echo "docs_check: $cli --help failed"; exit 1; }
wait
top=" $(subcommands "$help_dir/top" | tr '\n' ' ')"
declare -A is_group subs_of
for group in $groups; do
  [[ $top == *" $group "* ]] || continue
  is_group[$group]=1
  subs_of[$group]=" $(subcommands "$help_dir/$group" | tr '\n' ' ')"
done
declare -A documented
while IFS=$'\t' read -r command flag; do
  documented["$command $flag"]=1
done < <(awk '
  FNR == 1 { current = FILENAME; sub(/^.*\/gpulab-cli-?/, "", current); sub(/\.1$/, "", current) }
  { line = $0; gsub(/\\-/, "-", line) }
  match(line, /^\.SS "gpulab-cli [^"]*"$/) { current = substr(line, 17, RLENGTH - 17) }
  item && match(line, /--[A-Za-z0-9-]+/) { print current "\t" substr(line, RSTART, RLENGTH) }
  { item = (line == ".TP") }' docs/man/gpulab-cli*.1)

checked=0
while IFS=$'\t' read -r file line words flags; do
  [[ -n $file ]] || continue
  read -r command sub <<<"$words"
  ((checked++))
  if [[ $top != *" $command "* ]]; then
    bad "$file:$line: gpulab-cli $command: no such command; gpulab-cli --help lists:${top% }"
    continue
  fi
  if [[ -n ${is_group[$command]:-} ]]; then
    subs=${subs_of[$command]}
    if [[ -z $sub && -z $flags ]]; then continue; fi # `gpulab-cli lab` alone names the group
    if [[ -z $sub || $subs != *" $sub "* ]]; then
      bad "$file:$line: gpulab-cli $command ${sub:-(none)}: no such command; gpulab-cli $command --help lists:${subs% }"
      continue
    fi
    path="$command $sub"
  else
    path=$command
  fi
  for flag in $flags; do
    [[ $flag == --help || -n ${documented["$path $flag"]:-} ]] ||
      bad "$file:$line: gpulab-cli $path $flag: neither gpulab-cli $path --help nor its manual page lists $flag; show a flag they list"
  done
done <<<"$uses"

if ((fail)); then exit 1; fi
printf 'docs_check: %d pages, their links, paths and %d gpulab-cli command lines agree with the tree\n' \
  "${#pages[@]}" "$checked"
